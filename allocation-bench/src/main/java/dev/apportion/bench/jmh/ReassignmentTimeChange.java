package dev.apportion.bench.jmh;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.bench.Placement;
import dev.apportion.bench.sim.Cluster;
import dev.apportion.bench.sim.ClusterGenerator;
import dev.apportion.bench.sim.CostInputs;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The hot reassignment path: one change to a placed cluster (by default 100k targets on 1000
 * collectors), for each strategy and for the do-it-yourself baseline on each peer ring.
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar ReassignmentTimeChange -f 1 -wi 2 -i 3 -w 1s -r 2s
 * </pre>
 *
 * <ul>
 *   <li>{@code REMOVE_ONE}: a collector leaves;
 *   <li>{@code ADD_ONE}: a collector joins (on a new node);
 *   <li>{@code REPLACE_ONE}: a rolling-restart step: a pod leaves and a pod with a new name
 *       arrives on the same node, in one collector update;
 *   <li>{@code REPLACE_TARGETS_1PCT}: 1% of the targets are replaced by new ones (pods
 *       rescheduled), in one target update;
 *   <li>{@code RESET_EQUAL}: the same target set again, as newly built {@link Target} objects
 *       equal to the placed ones with the same labels: the call every embedding collector makes
 *       on every discovery refresh, when nothing changed. Nothing moves, and the goal is at most
 *       one byte allocated per target ({@code allocBytesPerTarget}).
 * </ul>
 *
 * <p>The cluster's node-to-zone topology is supplied ({@code setNodeZones}, the new node in the
 * first zone), as a deployment on a zoned cluster supplies it: {@code per-node}'s fallback pool
 * and the zone-aware contenders place by zone, as they do in production (before 2026-12-02 no
 * topology was given, so their pools and partitions were one cluster-wide group).
 *
 * <p><b>Why an invocation-level setup.</b> Each change is measured from the placed state: before
 * each operation {@link #restore} puts the base collector and target sets back (untimed), so the
 * operation always measures exactly that change, never its inverse. An alternating pattern
 * (remove, then re-add, each timed) would report the mean of a removal and an addition, which
 * differ by orders of magnitude for some strategies. The collector removed or replaced is the
 * next one in turn at each operation: {@code least-weighted} depends on history (a re-added
 * collector comes back empty and is never refilled), so removing the same collector again would
 * remove an empty one and measure nothing. The operations take tens of microseconds or more,
 * far above the cost of JMH's per-invocation timestamps. Targets moved
 * and the operation's own allocation are reported by {@link OpCounters} ({@code movedPerOp},
 * {@code allocBytesPerOp}); {@code -prof gc} would add the restoring call's allocation.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class ReassignmentTimeChange {
  /** The change measured. */
  public enum Change {
    /** A collector leaves. */
    REMOVE_ONE,
    /** A collector joins, on a new node. */
    ADD_ONE,
    /** A pod is replaced by one with a new name on the same node. */
    REPLACE_ONE,
    /** 1% of the targets are replaced by new ones. */
    REPLACE_TARGETS_1PCT,
    /** The same targets again, newly built: equal, with the same labels, distinct objects. */
    RESET_EQUAL;

    /** Whether the change is a target update (else a collector update). */
    boolean ofTargets() {
      return this == REPLACE_TARGETS_1PCT || this == RESET_EQUAL;
    }
  }

  /** Targets placed. */
  @Param({"100000"})
  public int targets;

  /** Collectors (one per node). */
  @Param({"1000"})
  public int collectors;

  /** Who places them. */
  @Param
  public Contender contender;

  /** The change. */
  @Param
  public Change change;

  /**
   * Whether every target carries a heavy-tailed cost (the simulator's Pareto costs): the
   * dense-engine speed goals must hold then too. Off by default.
   */
  @Param({"false"})
  public boolean costs;

  private List<Collector> baseCollectors;
  private List<Target> baseTargets;
  private List<Collector> changedCollectors;
  private List<Target> changedTargets;
  private Collector joined;
  private Random random;
  private Set<String> names;
  private int invocation;
  private Placement placement;
  private Map<String, String> zones;
  private OpCounters counters;

  /** Builds the cluster and the placement, and places the cluster. */
  @Setup(Level.Trial)
  public void setUp() {
    Cluster cluster = Shapes.cluster(targets, collectors);
    if (costs) {
      cluster = CostInputs.pareto(cluster, Shapes.SEED);
    }
    baseCollectors = cluster.collectors();
    baseTargets = cluster.targets();
    zones = Shapes.zonesWithJoined(cluster);
    random = new Random(Shapes.SEED);
    names = new HashSet<>();
    for (Collector c : baseCollectors) {
      names.add(c.name());
    }
    joined = Collector.of(ClusterGenerator.newPodName(random, names), Shapes.JOINED_NODE);
    List<Target> next = new ArrayList<>(baseTargets);
    for (int i = 0; i < next.size(); i += 100) {
      Target old = next.get(i);
      next.set(i, Target.of(old.job(), "rescheduled-" + i + ":8080", old.labels())
          .withCost(old.cost()));
    }
    changedTargets = change == Change.RESET_EQUAL ? rebuilt(baseTargets) : List.copyOf(next);
    placement = contender.create();
    placement.setNodeZones(zones);
    placement.setCollectors(baseCollectors);
    placement.setTargets(baseTargets);
  }

  /**
   * New {@link Target} objects equal to {@code targets}, with the same labels: what a discovery
   * refresh that found nothing new builds.
   */
  static List<Target> rebuilt(List<Target> targets) {
    List<Target> copies = new ArrayList<>(targets.size());
    for (Target t : targets) {
      copies.add(Target.of(t.job(), t.address(), new HashMap<>(t.labels())).withCost(t.cost()));
    }
    return List.copyOf(copies);
  }

  /** The collector set of the next operation: its victim is the next collector in turn. */
  private List<Collector> nextCollectors() {
    List<Collector> next = new ArrayList<>(baseCollectors);
    switch (change) {
      case REMOVE_ONE -> next.remove(invocation++ % baseCollectors.size());
      case ADD_ONE -> next.add(joined);
      case REPLACE_ONE -> {
        Collector old = next.remove(invocation++ % baseCollectors.size());
        next.add(Collector.of(ClusterGenerator.newPodName(random, names),
            old.node().orElse(null)));
      }
      default -> throw new AssertionError(change);
    }
    return next;
  }

  /**
   * Puts the base state back, untimed. For a target update that is a {@code setTargets} of the
   * base targets: after {@code RESET_EQUAL} it changes nothing, but it makes sure the operation
   * always hands the allocator objects other than the ones it holds, whichever of two equal
   * targets it keeps.
   *
   * @param counters where the operation's allocation is counted
   */
  @Setup(Level.Invocation)
  public void restore(OpCounters counters) {
    if (change.ofTargets()) {
      placement.setTargets(baseTargets);
    } else {
      placement.setCollectors(baseCollectors);
      changedCollectors = nextCollectors();
    }
    this.counters = counters;
    counters.begin();
  }

  /** Counts what the operation moved and allocated. */
  @TearDown(Level.Invocation)
  public void count() {
    counters.end(placement.lastMoved());
  }

  /**
   * Applies the change.
   *
   * @return the placement, so that the work is not dead code
   */
  @Benchmark
  public Placement apply() {
    if (change.ofTargets()) {
      placement.setTargets(changedTargets);
    } else {
      placement.setCollectors(changedCollectors);
    }
    return placement;
  }
}
