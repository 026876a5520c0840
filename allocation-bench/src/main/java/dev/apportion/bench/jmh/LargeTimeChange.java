package dev.apportion.bench.jmh;

import dev.apportion.allocation.Collector;
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
 * The large shape: 1,000,000 targets on 10,000 collectors, for the two calls whose cost grows
 * with the whole target set rather than with what changes:
 *
 * <ul>
 *   <li>{@code RESET_EQUAL}: the allocator holds the placed cluster and is given the same targets
 *       again, as newly built {@link Target} objects equal to the placed ones with the same
 *       labels: what every embedding collector does on every discovery refresh. Nothing moves;
 *       {@code allocBytesPerTarget} should be at most 1;
 *   <li>{@code PLACE_FULL}: a new allocator with its collectors set places every target.
 * </ul>
 *
 * <p>It needs a large heap and time (building the cluster alone takes seconds), so its warmup and
 * measurement are short, and it needs about 8 GB of heap: the fork gets {@code -Xmx8g} from the
 * annotation below, and the command passes it explicitly too ({@code -jvmArgs}); run in-process
 * ({@code -f 0}) only from a JVM started with {@code -Xmx8g}.
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar LargeTimeChange -f 1 -jvmArgs -Xmx8g -wi 1 -i 3 -w 5s -r 5s
 * </pre>
 *
 * <p>The default parameters are the large shape; {@code -p targets=100000 -p collectors=1000}
 * runs it at the shape of {@link ReassignmentTimeChange}, and {@code -p contender=...} with
 * another strategy. Each operation starts from its own state, restored untimed before it
 * ({@link PlacementHarness}): {@code RESET_EQUAL} re-sets the base targets, so that the operation
 * always hands over objects other than the ones the allocator holds; {@code PLACE_FULL} builds
 * the next allocator and sets its collectors.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1, time = 5)
@Measurement(iterations = 3, time = 5)
@Fork(value = 1, jvmArgsAppend = "-Xmx8g")
public class LargeTimeChange extends PlacementHarness {
  /** The operation measured. */
  public enum Operation {
    /** The placed targets again, newly built: equal, with the same labels, distinct objects. */
    RESET_EQUAL,
    /** Every target, on a new allocator that has its collectors and no target yet. */
    PLACE_FULL
  }

  /** Targets. */
  @Param({"1000000"})
  public int targets;

  /** Collectors (one per node). */
  @Param({"10000"})
  public int collectors;

  /** Who places them. */
  @Param({"CONSISTENT_HASHING"})
  public Contender contender;

  /** The operation. */
  @Param
  public Operation operation;

  private List<Collector> collectorList;
  private List<Target> targetList;
  private List<Target> equalTargets;

  /** Builds the cluster (and, for {@code RESET_EQUAL}, its copy), and places it. */
  @Setup(Level.Trial)
  public void setUp() {
    Cluster cluster = Shapes.cluster(targets, collectors);
    collectorList = cluster.collectors();
    targetList = cluster.targets();
    if (operation == Operation.RESET_EQUAL) {
      equalTargets = rebuilt(targetList);
      placement = contender.create();
      placement.setCollectors(collectorList);
      placement.setTargets(targetList);
    }
  }

  @Override
  void prepare() {
    if (operation == Operation.RESET_EQUAL) {
      placement.setTargets(targetList);
      nextTargets = equalTargets;
    } else {
      placement = null; // the previous allocator may be collected while the next is built
      placement = contender.create();
      placement.setCollectors(collectorList);
      nextTargets = targetList;
    }
  }

  /**
   * Sets the targets: the equal copy, or every target on the new allocator.
   *
   * @return the placement, so that the work is not dead code
   */
  @Benchmark
  public Placement apply() {
    return handOver();
  }
}
