package dev.apportion.bench.jmh;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.bench.sim.Cluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
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
 * The read path: {@code targetsFor(collector, job)}, what every collector asks on every scrape
 * configuration refresh. Alone, and while another thread keeps changing the collector set (a
 * collector leaving and coming back, over and over): readers never block on writers, so the
 * read should cost the same in both.
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar ReadTimeTargetsFor -f 1 -wi 2 -i 3 -w 1s -r 1s -prof gc
 * </pre>
 *
 * <p>With {@code -prof gc}, {@code alone} must show about 0 B/op: a read returns a list that is
 * part of the published snapshot, and allocates nothing. (In the {@code underChurn} group the
 * figure is the writer's and the reader's together, so it is not the read's.)
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class ReadTimeTargetsFor {
  private static final int QUERIES = 1024;

  /** Targets placed. */
  @Param({"100000"})
  public int targets;

  /** Collectors (one per node). */
  @Param({"1000"})
  public int collectors;

  /** The strategy (the read path is the same snapshot for all). */
  @Param({Allocators.CONSISTENT_HASHING})
  public String strategy;

  private Allocator allocator;
  private List<Collector> all;
  private List<Collector> allButOne;
  private String[] queryCollectors;
  private String[] queryJobs;

  /** Places the cluster and draws the queries: existing collector and job pairs. */
  @Setup(Level.Trial)
  public void setUp() {
    Cluster cluster = Shapes.cluster(targets, collectors);
    all = cluster.collectors();
    allButOne = new ArrayList<>(all);
    allButOne.remove(all.size() / 2);
    allocator = Allocators.builder(strategy).warnWhenMovedShareExceeds(1.0).build();
    allocator.setCollectors(all);
    allocator.setTargets(cluster.targets());
    Random random = new Random(Shapes.SEED);
    queryCollectors = new String[QUERIES];
    queryJobs = new String[QUERIES];
    for (int i = 0; i < QUERIES; i++) {
      Target t = cluster.targets().get(random.nextInt(cluster.targets().size()));
      queryCollectors[i] = allocator.snapshot().collectorOf(t).orElseThrow();
      queryJobs[i] = t.job();
    }
  }

  /** A reader's position in the queries. */
  @State(Scope.Thread)
  public static class Cursor {
    int next;
  }

  /**
   * One read, nothing else happening.
   *
   * @param cursor the reader's position
   * @return the targets
   */
  @Benchmark
  public List<Target> alone(Cursor cursor) {
    int i = cursor.next++ & (QUERIES - 1);
    return allocator.targetsFor(queryCollectors[i], queryJobs[i]);
  }

  /**
   * One read, while {@link #writer} changes the collectors.
   *
   * @param cursor the reader's position
   * @return the targets
   */
  @Benchmark
  @Group("underChurn")
  @GroupThreads(1)
  public List<Target> reader(Cursor cursor) {
    int i = cursor.next++ & (QUERIES - 1);
    return allocator.targetsFor(queryCollectors[i], queryJobs[i]);
  }

  /**
   * One collector change: a collector leaves, or comes back, in turn.
   *
   * @param cursor the writer's position
   * @return the allocator
   */
  @Benchmark
  @Group("underChurn")
  @GroupThreads(1)
  public Allocator writer(Cursor cursor) {
    allocator.setCollectors((cursor.next++ & 1) == 0 ? allButOne : all);
    return allocator;
  }
}
