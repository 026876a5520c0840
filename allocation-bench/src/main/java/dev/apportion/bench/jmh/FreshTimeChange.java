package dev.apportion.bench.jmh;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.bench.Placement;
import dev.apportion.bench.sim.Cluster;
import dev.apportion.bench.sim.ClusterGenerator;
import java.util.ArrayList;
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
 * One change to a freshly placed allocator, as a user's process makes it: a new allocator places
 * 100k targets on 1000 collectors (untimed), then one call is timed. Unlike
 * {@link ReassignmentTimeChange}, which restores one long-lived allocator before each operation,
 * the measured call is the first change the allocator sees after its full placement, so every
 * scratch array it sizes lazily and every young copy of the state it has just built is counted.
 * This is the harness of issue 24 ("Every change costs what it changes"): the sets are built
 * anew (equal targets as new objects), one iteration is one call (median of the iterations).
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar FreshTimeChange -f 1 -wi 2 -i 7
 * </pre>
 *
 * <ul>
 *   <li>{@code REPLACE_TARGETS_1PCT}: a new set, equal to the placed one but for 1% of the
 *       targets, replaced by new ones;
 *   <li>{@code RESET_EQUAL}: a new set equal to the placed one;
 *   <li>{@code REMOVE_ONE}, {@code ADD_ONE}: a collector leaves, or one joins on a new node.
 * </ul>
 *
 * <p>The cluster's node-to-zone topology is supplied ({@code setNodeZones}, the joined collector's
 * node in the first zone), as a deployment on a zoned cluster supplies it: {@code per-node}'s
 * fallback pool and the zone-aware contenders place by zone, as they do in production (before
 * 2026-12-02 no topology was given, so their pools and partitions were one cluster-wide group).
 *
 * <p>The call's own allocation and moves are reported by {@link OpCounters}
 * ({@code allocBytesPerOp}); {@code -prof gc} would count the untimed placement too.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 7)
@Fork(1)
public class FreshTimeChange {
  /** The change measured. */
  public enum Change {
    /** 1% of the targets are replaced by new ones, in a set built anew. */
    REPLACE_TARGETS_1PCT,
    /** The same targets again, built anew. */
    RESET_EQUAL,
    /** A collector leaves. */
    REMOVE_ONE,
    /** A collector joins, on a new node. */
    ADD_ONE;

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
  @Param({"CONSISTENT_HASHING", "RENDEZVOUS", "LEAST_WEIGHTED", "PER_NODE"})
  public Contender contender;

  /** The change. */
  @Param
  public Change change;

  private List<Collector> baseCollectors;
  private List<Target> baseTargets;
  private List<Collector> changedCollectors;
  private List<Target> changedTargets;
  private int iteration;
  private Placement placement;
  private Map<String, String> zones;
  private OpCounters counters;

  /** Builds the cluster and the changed sets. */
  @Setup(Level.Trial)
  public void setUp() {
    Cluster cluster = Shapes.cluster(targets, collectors);
    baseCollectors = cluster.collectors();
    baseTargets = cluster.targets();
    zones = Shapes.zonesWithJoined(cluster);
    List<Target> next = new ArrayList<>(baseTargets);
    for (int i = 0; i < next.size(); i += 100) {
      Target old = next.get(i);
      next.set(i, Target.of(old.job(), "rescheduled-" + i + ":8080", old.labels())
          .withCost(old.cost()));
    }
    changedTargets = next;
  }

  /**
   * A fresh allocator with the base sets placed; the change's sets built anew, untimed.
   *
   * @param counters where the call's allocation is counted
   */
  @Setup(Level.Iteration)
  public void place(OpCounters counters) {
    placement = null;
    placement = contender.create();
    placement.setNodeZones(zones);
    placement.setCollectors(baseCollectors);
    placement.setTargets(baseTargets);
    if (change.ofTargets()) {
      changedTargets = ReassignmentTimeChange.rebuilt(
          change == Change.RESET_EQUAL ? baseTargets : changedTargets);
    } else {
      List<Collector> c = new ArrayList<>(baseCollectors);
      if (change == Change.REMOVE_ONE) {
        c.remove(iteration++ % c.size());
      } else {
        Set<String> names = new HashSet<>();
        for (Collector x : baseCollectors) {
          names.add(x.name());
        }
        c.add(Collector.of(ClusterGenerator.newPodName(new Random(Shapes.SEED), names),
            Shapes.JOINED_NODE));
      }
      changedCollectors = c;
    }
    System.gc();
    this.counters = counters;
    counters.begin();
  }

  /** Counts what the call moved and allocated. */
  @TearDown(Level.Iteration)
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
