package dev.apportion.bench.jmh;

import dev.apportion.allocation.Target;
import dev.apportion.bench.Placement;
import dev.apportion.bench.sim.Cluster;
import java.util.List;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Full placement: {@code setTargets} of every target on an allocator that has its collectors and
 * no target yet. The shapes of the OpenTelemetry target allocator's own benchmark (1k, 10k and
 * 100k targets on 100 and 1000 collectors), for each strategy and for the do-it-yourself
 * baseline on each peer ring.
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar PlacementTimeFull -f 1 -wi 2 -i 3 -w 1s -r 2s
 * </pre>
 *
 * <p>Placing the same targets twice is a no-op, so each operation starts from the empty state:
 * every target is removed ({@code setTargets} of an empty list) before it, untimed
 * ({@link PlacementHarness}). The targets and the collectors are built once per trial (a
 * {@link Target} hashes its identity when it is built, which is not placement work).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class PlacementTimeFull extends PlacementHarness {
  /** Targets placed. */
  @Param({"1000", "10000", "100000"})
  public int targets;

  /** Collectors (one per node). */
  @Param({"100", "1000"})
  public int collectors;

  /** Who places them. */
  @Param
  public Contender contender;

  private List<Target> targetList;

  /** Builds the cluster and the placement, with its collectors. */
  @Setup(Level.Trial)
  public void setUp() {
    Cluster cluster = Shapes.cluster(targets, collectors);
    targetList = cluster.targets();
    placement = contender.create();
    placement.setCollectors(cluster.collectors());
  }

  /** Removes every target, so the operation places them all again. */
  @Override
  void prepare() {
    placement.setTargets(List.of());
    nextTargets = targetList;
  }

  /**
   * Places every target.
   *
   * @return the placement, so that the work is not dead code
   */
  @Benchmark
  public Placement setTargets() {
    return handOver();
  }
}
