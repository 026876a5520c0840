package dev.apportion.bench.jmh;

import dev.apportion.bench.Placement;
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
 * One change to a freshly placed allocator, as a user's process makes it: a new allocator places
 * 100k targets on 1000 collectors (untimed), then one call is timed. Unlike
 * {@link ReassignmentTimeChange}, which restores one long-lived allocator before each operation,
 * the measured call is the first change the allocator sees after its full placement, so every
 * scratch array it sizes lazily and every young copy of the state it has just built is counted.
 * The sets are built anew (equal targets as new objects); one iteration is one call, and the
 * figure is the median of the iterations.
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar FreshTimeChange -f 1 -wi 2 -i 7
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 7)
@Fork(1)
public class FreshTimeChange extends PlacementHarness {
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
  @Param({"REPLACE_TARGETS_1PCT", "RESET_EQUAL", "REMOVE_ONE", "ADD_ONE"})
  public Change change;

  /** Builds the cluster and the changed sets. */
  @Setup(Level.Trial)
  public void setUp() {
    buildCluster(targets, collectors, false);
  }

  /** A fresh allocator with the base sets placed; the change's sets built anew. */
  @Override
  void prepare() {
    placement = null; // the previous allocator may be collected while the next is built
    placement = contender.create();
    placement.setNodeZones(zones);
    placement.setCollectors(baseCollectors);
    placement.setTargets(baseTargets);
    if (change.ofTargets()) {
      nextTargets = rebuilt(change == Change.RESET_EQUAL ? baseTargets : replacedTargets);
    } else {
      nextCollectors = collectorsAfter(change);
    }
    System.gc();
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
