package dev.apportion.allocation.internal.engine;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange.Cause;
import dev.apportion.allocation.AllocationListener;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.collections.Passes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.RandomAccess;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The allocation engine every built-in strategy runs on.
 *
 * <p><b>Design.</b> Writers are serialized by one lock. The state is dense primitive data
 * ({@link Slots}): each known target owns an int slot, found through an open-addressing table
 * keyed by its identity hash, so a call that re-sets an unchanged target set compares two numbers
 * a target, never strings or label maps. Each write finds what it changed once, as a value: a
 * {@code setTargets} call's {@link TargetSetChange} ({@link TargetIntake}: new, dropped,
 * relabeled, re-noded and recosted targets), a {@code setCollectors} call's {@link
 * CollectorSetChange} (added, removed, re-noded and reweighted collectors, and the departed
 * ones' targets, found through the slots' own record of what each member holds); the strategy's
 * {@link Placer} is handed only that, as slots. The slots' {@link Journal} records each touched
 * target's owner before the write; the {@link Publisher} turns exactly those targets into a new
 * immutable {@link Snapshot} that shares every untouched part with the previous one (and into
 * {@link Move}s, only when a listener is registered), and the engine publishes it with one
 * volatile write. The writer keeps everything it needs itself (the members by name, what each
 * holds) and never reads the published snapshot back. Readers only ever read that field: they
 * never block and never see a half-applied change.
 *
 * <p><b>Target cost and collector capacity.</b> A target's cost travels with it
 * ({@link Target#cost()}); the slots keep it in a dense array and each member's total up to date,
 * and a write that changed costs tells the placer ({@link Placer#costsChanged}) and republishes
 * only the per-collector totals. A collector's capacity travels with it; a change of capacity
 * alone is a collector change ({@link CollectorSetChange#reweighted()}). The optional
 * per-collector limit is the engine's, not the strategies': {@link CollectorLimits} runs after
 * every placement.
 *
 * <p><b>Cost.</b> {@code setTargets}: two comparisons of numbers per given target in the order
 * of the last call (else one table probe), one pass over the last call's input to find the
 * dropped ones, O(a log a) to order {@code a} added ones, plus the placer and the publisher's
 * cost for what changed; an unchanged re-set allocates nothing and publishes nothing.
 * {@code setCollectors}: O(c) for {@code c} collectors, O(o log o) for the {@code o} targets of
 * departed collectors, plus the placer and the publisher.
 */
public final class Engine implements Allocator {
  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);

  private final String strategy;
  private final Placer placer;
  /** {@link Placer#placementLabelsChanged} of the placer, made once. */
  private final BiPredicate<Target, Target> placementMoves;
  /** The placer when it places by partition, else null. */
  private final Partitioned partitioned;
  /** Shared with the placer, which reads target zones through it. */
  @GuardedBy("lock")
  private final NodeZones zones;
  private final Listeners listeners;
  private final double movedShareWarning;
  @GuardedBy("lock")
  private final CollectorLimits limits;

  /** Targets checked for null by one call of {@link #requireNoNull}. */
  private static final int NULL_CHECK_RANGE = 256;

  private final ReentrantLock lock = new ReentrantLock();
  // The writer's state: guarded by lock, as Error Prone's GuardedBy check enforces.
  @GuardedBy("lock")
  private final Slots slots;
  @GuardedBy("lock")
  private final TargetIntake intake;
  @GuardedBy("lock")
  private final Publisher publisher = new Publisher();
  @GuardedBy("lock")
  private Members members = Members.EMPTY;
  /** The members by name: built when they change, and published with them. */
  @GuardedBy("lock")
  private NameIndex names = NameIndex.EMPTY;
  @GuardedBy("lock")
  private final IntList freeIds = new IntList();
  @GuardedBy("lock")
  private int nextId;
  @GuardedBy("lock")
  private final IntList orphans = new IntList();
  @GuardedBy("lock")
  private boolean blipWarned;
  @GuardedBy("lock")
  private int lastDuplicates;

  private volatile Snapshot snapshot = Snapshot.EMPTY;

  /**
   * An engine.
   *
   * @param strategy the strategy's name
   * @param placer its placement logic, owned by this engine
   * @param listeners told after every change
   * @param movedShareWarning share of targets above which a change is logged as a warning
   * @param zones resolves zones for the placer; this engine keeps it up to date (the collectors'
   *     zones, and the topology {@link #setNodeZones} supplies)
   * @param maxTargets the most targets per unit of capacity ({@link CollectorLimits}), or 0 for
   *     no limit
   * @param maxCost the most cost per unit of capacity, or 0 for no limit
   */
  public Engine(String strategy, Placer placer, List<AllocationListener> listeners,
      double movedShareWarning, NodeZones zones, int maxTargets, long maxCost) {
    this(strategy, placer, listeners, movedShareWarning, zones, maxTargets, maxCost,
        Slots.ALL_BITS, true);
  }

  /**
   * An engine as above whose store keys targets by {@code hash() & keyMask} and compares each
   * given target with the one given at its place last time only when {@code compareInTurn}
   * (see {@link Slots#Slots(long, boolean)} and {@link TargetIntake#TargetIntake}).
   */
  Engine(String strategy, Placer placer, List<AllocationListener> listeners,
      double movedShareWarning, NodeZones zones, int maxTargets, long maxCost, long keyMask,
      boolean compareInTurn) {
    this.zones = zones;
    this.limits = new CollectorLimits(strategy, LOG, maxTargets, maxCost);
    this.strategy = strategy;
    this.placer = placer;
    this.placementMoves = placer::placementLabelsChanged;
    this.partitioned = placer instanceof Partitioned p ? p : null;
    this.listeners = new Listeners(listeners);
    this.movedShareWarning = movedShareWarning;
    this.slots = new Slots(keyMask, !limits.active());
    this.intake = new TargetIntake(slots, compareInTurn);
  }

  @Override
  public void setTargets(Collection<Target> targets) {
    Objects.requireNonNull(targets, "targets must not be null");
    boolean indexed = targets instanceof List && targets instanceof RandomAccess;
    if (indexed) {
      List<Target> list = (List<Target>) targets;
      for (int from = 0; from < list.size(); from += NULL_CHECK_RANGE) {
        requireNoNull(list, from, Math.min(list.size(), from + NULL_CHECK_RANGE));
      }
    } else {
      for (Object t : (Collection<?>) targets) {
        Objects.requireNonNull(t, "targets must not contain null");
      }
    }
    checkNotInListener();
    lock.lock();
    try {
      long start = System.nanoTime();
      Snapshot before = snapshot;
      slots.beginOperation();
      TargetSetChange change = intake.take(targets, indexed, placementMoves);
      limits.forget(change.removed());
      placer.targetsChanged(change.added(), change.removed(), members, slots);
      if (!change.renoded().isEmpty()) {
        placer.nodesChanged(change.renoded(), members, slots);
      }
      if (!change.recosted().isEmpty() && !members.isEmpty()) {
        placer.costsChanged(change.recosted(), members, slots);
      }
      limits.enforce(slots, members);
      logDuplicates(change.duplicates(), targets.size());
      publish(Cause.SET_TARGETS, before, start, false);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Throws when {@code list[from .. to)} holds a null (in ranges, a call each: {@link Passes}).
   * Reads the elements as {@code Object}s: a {@code Target} there would be a cast that loads each
   * target's header, a cache miss per target of a set built anew, for nothing.
   */
  private static void requireNoNull(List<?> list, int from, int to) {
    for (int i = from; i < to; i++) {
      if (list.get(i) == null) {
        throw new NullPointerException("targets must not contain null");
      }
    }
  }

  @GuardedBy("lock")
  private void logDuplicates(int duplicates, int given) {
    if (duplicates > 0) {
      // Discovery repeats the same duplicates every cycle: say it at info when the count
      // changes, not on every call.
      if (duplicates != lastDuplicates) {
        LOG.info("[{}] setTargets collapsed {} duplicate target(s) of {} given (same job and "
            + "non-__meta_ labels, so the same identity); the last one given was kept. Check "
            + "for scrape configs or discovery roles that overlap. Logged again only when the "
            + "count changes.", strategy, duplicates, given);
      } else {
        LOG.debug("[{}] setTargets collapsed {} duplicate target(s) of {} given", strategy,
            duplicates, given);
      }
    }
    lastDuplicates = duplicates;
  }

  @Override
  public void setCollectors(Collection<Collector> collectors) {
    Objects.requireNonNull(collectors, "collectors must not be null");
    Collector[] given = collectors.toArray(new Collector[0]);
    for (Collector c : given) {
      Objects.requireNonNull(c, "collectors must not contain null");
    }
    checkNotInListener();
    lock.lock();
    try {
      long start = System.nanoTime();
      CollectorsInNameOrder ordered =
          CollectorsInNameOrder.of(given, members, names);
      Collector[] byName = ordered.collectors();
      Snapshot before = snapshot;
      slots.beginOperation();
      if (byName.length == 0) {
        if (!members.isEmpty() && !blipWarned) {
          LOG.warn("[{}] the collector set went empty; treating it as a transient blip: the last "
              + "assignment ({} collectors, {} targets) stands until a non-empty set arrives, "
              + "and targets on collectors that are really gone are not scraped meanwhile. If it "
              + "lasts, check the collector discovery (pods, RBAC, label selector). Logged once "
              + "per blip.", strategy, members.size(), slots.known());
          blipWarned = true;
        }
        publish(Cause.SET_COLLECTORS, before, start, false);
        return;
      }
      if (blipWarned) {
        LOG.info("[{}] collectors are back after an empty set: {} collectors (there were {}); "
            + "the blip is over and targets are placed on them again", strategy, byName.length,
            members.size());
        blipWarned = false;
      }
      List<Member> removed = applyCollectors(byName, ordered.members(), start, before);
      for (Member m : removed) {
        freeIds.add(m.id());
      }
    } finally {
      lock.unlock();
    }
  }

  /** Applies a non-empty collector set; returns the members that left (ids still reserved). */
  @GuardedBy("lock")
  private List<Member> applyCollectors(Collector[] byName, Member[] known, long start,
      Snapshot before) {
    boolean first = members.isEmpty();
    Member[] next = new Member[byName.length];
    List<Member> added = new ArrayList<>();
    List<Member> renodedMembers = new ArrayList<>();
    List<Member> reweighted = new ArrayList<>();
    boolean valueChanged = false;
    int i = 0;
    for (Collector c : byName) {
      Member m = known[i];
      if (m == null) {
        m = new Member(c, newId());
        slots.register(m);
        added.add(m);
        limits.apply(m);
      } else if (!m.collector().equals(c)) {
        Collector old = m.collector();
        m.collector(c);
        valueChanged = true;
        if (!old.node().equals(c.node())) {
          renodedMembers.add(m);
        }
        if (Double.compare(old.capacity(), c.capacity()) != 0) {
          reweighted.add(m);
        }
        limits.apply(m);
      }
      // A member whose collector is the same keeps its limits: they follow from its capacity
      // and from the allocator's limits, which are fixed when it is built (were they ever to
      // change at run time, every member would need apply() again).
      next[i++] = m;
    }
    // The members that left: those no given collector was matched to (by index, in name order;
    // the indices are still the previous set's here).
    List<Member> removed = new ArrayList<>();
    boolean[] kept = new boolean[members.size()];
    for (Member m : known) {
      if (m != null) {
        kept[m.index()] = true;
      }
    }
    for (int k = 0; k < kept.length; k++) {
      if (!kept[k]) {
        removed.add(members.get(k));
      }
    }
    for (int j = 0; j < next.length; j++) {
      next[j].index(j);
    }
    boolean changed = first || !added.isEmpty() || !removed.isEmpty() || valueChanged;
    // Only removals (none came, none changed): the kept members' values are this set's.
    boolean onlyRemovals = added.isEmpty() && !valueChanged;
    if (changed) {
      Members after = onlyRemovals ? members.keeping(kept, next) : new Members(next);
      orphans.clear();
      if (first) {
        for (int k = 0; k < slots.known(); k++) {
          orphans.add(slots.slotAt(k));
        }
      } else if (!removed.isEmpty()) {
        slots.unassignHeldBy(removed, orphans);
      }
      Members previous = members;
      members = after;
      names = NameIndex.of(after);
      zones.learn(after, onlyRemovals);
      placer.collectorsChanged(new CollectorSetChange(previous, after,
          Collections.unmodifiableList(added), Collections.unmodifiableList(removed),
          Collections.unmodifiableList(renodedMembers), Collections.unmodifiableList(reweighted),
          orphans), slots);
      limits.enforce(slots, members);
    }
    orphans.reset();
    publish(Cause.SET_COLLECTORS, before, start, changed);
    return removed;
  }

  @GuardedBy("lock")
  private int newId() {
    if (!freeIds.isEmpty()) {
      int id = freeIds.get(freeIds.size() - 1);
      freeIds.truncate(freeIds.size() - 1);
      return id;
    }
    return nextId++;
  }

  /**
   * A listener runs while this thread holds the writer lock; a write from it would apply a change
   * inside the notification of another and reach later listeners out of order.
   */
  private void checkNotInListener() {
    if (lock.isHeldByCurrentThread()) {
      throw new IllegalStateException("an AllocationListener must not call setTargets or "
          + "setCollectors on the allocator that notifies it; hand the work to another thread");
    }
  }

  @Override
  public void setNodeZones(Map<String, String> zoneByNode) {
    Objects.requireNonNull(zoneByNode, "zoneByNode must not be null");
    Map<String, String> copy = new HashMap<>();
    for (Map.Entry<String, String> e : zoneByNode.entrySet()) {
      String node = Objects.requireNonNull(e.getKey(), "zoneByNode must not contain a null node");
      copy.put(node, Objects.requireNonNull(e.getValue(),
          "zoneByNode must not map node '" + node + "' to null"));
    }
    checkNotInListener();
    lock.lock();
    try {
      long start = System.nanoTime();
      Snapshot before = snapshot;
      slots.beginOperation();
      if (zones.supply(copy) && !members.isEmpty()) {
        placer.topologyChanged(members, slots);
        // Like every write: what the new zones put beyond a collector's limit moves on.
        limits.enforce(slots, members);
      }
      publish(Cause.SET_COLLECTORS, before, start, false);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public List<Target> targetsFor(String collector, String job) {
    return snapshot.targetsFor(collector, job);
  }

  @Override
  public Allocation snapshot() {
    return snapshot;
  }

  @Override
  public String strategy() {
    return strategy;
  }

  @GuardedBy("lock")
  private void publish(Cause cause, Snapshot before, long start, boolean collectorsChanged) {
    Publisher.Result r;
    try {
      int outside = 0;
      if (partitioned != null) {
        outside = partitioned.outsidePartition();
        IntList byLimits = limits.placed();
        if (!byLimits.isEmpty()) {
          // The per-collector limit, which knows no partitions, may have moved some out of
          // theirs.
          outside += partitioned.outsideAmong(byLimits, slots);
        }
      }
      r = publisher.publish(slots, members, names, before, collectorsChanged,
          !listeners.isEmpty(), outside);
    } finally {
      slots.endOperation();
    }
    Snapshot after = r.after();
    snapshot = after;
    int known = after.table.size();
    int reassigned = r.reassigned();
    if (known > 0 && reassigned > movedShareWarning * known && reassigned > 0) {
      LOG.warn("[{}] one {} call reassigned {} of {} targets ({}%), above the warning share of "
          + "{}%: expect scrape gaps or duplicates while collectors catch up. A rollout that "
          + "replaces many collectors at once, or a flapping collector set, causes this: roll "
          + "collectors out fewer at a time, or find why the set flaps; if such churn is "
          + "expected, raise warnWhenMovedShareExceeds.",
          strategy, cause == Cause.SET_TARGETS ? "setTargets" : "setCollectors", reassigned,
          known, Math.round(100.0 * reassigned / known), Math.round(100 * movedShareWarning));
    }
    notifyListeners(cause, before, after, r.moves(), r.relabeled(), reassigned, start);
  }

  private void notifyListeners(Cause cause, Snapshot before, Snapshot after, List<Move> moves,
      List<Target> relabeled, int reassigned, long start) {
    if (listeners.isEmpty()) {
      return;
    }
    listeners.tell(new AllocationChangeRecord(cause, strategy, before, after, moves, relabeled,
        reassigned, System.nanoTime() - start));
  }
}
