package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.AllocationListener;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.engine.AllocationChangeRecord;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.engine.Listeners;
import dev.apportion.allocation.spi.AllocatorSpec;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * An allocator that places every target on k distinct collectors.
 *
 * <p><b>Design.</b> The primary (replica 0) is the strategy's own allocator, fed the targets as
 * given: a target's primary is exactly where one replica would put it, and moves as it would.
 * The further replicas are placed by {@link ReplicaPlacement}: each walks a consistent-hash ring
 * of the collectors from a key of (target, rank) to the first collector that holds no earlier
 * replica of the target and is in the best tier on offer (another node, another zone; per-node:
 * the target's zone), and each collector takes those that walked to it up to its load cap,
 * counting every replica. The primary's allocator is history-independent and so is that rule,
 * so the owners are a function of the targets and the collectors: replicas of the server agree.
 *
 * <p>The primary's allocator reports what moved (its listener), so a change of collectors costs
 * the primary's change plus the further replicas it touches: those of the targets whose primary
 * moved, those on or walking to a collector that left, and those whose walk a collector that
 * joined now ends at ({@link ReplicaPlacement#change}).
 *
 * <p>Thread-safety as {@link Allocator} says: writers serialized by a lock, readers read the last
 * published snapshot.
 */
public final class ReplicatedAllocator implements Allocator {
  private final String strategy;
  private final int k;
  private final Allocator primary;
  private final Heard heard = new Heard();
  private final Listeners listeners;
  private final ReplicaPlacement placement;
  private final ReentrantLock lock = new ReentrantLock();

  // The writer's state, guarded by lock.
  private Target[] targets = new Target[0];
  private Map<Target, Integer> index = Map.of();
  /** The primary's choice for each target: a collector id in {@link #topology}, or -1. */
  private int[] choice = new int[0];
  private Topology topology = Topology.EMPTY;
  private List<Collector> collectors = List.of();
  private Map<String, String> zoneByNode = Map.of();
  private volatile ReplicatedSnapshot published;

  /**
   * A replicated allocator.
   *
   * @param spec the user's spec: its strategy, replicas, load factor, limits and listeners
   * @param rule where further replicas prefer to go
   * @param primaryAllocator builds the primary's allocator from a spec of one replica that carries
   *     the listener the replicated allocator hears it through
   */
  public ReplicatedAllocator(AllocatorSpec spec, ReplicaRule rule,
      Function<AllocatorSpec, Allocator> primaryAllocator) {
    this.strategy = spec.strategy();
    this.k = spec.replicas();
    int share = spec.maxTargetsPerCollector().orElse(0) / k;
    long costShare = spec.maxCostPerCollector().orElse(0L) / k;
    if ((spec.maxTargetsPerCollector().isPresent() && share == 0)
        || (spec.maxCostPerCollector().isPresent() && costShare == 0)) {
      throw new IllegalArgumentException("a per-collector limit must be at least the replicas ("
          + k + "): " + spec.maxTargetsPerCollector() + ", " + spec.maxCostPerCollector());
    }
    AllocatorSpec.Builder b = spec.toBuilder().replicas(1).listeners(List.of(heard));
    // The primaries hold at most their share of a limit, so that every replica counts.
    if (share > 0) {
      b.maxTargetsPerCollector(share);
    }
    if (costShare > 0) {
      b.maxCostPerCollector(costShare);
    }
    this.primary = primaryAllocator.apply(b.build());
    this.listeners = new Listeners(spec.listeners());
    this.placement = new ReplicaPlacement(k, rule, spec.loadFactor(), spec.costLoadFactor(),
        spec.maxTargetsPerCollector().orElse(0), spec.maxCostPerCollector().orElse(0L));
    this.published = snapshotOf(new OwnerTable(k, 0).freeze(), new int[0], new long[0]);
  }

  /** What the primary's allocator told its listener during the current call. */
  private static final class Heard implements AllocationListener {
    final List<Move> moves = new ArrayList<>();
    final List<Target> relabeled = new ArrayList<>();

    @Override
    public void onChange(AllocationChange change) {
      moves.addAll(change.moves());
      relabeled.addAll(change.relabeled());
    }

    void clear() {
      moves.clear();
      relabeled.clear();
    }
  }

  @Override
  public void setTargets(Collection<Target> given) {
    Objects.requireNonNull(given, "targets");
    List<Target> list = new ArrayList<>(given.size());
    for (Target t : given) {
      list.add(Objects.requireNonNull(t, "targets must not contain null"));
    }
    writing();
    lock.lock();
    try {
      long start = System.nanoTime();
      ReplicatedSnapshot before = published;
      heard.clear();
      primary.setTargets(list);
      if (heard.moves.isEmpty() && heard.relabeled.isEmpty()
          && primary.snapshot() == before.primary()) {
        // A refresh that found nothing new (the primary's allocator published nothing): nothing
        // the placement reads changed, so it and the arrays it indexes stand.
        placement.keep();
        settle(AllocationChange.Cause.SET_TARGETS, before, targets, null, List.of(), start);
        return;
      }
      // The targets keep their order from call to call (those known before in their old order,
      // then the new ones as given): placement never depends on it, and the snapshot that
      // stands through a call that changes nothing stays indexed as this allocator is.
      // Duplicates by identity collapse to the last one given: a known one overwrites its slot,
      // a new one its place among the new.
      Target[] known = new Target[targets.length];
      int knownCount = 0;
      Map<Target, Integer> freshAt = new HashMap<>();
      List<Target> fresh = new ArrayList<>();
      for (Target t : list) {
        Integer old = index.get(t);
        if (old != null) {
          knownCount += known[old] == null ? 1 : 0;
          known[old] = t;
        } else {
          Integer at = freshAt.putIfAbsent(t, fresh.size());
          if (at == null) {
            fresh.add(t);
          } else {
            fresh.set(at, t);
          }
        }
      }
      int n = knownCount + fresh.size();
      Target[] newTargets = new Target[n];
      int[] fromOld = new int[n];
      int w = 0;
      for (int old = 0; old < known.length; old++) {
        if (known[old] != null) {
          fromOld[w] = old;
          newTargets[w++] = known[old];
        }
      }
      for (Target t : fresh) {
        fromOld[w] = -1;
        newTargets[w++] = t;
      }
      Map<Target, Integer> newIndex = new HashMap<>(n * 2);
      for (int i = 0; i < n; i++) {
        newIndex.put(newTargets[i], i);
      }
      int[] newChoice = new int[n];
      for (int i = 0; i < n; i++) {
        newChoice[i] = fromOld[i] < 0 ? -1 : choice[fromOld[i]];
      }
      Target[] oldTargets = targets;
      targets = newTargets;
      index = newIndex;
      choice = newChoice;
      apply(heard.moves, choice);
      List<Target> relabeled = List.copyOf(heard.relabeled);
      placement.placeAll(targets, choice, topology);
      settle(AllocationChange.Cause.SET_TARGETS, before, oldTargets, fromOld, relabeled, start);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void setCollectors(Collection<Collector> given) {
    Objects.requireNonNull(given, "collectors");
    List<Collector> list = new ArrayList<>(given.size());
    Set<String> names = new HashSet<>(given.size() * 2);
    for (Collector c : given) {
      Objects.requireNonNull(c, "collectors must not contain null");
      if (!names.add(c.name())) {
        throw new IllegalArgumentException("two collectors are named '" + c.name() + "'");
      }
      list.add(c);
    }
    writing();
    lock.lock();
    try {
      long start = System.nanoTime();
      ReplicatedSnapshot before = published;
      if (!list.isEmpty()) {
        // An empty set is a blip: the primary keeps its last set, and so does the topology.
        collectors = list;
        use(topology.next(collectors, zoneByNode));
      }
      heard.clear();
      primary.setCollectors(list);
      IntList moved = apply(heard.moves, choice);
      if (!placement.change(choice, moved, topology)) {
        placement.placeAll(targets, choice, topology);
      }
      settle(AllocationChange.Cause.SET_COLLECTORS, before, targets, null, List.of(), start);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void setNodeZones(Map<String, String> given) {
    Objects.requireNonNull(given, "zoneByNode");
    given.forEach((node, zone) -> {
      Objects.requireNonNull(node, "zoneByNode must not contain a null node");
      Objects.requireNonNull(zone, "zoneByNode must not contain a null zone");
    });
    writing();
    lock.lock();
    try {
      long start = System.nanoTime();
      ReplicatedSnapshot before = published;
      zoneByNode = Map.copyOf(given);
      use(topology.next(collectors, zoneByNode));
      heard.clear();
      primary.setNodeZones(given);
      apply(heard.moves, choice);
      placement.placeAll(targets, choice, topology);
      settle(AllocationChange.Cause.SET_COLLECTORS, before, targets, null, List.of(), start);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Makes {@code next} the topology; when it numbers the collectors afresh (a new generation),
   * moves the primaries from the old ids to the new.
   */
  private void use(Topology next) {
    if (next.generation() != topology.generation()) {
      int[] map = new int[topology.limit()];
      for (int c = 0; c < map.length; c++) {
        map[c] = topology.present(c) ? next.id(topology.name(c)) : -1;
      }
      for (int i = 0; i < choice.length; i++) {
        if (choice[i] >= 0) {
          choice[i] = map[choice[i]];
        }
      }
    }
    topology = next;
  }

  /** Applies the primary's moves to its choices; returns the indexes whose choice changed. */
  private IntList apply(List<Move> moves, int[] ids) {
    IntList changed = new IntList(moves.size());
    for (Move m : moves) {
      Integer i = index.get(m.target());
      if (i != null) {
        ids[i] = topology.id(m.to().orElse(null));
        changed.add(i);
      }
    }
    return changed;
  }

  /**
   * Publishes the snapshot of what the placement decided and tells the listeners what moved,
   * replica by replica. {@code fromOld} maps each target to its index before the call ({@code
   * null}: the same targets); the targets keep their order from call to call, so the snapshot
   * before is indexed as this allocator was before the call, even when it stood through calls
   * that changed nothing. Owners are compared as collector ids, which a name keeps within a
   * generation of topologies (through a map of the old ids to the new across generations); names
   * are looked up only for the replicas that moved. When the placement continued from the last
   * one, only the replicas it re-decided are compared. When the primary's snapshot stands and no
   * replica changed collector, the published snapshot stands too: a call that changes nothing
   * publishes nothing, as with one replica.
   */
  private void settle(AllocationChange.Cause cause, ReplicatedSnapshot before, Target[] oldTargets,
      int[] fromOld, List<Target> relabeled, long start) {
    boolean sameTargets = fromOld == null || isIdentity(fromOld, oldTargets.length);
    OwnerTable owners = placement.owners();
    Topology was = before.topology();
    int[] oldToNew = null;
    if (was.generation() != topology.generation()) {
      oldToNew = new int[was.limit()];
      for (int c = 0; c < oldToNew.length; c++) {
        // A collector that left maps below -1: equal to no new id, nor to "none" (-1).
        int now = was.present(c) ? topology.id(was.name(c)) : -1;
        oldToNew[c] = now < 0 ? -2 : now;
      }
    }
    List<Move> moves = new ArrayList<>();
    boolean tell = !listeners.isEmpty();
    int[] reassigned = new int[1];
    boolean ownersChanged;
    if (placement.wasFull()) {
      ownersChanged = !sameTargets || !sameOwners(before, owners, oldToNew);
      if (ownersChanged && tell) {
        for (int i = 0; i < targets.length; i++) {
          int old = fromOld == null ? i : fromOld[i];
          for (int r = 0; r < k; r++) {
            addMove(moves, reassigned, before, was, oldToNew, r, i, old, owners);
          }
        }
      }
    } else {
      ownersChanged = false;
      for (int r = 0; r < k; r++) {
        IntList changed = placement.changed(r);
        ownersChanged |= !changed.isEmpty();
        for (int j = 0; j < changed.size() && tell; j++) {
          int i = changed.get(j);
          addMove(moves, reassigned, before, was, oldToNew, r, i, i, owners);
        }
      }
    }
    ReplicatedSnapshot after;
    if (sameTargets && !ownersChanged && primary.snapshot() == before.primary()) {
      after = before;
    } else {
      after = snapshotOf(owners.freeze(), placement.counts(), placement.costs());
    }
    published = after;
    if (!tell) {
      return;
    }
    if (after != before && !sameTargets) {
      boolean[] kept = new boolean[oldTargets.length];
      for (int old : fromOld) {
        if (old >= 0) {
          kept[old] = true;
        }
      }
      for (int old = 0; old < oldTargets.length; old++) {
        for (int r = 0; r < k && !kept[old]; r++) {
          int from = before.owner(r, old);
          if (from >= 0) {
            moves.add(new Move(before.target(old), was.name(from), null, r));
          }
        }
      }
    }
    listeners.tell(new AllocationChangeRecord(cause, strategy, before, after, List.copyOf(moves),
        List.copyOf(relabeled), reassigned[0], System.nanoTime() - start));
  }

  /** Adds the move of target {@code i}'s replica {@code r} (index {@code old} before), if any. */
  private void addMove(List<Move> moves, int[] reassigned, ReplicatedSnapshot before,
      Topology was, int[] oldToNew, int r, int i, int old, OwnerTable owners) {
    int from = old < 0 ? -1 : before.owner(r, old);
    int to = owners.get(r, i);
    if ((from < 0 || oldToNew == null ? from : oldToNew[from]) == to) {
      return;
    }
    String fromName = from < 0 ? null : was.name(from);
    moves.add(new Move(targets[i], fromName, to < 0 ? null : topology.name(to), r));
    // A replica that had a collector and now has another, or none, is reassigned (as
    // AllocationChange.reassigned() counts for a target known after the call).
    reassigned[0] += fromName != null ? 1 : 0;
  }

  /** Whether {@code owners}, index by index, are {@code before}'s (old ids mapped if given). */
  private boolean sameOwners(ReplicatedSnapshot before, OwnerTable owners, int[] oldToNew) {
    if (before.size() != targets.length) {
      return false;
    }
    for (int r = 0; r < k; r++) {
      for (int i = 0; i < targets.length; i++) {
        int from = before.owner(r, i);
        if ((from < 0 || oldToNew == null ? from : oldToNew[from]) != owners.get(r, i)) {
          return false;
        }
      }
    }
    return true;
  }

  /** Whether every target is where it was ({@code fromOld[i] == i}) and none left. */
  private static boolean isIdentity(int[] fromOld, int oldCount) {
    if (fromOld.length != oldCount) {
      return false;
    }
    for (int i = 0; i < fromOld.length; i++) {
      if (fromOld[i] != i) {
        return false;
      }
    }
    return true;
  }


  private ReplicatedSnapshot snapshotOf(OwnerTable owners, int[] counts, long[] costs) {
    return new ReplicatedSnapshot(primary.snapshot(), k, targets, index, owners, topology, counts,
        costs);
  }

  /**
   * A listener runs while this thread holds the writer lock; a write from it would apply a change
   * inside another's notification.
   */
  private void writing() {
    if (lock.isHeldByCurrentThread()) {
      throw new IllegalStateException("an AllocationListener must not call setTargets or "
          + "setCollectors");
    }
  }

  /** Whether the last change continued the placement before it, rather than placing afresh. */
  boolean continuedLastChange() {
    return !placement.wasFull();
  }

  @Override
  public List<Target> targetsFor(String collector, String job) {
    return published.targetsFor(collector, job);
  }

  @Override
  public Allocation snapshot() {
    return published;
  }

  @Override
  public String strategy() {
    return strategy;
  }

  @Override
  public String toString() {
    return "ReplicatedAllocator[" + strategy + ", " + k + " replicas]";
  }
}
