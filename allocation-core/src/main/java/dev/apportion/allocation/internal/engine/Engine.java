package dev.apportion.allocation.internal.engine;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSortedMap;
import com.google.common.collect.ImmutableSortedSet;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange.Cause;
import dev.apportion.allocation.AllocationListener;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The allocation engine every built-in strategy runs on.
 *
 * <p><b>Design.</b> Writers are serialized by one lock. Each write finds the difference against
 * the stored state (new, dropped and relabeled targets; added, removed and re-noded collectors)
 * and hands only that to the strategy's {@link Placer}, which writes placements into the
 * {@link Ledger}. The ledger records each touched target's owner before the write; at the end,
 * the engine turns exactly those targets into {@link Move}s and into a new immutable
 * {@link Snapshot} that shares every untouched part with the previous one, and publishes it with
 * one volatile write. Readers only ever read that field: they never block and never see a
 * half-applied change.
 *
 * <p><b>Cost.</b> {@code setTargets}: O(n) hash lookups to diff {@code n} targets, O(a log a) to
 * order {@code a} added ones, plus the placer. {@code setCollectors}: O(c) for {@code c}
 * collectors, plus the placer. Publishing: O(c) to rebuild the collector map, plus, for
 * {@code k} touched targets, about {@code k} shard copies of ~16 entries and the rebuilding of
 * each touched per-collector per-job list.
 */
