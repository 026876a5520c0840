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
 * What replicas cost a change: the same change as {@link ReassignmentTimeChange} (by default a
 * collector leaving or joining a cluster of 100k targets on 1000 collectors, held by one
 * long-lived allocator that is put back untimed before each operation) with every target on one
 * collector and on two. {@code movedPerOp} counts every replica that moved.
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar ReplicaTimeChange -f 1 -wi 10 -i 5
 * java -jar allocation-bench/target/apportion.jar ReplicaTimeChange -f 1 -wi 10 -i 5 \
 *     -p change=RESET_EQUAL -p contender=CONSISTENT_HASHING
 * </pre>
 *
 * <p>Two replicas take longer to warm up than one (each operation, and the untimed restore
 * before it, run every rank's allocator and the replica placement's long loops): ten warm-up
 * iterations, not three, before the figures settle.
 *
 * <p>With {@code RESET_EQUAL} the operation is a discovery refresh that found nothing new: the
 * same targets as new, equal objects.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 10, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class ReplicaTimeChange extends PlacementHarness {
  /** Targets placed. */
  @Param({"100000"})
  public int targets;

  /** Collectors (one per node). */
  @Param({"1000"})
  public int collectors;

  /** Who places them. */
  @Param({"CONSISTENT_HASHING", "RENDEZVOUS"})
  public Contender contender;

  /** The change. */
  @Param({"REMOVE_ONE", "ADD_ONE"})
  public Change change;

  /** Replicas per target. */
  @Param({"1", "2"})
  public int replicas;

  private List<Target> changedTargets;

  /** Builds the cluster and places it. */
  @Setup(Level.Trial)
  public void setUp() {
    buildCluster(targets, collectors, false);
    changedTargets = change == Change.RESET_EQUAL ? rebuilt(baseTargets) : replacedTargets;
    placement = contender.create(replicas);
    placement.setNodeZones(zones);
    placement.setCollectors(baseCollectors);
    placement.setTargets(baseTargets);
  }

  /** Puts the base set back, as {@link ReassignmentTimeChange} does. */
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
