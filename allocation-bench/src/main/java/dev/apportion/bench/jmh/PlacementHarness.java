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
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What every placement benchmark shares: one {@link Placement}, the state each operation starts
 * from, restored untimed before it, and the one timed call that hands the placement a target or
 * collector set.
 *
 * <p><b>Why an invocation-level setup.</b> Each operation is measured from its own starting
 * state: before each one {@link #restore} calls {@link #prepare()} (untimed), which puts that
 * state back and chooses what the operation hands over, so the operation always measures exactly
 * one change, never its inverse. An alternating pattern (remove, then re-add, each timed) would
 * report the mean of a removal and an addition, which differ by orders of magnitude for some
 * strategies. The operations take tens of microseconds or more, far above the cost of JMH's
 * per-invocation timestamps. Because JMH's {@code -prof gc} would count the restoring calls'
 * allocation too, {@link OpCounters} reports the operation's own ({@code allocBytesPerOp}) and
 * the targets it moved ({@code movedPerOp}).
 *
 * <p>The collector removed or replaced is the next one in turn at each operation:
 * {@code least-weighted} depends on history (a re-added collector comes back empty and is never
 * refilled), so removing the same collector again would remove an empty one and measure nothing.
 *
 * <p>The cluster's node-to-zone topology is supplied ({@code setNodeZones}, the joining node in
 * the first zone), as a deployment on a zoned cluster supplies it: {@code per-node}'s fallback
 * pool and the zone-aware contenders place by zone, as they do in production.
 */
abstract class PlacementHarness {
  /** The placement the operation changes; set by the subclass. */
  Placement placement;
  /** The targets the operation hands over, or null when it hands over collectors. */
  List<Target> nextTargets;
  /** The collectors the operation hands over when {@link #nextTargets} is null. */
  List<Collector> nextCollectors;

  /** The placed cluster's collectors (after {@link #buildCluster}). */
  List<Collector> baseCollectors;
  /** The placed cluster's targets (after {@link #buildCluster}). */
  List<Target> baseTargets;
  /** The base targets with every hundredth replaced by a new one (after {@link #buildCluster}). */
  List<Target> replacedTargets;
  /** The cluster's zones, the joining node's included (after {@link #buildCluster}). */
  Map<String, String> zones;

  private Random random;
  private Set<String> names;
  private Collector joined;
  private int turn;
  private OpCounters counters;

  /**
   * Puts back, untimed, the state the next operation starts from, and sets {@link #nextTargets}
   * or {@link #nextCollectors} to what it hands over.
   */
  abstract void prepare();

  /**
   * Restores the starting state before each operation, untimed, and starts counting.
   *
   * @param counters where the operation's moves and allocation are counted
   */
  @Setup(Level.Invocation)
  public void restore(OpCounters counters) {
    prepare();
    this.counters = counters;
    counters.begin();
  }

  /** Counts what the operation moved and allocated. */
  @TearDown(Level.Invocation)
  public void count() {
    counters.end(placement.lastMoved());
  }

  /**
   * The timed operation: hands the placement what {@link #prepare()} chose.
   *
   * @return the placement, so that the work is not dead code
   */
  final Placement handOver() {
    if (nextTargets != null) {
      placement.setTargets(nextTargets);
    } else {
      placement.setCollectors(nextCollectors);
    }
    return placement;
  }

  /**
   * Builds the benchmark cluster ({@link Shapes#cluster}), its zones, the 1% replaced target set
   * and the collector that joins.
   *
   * @param targets targets
   * @param collectors collectors, one a node
   * @param costs whether every target carries a heavy-tailed (Pareto) cost
   */
  final void buildCluster(int targets, int collectors, boolean costs) {
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
    replacedTargets = List.copyOf(next);
  }

  /**
   * The base collectors after a collector change; the collector removed or replaced is the next
   * one in turn.
   *
   * @param change {@code REMOVE_ONE}, {@code ADD_ONE} or {@code REPLACE_ONE}
   * @return a new list
   */
  final List<Collector> collectorsAfter(Change change) {
    List<Collector> next = new ArrayList<>(baseCollectors);
    switch (change) {
      case REMOVE_ONE -> next.remove(turn++ % baseCollectors.size());
      case ADD_ONE -> next.add(joined);
      case REPLACE_ONE -> {
        Collector old = next.remove(turn++ % baseCollectors.size());
        next.add(Collector.of(ClusterGenerator.newPodName(random, names),
            old.node().orElse(null)));
      }
      default -> throw new AssertionError(change);
    }
    return next;
  }

  /**
   * New {@link Target} objects equal to {@code targets}, with the same labels: what a discovery
   * refresh that found nothing new builds.
   *
   * @param targets the targets
   * @return new, equal targets in the same order
   */
  static List<Target> rebuilt(List<Target> targets) {
    List<Target> copies = new ArrayList<>(targets.size());
    for (Target t : targets) {
      copies.add(Target.of(t.job(), t.address(), new HashMap<>(t.labels())).withCost(t.cost()));
    }
    return List.copyOf(copies);
  }
}
