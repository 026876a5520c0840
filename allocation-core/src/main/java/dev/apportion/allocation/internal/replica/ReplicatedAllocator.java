package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.AllocationListener;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.engine.AllocationChangeRecord;
import dev.apportion.allocation.internal.engine.Listeners;
import dev.apportion.allocation.spi.AllocatorSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;

/**
 * An allocator that places every target on k distinct collectors.
 *
 * <p><b>Design.</b> Rank 0 is the strategy's own allocator, fed the targets as given: a target's
 * primary is exactly where one replica would put it. Rank r &ge; 1 is an allocator of its own
 * (for per-node, of its fallback, zone-aware), fed each target as a copy that carries the label
 * {@value #REPLICA_LABEL}{@code ="r"}: a different identity, hence an independent, balanced,
 * minimally-moving placement. Each rank's choice for replica r of a target then stands or not
 * ({@link ReplicaPlacement}): it stands on a collector that holds no earlier replica of the target
 * and is in the best tier on offer (another node, another zone); the few that do not stand go to
 * the best collector of that tier by weighted rendezvous, under the load cap. Every rank's
 * allocator is history-independent and so is that rule, so the owners are a function of the
 * targets and the collectors: replicas of the server agree.
 *
 * <p>The ranks' allocators report what moved (their listeners), so a change costs each rank's
 * change plus one pass over the owners (a few array reads per target) and the moves; the ranks'
 * copies of the targets are kept from call to call and made only for new or relabeled targets.
 *
 * <p>Thread-safety as {@link Allocator} says: writers serialized by a lock, readers read the last
 * published snapshot.
 */
public final class ReplicatedAllocator implements Allocator {
  /** The label that makes replica r of a target a target of its own for rank r's allocator. */
  public static final String REPLICA_LABEL = "__replica__";

  private final String strategy;
  private final int k;
  private final Allocator[] ranks;
  private final Heard[] heard;
  private final Listeners listeners;
  private final ReplicaPlacement placement;
  private final ReentrantLock lock = new ReentrantLock();

  // The writer's state, guarded by lock.
  private Target[] targets = new Target[0];
  private Map<Target, Integer> index = Map.of();
  /** Each rank's copies of the targets, by index (rank 0: the targets themselves). */
  private Target[][] copies;
  private List<Map<Target, Integer>> copyIndex;
  /** Each rank's own choice for each target: a collector id in {@link #topology}, or -1. */
  private int[][] choice;
  private Topology topology = Topology.EMPTY;
  private List<Collector> collectors = List.of();
  private Map<String, String> zoneByNode = Map.of();
  private volatile ReplicatedSnapshot published;

  /**
   * A replicated allocator.
   *
   * @param spec the user's spec: its strategy, replicas, load factor, limit and listeners
   * @param rule where further replicas prefer to go
   * @param rank builds rank r's allocator from a spec of one replica that carries the listener
   *     the replicated allocator hears it through
   */
  public ReplicatedAllocator(AllocatorSpec spec, ReplicaRule rule,
      BiFunction<AllocatorSpec, Integer, Allocator> rank) {
    this.strategy = spec.strategy();
    this.k = spec.replicas();
    this.ranks = new Allocator[k];
    this.heard = new Heard[k];
    int share = spec.maxTargetsPerCollector().orElse(0) / k;
    long costShare = spec.maxCostPerCollector().orElse(0L) / k;
    if ((spec.maxTargetsPerCollector().isPresent() && share == 0)
        || (spec.maxCostPerCollector().isPresent() && costShare == 0)) {
      throw new IllegalArgumentException("a per-collector limit must be at least the replicas ("
          + k + "): " + spec.maxTargetsPerCollector() + ", " + spec.maxCostPerCollector());
    }
    for (int r = 0; r < k; r++) {
      heard[r] = new Heard();
      AllocatorSpec.Builder b = spec.toBuilder().replicas(1).listeners(List.of(heard[r]));
      // Each rank holds at most its share of a limit, so that every replica counts.
      if (share > 0) {
        b.maxTargetsPerCollector(share);
      }
      if (costShare > 0) {
        b.maxCostPerCollector(costShare);
      }
      if (r > 0) {
        b.movedShareWarning(1.0); // the primary's warning is the one a user reads
      }
      ranks[r] = rank.apply(b.build(), r);
    }
    this.listeners = new Listeners(spec.listeners());
    this.placement = new ReplicaPlacement(k, rule, spec.loadFactor(), spec.costLoadFactor(),
        spec.maxTargetsPerCollector().orElse(0), spec.maxCostPerCollector().orElse(0L));
    this.copies = new Target[k][0];
    this.copyIndex = new ArrayList<>();
    for (int r = 0; r < k; r++) {
      copyIndex.add(Map.of());
    }
    this.choice = new int[k][0];
    this.published = snapshotOf(new int[k][0], new int[0], new long[0]);
  }

