package dev.apportion.bench.jmh;

import dev.apportion.allocation.Target;
import dev.apportion.bench.Placement;
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
 * The hot reassignment path: one change ({@link Change}) to a placed cluster (by default 100k
 * targets on 1000 collectors) held by one long-lived allocator, for each strategy and for the
 * do-it-yourself baseline on each peer ring. Before each operation the base collector or target
 * set is put back, untimed ({@link PlacementHarness} says why).
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar ReassignmentTimeChange -f 1 -wi 3 -i 5
 * </pre>
 *
 * <p>For {@code RESET_EQUAL} nothing moves, and {@code allocBytesPerTarget} is what an unchanged
 * discovery refresh costs the allocator in bytes a target.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class ReassignmentTimeChange extends PlacementHarness {
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

  /** Whether every target carries a heavy-tailed cost (the simulator's Pareto costs). */
  @Param({"false"})
  public boolean costs;

  private List<Target> changedTargets;

  /** Builds the cluster and places it. */
  @Setup(Level.Trial)
  public void setUp() {
    buildCluster(targets, collectors, costs);
    changedTargets = change == Change.RESET_EQUAL ? rebuilt(baseTargets) : replacedTargets;
    placement = contender.create();
    placement.setNodeZones(zones);
    placement.setCollectors(baseCollectors);
    placement.setTargets(baseTargets);
  }

  /**
   * Puts the base set back. For a target update that is a {@code setTargets} of the base
   * targets: after {@code RESET_EQUAL} it changes nothing, but it makes sure the operation always
   * hands the allocator objects other than the ones it holds, whichever of two equal targets it
   * keeps.
   */
  @Override
  void prepare() {
    if (change.ofTargets()) {
      placement.setTargets(baseTargets);
      nextTargets = changedTargets;
    } else {
      placement.setCollectors(baseCollectors);
      nextCollectors = collectorsAfter(change);
    }
  }

  /**
   * Applies the change.
   *
   * @return the placement, so that the work is not dead code
   */
  @Benchmark
  public Placement apply() {
    return handOver();
  }
}