public final class Engine implements Allocator {
  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);

  private final String strategy;
  private final Placer placer;
  private final List<AllocationListener> listeners;
  private final double movedShareWarning;

  private final ReentrantLock lock = new ReentrantLock();
  // Guarded by lock.
  private final Ledger ledger = new Ledger();
  private Members members = Members.EMPTY;
  private boolean blipWarned;
  private int lastDuplicates;

  private volatile Snapshot snapshot = Snapshot.EMPTY;

  /**
   * An engine.
   *
   * @param strategy the strategy's name
   * @param placer its placement logic, owned by this engine
   * @param listeners told after every change
   * @param movedShareWarning share of targets above which a change is logged as a warning
   */
  public Engine(String strategy, Placer placer, List<AllocationListener> listeners,
      double movedShareWarning) {
    this.strategy = strategy;
    this.placer = placer;
    this.listeners = List.copyOf(listeners);
    this.movedShareWarning = movedShareWarning;
  }

  @Override
  public void setTargets(Collection<Target> targets) {
    Objects.requireNonNull(targets, "targets must not be null");
    HashMap<Target, Target> latest = new HashMap<>(Math.max(16, targets.size() * 4 / 3 + 1));
    for (Target t : targets) {
      Objects.requireNonNull(t, "targets must not contain null");
      latest.put(t, t);
    }
    int duplicates = targets.size() - latest.size();
    checkNotInListener();
    lock.lock();
    try {
      long start = System.nanoTime();
      Snapshot before = snapshot;
      List<Target> added = new ArrayList<>();
      List<Target> renodedBefore = new ArrayList<>();
      List<Target> renodedAfter = new ArrayList<>();
      for (Target t : latest.values()) {
        Ledger.Slot s = ledger.slot(t);
        if (s == null) {
          added.add(t);
        } else if (!s.instance.sameLabels(t)) {
          if (!s.instance.node().equals(t.node())) {
            renodedBefore.add(s.instance);
            renodedAfter.add(t);
          }
          ledger.relabel(t);
        }
      }
      List<Target> removed = new ArrayList<>();
      for (Target t : ledger.sortedTargets()) {
        if (!latest.containsKey(t)) {
          removed.add(ledger.slot(t).instance);
        }
      }
      TargetOrder.sort(added);
      ledger.addAndRemove(added, removed);
      placer.targetsChanged(Collections.unmodifiableList(added),
          Collections.unmodifiableList(removed), members, ledger);
      if (!renodedAfter.isEmpty()) {
        // Old and new versions are equal by identity, so sorting both lists pairs them.
        TargetOrder.sort(renodedBefore);
        TargetOrder.sort(renodedAfter);
        placer.nodesChanged(Collections.unmodifiableList(renodedBefore),
            Collections.unmodifiableList(renodedAfter), members, ledger);
      }
      if (duplicates > 0) {
        // Discovery repeats the same duplicates every cycle: say it at info when the count
        // changes, not on every call.
        if (duplicates != lastDuplicates) {
          LOG.info("[{}] setTargets collapsed {} duplicate target(s) of {} given (same job and "
              + "non-__meta_ labels, so the same identity); the last one given was kept. Check "
              + "for scrape configs or discovery roles that overlap. Logged again only when the "
              + "count changes.", strategy, duplicates, targets.size());
        } else {
          LOG.debug("[{}] setTargets collapsed {} duplicate target(s) of {} given", strategy,
              duplicates, targets.size());
        }
      }
      lastDuplicates = duplicates;
      publish(Cause.SET_TARGETS, before, start, false);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void setCollectors(Collection<Collector> collectors) {
    Objects.requireNonNull(collectors, "collectors must not be null");
    TreeMap<String, Collector> byName = new TreeMap<>();
    for (Collector c : collectors) {
      Objects.requireNonNull(c, "collectors must not contain null");
      if (byName.put(c.name(), c) != null) {
        throw new IllegalArgumentException("duplicate collector name '" + c.name()
            + "': collector names must be unique within one setCollectors call");
      }
    }
    checkNotInListener();
    lock.lock();
    try {
      long start = System.nanoTime();
      Snapshot before = snapshot;
      if (byName.isEmpty()) {
        if (!members.isEmpty() && !blipWarned) {
          LOG.warn("[{}] the collector set went empty; treating it as a transient blip: the last "
              + "assignment ({} collectors, {} targets) stands until a non-empty set arrives, "
              + "and targets on collectors that are really gone are not scraped meanwhile. If it "
              + "lasts, check the collector discovery (pods, RBAC, label selector). Logged once "
              + "per blip.", strategy, members.size(), ledger.known());
          blipWarned = true;
        }
        publish(Cause.SET_COLLECTORS, before, start, false);
        return;
      }
      if (blipWarned) {
        LOG.info("[{}] collectors are back after an empty set: {} collectors (there were {}); "
            + "the blip is over and targets are placed on them again", strategy, byName.size(),
            members.size());
        blipWarned = false;
      }
      boolean first = members.isEmpty();
      Member[] next = new Member[byName.size()];
      List<Member> added = new ArrayList<>();
      List<Member> renoded = new ArrayList<>();
      int i = 0;
      for (Collector c : byName.values()) {
        Member m = members.byName(c.name());
        if (m == null) {
          m = new Member(c);
          added.add(m);
        } else if (!m.collector().equals(c)) {
          m.collector(c);
          renoded.add(m);
        }
        m.index(i);
        next[i++] = m;
      }
      List<Member> removed = new ArrayList<>();
      for (Member m : members) {
        if (!byName.containsKey(m.name())) {
          removed.add(m);
        }
      }
      Members after = new Members(next);
      boolean changed = first || !added.isEmpty() || !removed.isEmpty() || !renoded.isEmpty();
      if (changed) {
        List<Target> orphans;
        if (first) {
          orphans = ledger.sortedTargets();
        } else {
          List<Target> o = new ArrayList<>();
          for (Member m : removed) {
            o.addAll(m.targets);
          }
          TargetOrder.sort(o);
          for (Target t : o) {
            ledger.place(t, null);
          }
          orphans = Collections.unmodifiableList(o);
        }
        Members previous = members;
        members = after;
        placer.collectorsChanged(new CollectorChange(previous, after,
            Collections.unmodifiableList(added), Collections.unmodifiableList(removed),
            Collections.unmodifiableList(renoded), orphans), ledger);
      }
      publish(Cause.SET_COLLECTORS, before, start, changed);
    } finally {
      lock.unlock();
    }
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

  /** Delta of one collector's list for one job: additions arrive in identity-hash order. */
  private static final class Delta {
    Set<Target> remove;
    final List<Target> add = new ArrayList<>();

    void remove(Target t) {
      if (remove == null) {
        remove = new HashSet<>();
      }
      remove.add(t);
    }
  }

  /**
   * The touched targets in identity-hash order. When most targets were touched (a full
   * placement), walking the ledger's ordered targets is cheaper than sorting.
   */
  private Target[] touchedInOrder(Map<Target, Member> touched) {
    if (touched.size() * 4L < ledger.known()) {
      Target[] out = touched.keySet().toArray(new Target[0]);
      TargetOrder.sort(out);
      return out;
    }
    Target[] out = new Target[touched.size()];
    int w = 0;
    List<Target> removed = ledger.removedSorted();
    int r = 0;
    for (Target t : ledger.sortedTargets()) {
      while (r < removed.size() && TargetOrder.compare(removed.get(r), t) < 0) {
        out[w++] = removed.get(r++);
      }
      if (touched.containsKey(t)) {
        out[w++] = t;
      }
    }
    while (r < removed.size()) {
      out[w++] = removed.get(r++);
    }
    return out;
  }

  private boolean isCurrent(Member m) {
    return m.index() < members.size() && members.get(m.index()) == m;
  }

  private void publish(Cause cause, Snapshot before, long start, boolean collectorsChanged) {
    Map<Target, Member> touched = ledger.previousOwners();
    if (touched.isEmpty() && !collectorsChanged) {
      ledger.endOperation();
      notifyListeners(cause, before, before, List.of(), List.of(), 0, start);
      return;
    }
    Map<Target, Ledger.Slot> removedSlots = ledger.removedSlots();
    Set<Target> relabeled = ledger.relabeled();
    Target[] order = touchedInOrder(touched);
    List<Move> moves = new ArrayList<>();
    List<Target> relabeledInOrder = new ArrayList<>(relabeled.size());
    List<Map<String, Delta>> deltas = new ArrayList<>(Collections.nCopies(members.size(), null));
    boolean anyDelta = false;
    int reassigned = 0;
    boolean unassignedChanged = false;
    boolean checkWasUnassigned = !before.unassigned.isEmpty();
    Target[] tableTargets = new Target[order.length];
    String[] tableOwners = new String[order.length];
    int w = 0;
    for (Target key : order) {
      Ledger.Slot slot = ledger.slot(key);
      Member fromMember = touched.get(key);
      String from = fromMember == null ? null : fromMember.name();
      String to = slot == null || slot.owner == null ? null : slot.owner.name();
      Target instance = slot != null ? slot.instance : removedSlots.get(key).instance;
      if (slot != null && relabeled.contains(key)) {
        relabeledInOrder.add(instance);
      }
      if (!Objects.equals(from, to)) {
        moves.add(new Move(instance, from, to));
        if (fromMember != null && isCurrent(fromMember)) {
          delta(deltas, fromMember, key.job()).remove(key);
          anyDelta = true;
        }
        if (to != null) {
          delta(deltas, slot.owner, key.job()).add.add(instance);
          anyDelta = true;
        }
        if (from != null && slot != null) {
          reassigned++;
        }
      } else if (to != null && relabeled.contains(key)) {
        Delta d = delta(deltas, slot.owner, key.job());
        d.remove(key);
        d.add.add(instance);
        anyDelta = true;
      }
      if ((slot != null && to == null)
          || (checkWasUnassigned && from == null && before.unassigned.contains(key))) {
        unassignedChanged = true;
      }
      if (slot != null) {
        tableTargets[w] = instance;
        tableOwners[w++] = to;
      } else if (before.table.instance(key) != null) {
        tableTargets[w] = key;
        tableOwners[w++] = TargetTable.REMOVE;
      }
    }
    TargetTable table = before.table.apply(tableTargets, tableOwners, w);

    ImmutableSortedSet<Collector> collectorSet = before.collectors;
    if (collectorsChanged) {
      ImmutableSortedSet.Builder<Collector> b = ImmutableSortedSet.naturalOrder();
      for (Member m : members) {
        b.add(m.collector());
      }
      collectorSet = b.build();
    }
    ImmutableMap<String, Snapshot.Entry> entries = before.entries;
    if (collectorsChanged || anyDelta) {
      ImmutableMap.Builder<String, Snapshot.Entry> b =
          ImmutableMap.builderWithExpectedSize(members.size());
      for (Member m : members) {
        Snapshot.Entry e = before.entries.get(m.name());
        if (e == null) {
          e = new Snapshot.Entry(m.collector(), ImmutableSortedMap.of());
        } else if (!e.collector.equals(m.collector())) {
          e = e.withCollector(m.collector());
        }
        Map<String, Delta> d = deltas.get(m.index());
        if (d != null) {
          e = new Snapshot.Entry(e.collector, rebuild(e.byJob, d));
        }
        b.put(m.name(), e);
      }
      entries = b.buildOrThrow();
    }

    ImmutableSortedSet<Target> unassigned = before.unassigned;
    if (unassignedChanged) {
      unassigned = rebuildUnassigned(before.unassigned, touched.keySet());
    }
    Snapshot after = new Snapshot(collectorSet, entries, table, unassigned);
    snapshot = after;
    ledger.endOperation();
    int known = table.size();
    if (known > 0 && reassigned > movedShareWarning * known && reassigned > 0) {
      LOG.warn("[{}] one {} call reassigned {} of {} targets ({}%), above the warning share of "
          + "{}%: expect scrape gaps or duplicates while collectors catch up. A rollout that "
          + "replaces many collectors at once, or a flapping collector set, causes this: roll "
          + "collectors out fewer at a time, or find why the set flaps; if such churn is "
          + "expected, raise warnWhenMovedShareExceeds.",
          strategy, cause == Cause.SET_TARGETS ? "setTargets" : "setCollectors", reassigned,
          known, Math.round(100.0 * reassigned / known), Math.round(100 * movedShareWarning));
    }
    notifyListeners(cause, before, after, Collections.unmodifiableList(moves),
        Collections.unmodifiableList(relabeledInOrder), reassigned, start);
  }

  private void notifyListeners(Cause cause, Snapshot before, Snapshot after, List<Move> moves,
      List<Target> relabeled, int reassigned, long start) {
    if (listeners.isEmpty()) {
      return;
    }
    Change change = new Change(cause, strategy, before, after, moves, relabeled, reassigned,
        System.nanoTime() - start);
    RuntimeException failure = null;
    for (AllocationListener l : listeners) {
      try {
        l.onChange(change);
      } catch (RuntimeException e) {
        // Every listener hears every change, whatever an earlier one did.
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private ImmutableSortedSet<Target> rebuildUnassigned(ImmutableSortedSet<Target> old,
      Set<Target> touched) {
    ImmutableSortedSet.Builder<Target> b = ImmutableSortedSet.orderedBy(TargetOrder.HASH);
    for (Target t : old) {
      if (!touched.contains(t)) {
        b.add(t);
      }
    }
    for (Target t : touched) {
      Ledger.Slot s = ledger.slot(t);
      if (s != null && s.owner == null) {
        b.add(s.instance);
      }
    }
    return b.build();
  }

  private static Delta delta(List<Map<String, Delta>> deltas, Member member, String job) {
    Map<String, Delta> byJob = deltas.get(member.index());
    if (byJob == null) {
      byJob = new HashMap<>();
      deltas.set(member.index(), byJob);
    }
    return byJob.computeIfAbsent(job, j -> new Delta());
  }

  private static ImmutableSortedMap<String, ImmutableList<Target>> rebuild(
      ImmutableSortedMap<String, ImmutableList<Target>> byJob, Map<String, Delta> deltas) {
    TreeMap<String, ImmutableList<Target>> out = new TreeMap<>(byJob);
    for (Map.Entry<String, Delta> e : deltas.entrySet()) {
      Delta d = e.getValue();
      ImmutableList<Target> old = byJob.getOrDefault(e.getKey(), ImmutableList.of());
      ImmutableList.Builder<Target> next =
          ImmutableList.builderWithExpectedSize(old.size() + d.add.size());
      int a = 0;
      int size = 0;
      for (Target t : old) {
        if (d.remove != null && d.remove.contains(t)) {
          continue;
        }
        while (a < d.add.size() && TargetOrder.compare(d.add.get(a), t) < 0) {
          next.add(d.add.get(a++));
          size++;
        }
        next.add(t);
        size++;
      }
      for (; a < d.add.size(); a++) {
        next.add(d.add.get(a));
        size++;
      }
      if (size == 0) {
        out.remove(e.getKey());
      } else {
        out.put(e.getKey(), next.build());
      }
    }
    return ImmutableSortedMap.copyOfSorted(out);
  }
}