  /** What one rank's allocator told its listener during the current call. */
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

  /** Replica {@code r}'s copy of {@code t}: the same target with {@value #REPLICA_LABEL}. */
  static Target copyOf(Target t, int r) {
    Map<String, String> labels = new HashMap<>(t.labels());
    labels.put(REPLICA_LABEL, Integer.toString(r));
    Target copy = Target.of(t.job(), t.address(), labels);
    return t.cost() == copy.cost() ? copy : copy.withCost(t.cost());
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
      Target[][] newCopies = new Target[k][];
      List<Map<Target, Integer>> newCopyIndex = new ArrayList<>(k);
      newCopies[0] = newTargets;
      newCopyIndex.add(newIndex);
      for (int r = 1; r < k; r++) {
        Target[] c = new Target[n];
        Map<Target, Integer> ci = new HashMap<>(n * 2);
        for (int i = 0; i < n; i++) {
          int old = fromOld[i];
          Target t = newTargets[i];
          boolean same = old >= 0 && targets[old].sameLabels(t) && targets[old].cost() == t.cost();
          c[i] = same ? copies[r][old] : copyOf(t, r);
          ci.put(c[i], i);
        }
        newCopies[r] = c;
        newCopyIndex.add(ci);
      }
      List<Target> relabeled = new ArrayList<>();
      int[][] newChoice = new int[k][n];
      for (int r = 0; r < k; r++) {
        heard[r].clear();
        ranks[r].setTargets(Arrays.asList(newCopies[r]));
        for (int i = 0; i < n; i++) {
          newChoice[r][i] = fromOld[i] < 0 ? -1 : choice[r][fromOld[i]];
        }
        apply(heard[r].moves, newCopyIndex.get(r), newChoice[r]);
        if (r == 0) {
          relabeled.addAll(heard[0].relabeled);
        }
      }
      Target[] oldTargets = targets;
      targets = newTargets;
      index = newIndex;
      copies = newCopies;
      copyIndex = newCopyIndex;
      choice = newChoice;
      settle(AllocationChange.Cause.SET_TARGETS, before, oldTargets, fromOld, relabeled, start);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void setCollectors(Collection<Collector> given) {
    Objects.requireNonNull(given, "collectors");
    TreeMap<String, Collector> byName = new TreeMap<>();
    for (Collector c : given) {
      Objects.requireNonNull(c, "collectors must not contain null");
      if (byName.put(c.name(), c) != null) {
        throw new IllegalArgumentException("two collectors are named '" + c.name() + "'");
      }
    }
    writing();
    lock.lock();
    try {
      long start = System.nanoTime();
      ReplicatedSnapshot before = published;
      if (!byName.isEmpty()) {
        // An empty set is a blip: the ranks keep their last set, and so does the topology.
        collectors = List.copyOf(byName.values());
        renumber(new Topology(collectors, zoneByNode));
      }
      for (int r = 0; r < k; r++) {
        heard[r].clear();
        ranks[r].setCollectors(given);
        apply(heard[r].moves, copyIndex.get(r), choice[r]);
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
      renumber(new Topology(collectors, zoneByNode));
      for (int r = 0; r < k; r++) {
        heard[r].clear();
        ranks[r].setNodeZones(given);
        apply(heard[r].moves, copyIndex.get(r), choice[r]);
      }
      settle(AllocationChange.Cause.SET_COLLECTORS, before, targets, null, List.of(), start);
    } finally {
      lock.unlock();
    }
  }

  /** Moves the ranks' choices from the old collector ids to {@code next}'s. */
  private void renumber(Topology next) {
    int[] map = new int[topology.size()];
    for (int c = 0; c < map.length; c++) {
      map[c] = next.id(topology.name(c));
    }
    for (int[] ids : choice) {
      for (int i = 0; i < ids.length; i++) {
        if (ids[i] >= 0) {
          ids[i] = map[ids[i]];
        }
      }
    }
    topology = next;
  }

  /** Applies one rank's moves to its choices; {@code byCopy} finds a copy's index. */
  private void apply(List<Move> moves, Map<Target, Integer> byCopy, int[] ids) {
    for (Move m : moves) {
      Integer i = byCopy.get(m.target());
      if (i != null) {
        ids[i] = topology.id(m.to().orElse(null));
      }
    }
  }

  /**
   * Decides the owners, publishes the snapshot and tells the listeners what moved, replica by
   * replica. {@code fromOld} maps each target to its index before the call ({@code null}: the
   * same targets); the targets keep their order from call to call, so the snapshot before is
   * indexed as this allocator was before the call, even when it stood through calls that changed
   * nothing. Owners are compared as collector ids (through a map of the old ids to the new when
   * the collectors changed); names are looked up only for the replicas that moved. When the
   * primary's snapshot stands and no replica changed collector, the published snapshot stands
   * too: a call that changes nothing publishes nothing, as with one replica.
   */
  private void settle(AllocationChange.Cause cause, ReplicatedSnapshot before, Target[] oldTargets,
      int[] fromOld, List<Target> relabeled, long start) {
    boolean sameTargets = fromOld == null || isIdentity(fromOld, oldTargets.length);
    ReplicaPlacement.Result result = placement.place(targets, choice, topology, sameTargets);
    Topology was = before.topology();
    int[] oldToNew = null;
    if (was != topology) {
      oldToNew = new int[was.size()];
      for (int c = 0; c < oldToNew.length; c++) {
        // A collector that left maps below -1: equal to no new id, nor to "none" (-1).
        int now = topology.id(was.name(c));
        oldToNew[c] = now < 0 ? -2 : now;
      }
    }
    ReplicatedSnapshot after;
    if (sameTargets && ranks[0].snapshot() == before.primary()
        && sameOwners(before, result.owners, oldToNew)) {
      after = before;
    } else {
      after = snapshotOf(result.owners, result.counts, result.costs);
    }
    published = after;
    if (listeners.isEmpty()) {
      return;
    }
    List<Move> moves = new ArrayList<>();
    int reassigned = 0;
    if (after != before) {
      for (int i = 0; i < targets.length; i++) {
        int old = fromOld == null ? i : fromOld[i];
        for (int r = 0; r < k; r++) {
          int from = old < 0 ? -1 : before.owner(r, old);
          int to = result.owners[r][i];
          if ((from < 0 || oldToNew == null ? from : oldToNew[from]) == to) {
            continue;
          }
          String fromName = from < 0 ? null : was.name(from);
          moves.add(new Move(targets[i], fromName, to < 0 ? null : topology.name(to), r));
          // A replica that had a collector and now has another, or none, is reassigned (as
          // AllocationChange.reassigned() counts for a target known after the call).
          reassigned += fromName != null ? 1 : 0;
        }
      }
      if (!sameTargets) {
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
    }
    listeners.tell(new AllocationChangeRecord(cause, strategy, before, after, List.copyOf(moves),
        List.copyOf(relabeled), reassigned, System.nanoTime() - start));
  }

  /** Whether {@code owners}, index by index, are {@code before}'s (old ids mapped if given). */
  private boolean sameOwners(ReplicatedSnapshot before, int[][] owners, int[] oldToNew) {
    if (before.size() != targets.length) {
      return false;
    }
    for (int r = 0; r < k; r++) {
      for (int i = 0; i < targets.length; i++) {
        int from = before.owner(r, i);
        if ((from < 0 || oldToNew == null ? from : oldToNew[from]) != owners[r][i]) {
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


  private ReplicatedSnapshot snapshotOf(int[][] owners, int[] counts, long[] costs) {
    return new ReplicatedSnapshot(ranks[0].snapshot(), k, targets, index, owners, topology, counts,
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
