package dev.apportion.bench.jmh;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.TargetInterner;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.Blackhole;

/**
 * A discovery refresh end to end, as an embedding collector runs it every 5-30 s: the label sets
 * its service discovery has just decoded, {@code targets} of them, become {@link Target}s and are
 * handed to an allocator that holds the previous refresh's targets placed on {@code collectors}
 * collectors; the call ends when the new snapshot is published. Beside it, in the same run, the
 * floor every refresh pays: one pass over the same maps that touches every name and value once
 * (it sums their lengths) and does nothing else.
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar RefreshTimeEndToEnd
 * java -jar allocation-bench/target/apportion.jar RefreshTimeEndToEnd -p strategy=per-node
 * </pre>
 *
 * <p><b>The input is what a refresh really reads.</b> Each label set is a new {@link HashMap} of
 * the thirteen labels Kubernetes pod discovery plus a typical relabeling gives a pod ({@link
 * PodLabels}, the same maps as the refresh workloads of the comparison with the upstream
 * allocator: {@code namespace}, {@code pod}, {@code container}, {@code app}, eight {@code
 * __meta_kubernetes_pod_*} labels and {@code __address__}), and before every operation all of
 * them are copied anew, untimed, every name and value a new {@code String}: nothing is shared
 * with the targets the allocator or the interner holds, and no value's hash is cached, exactly
 * as after a real decode. 100,000 distinct maps are about 150 MB of small objects, far beyond
 * any cache. Each operation is one refresh; the reported time and the {@code
 * allocBytesPerTarget} counter are per target ({@code @OperationsPerInvocation}), so they compare
 * directly with {@link #floor}.
 *
 * <p>Benchmarks:
 *
 * <ul>
 *   <li>{@link #floor}: sums the lengths of every name and value of the fresh maps;
 *   <li>{@link #build}: {@code Target.of} for every fresh map (every target new);
 *   <li>{@link #unchanged} and {@link #churn}: the refresh itself, through the {@link Path} given
 *       (the same maps again, or a set in which 1% of the pods were replaced; the churn
 *       alternates between the two sets, so that every operation replaces 1%).
 * </ul>
 *
 * <p>Allocation: JMH's {@code -prof gc} divides an iteration's allocation by its operations, the
 * untimed copy of the input included (about 1.5 KB per target); {@link OpCounters}' {@code
 * allocBytesPerTarget} is the operation's own. Default JVM flags (G1, default heap); young
 * collections that fall inside an operation are part of its time; a forced GC precedes each
 * operation, untimed, as in the comparison with the upstream allocator, so that the input just
 * built is not what the operation's first young collection has to copy.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 4)
@Measurement(iterations = 10)
@Fork(1)
public class RefreshTimeEndToEnd {
  /** Targets per refresh; the operation count of one invocation. */
  static final int TARGETS = 100_000;

  /** How the label sets become targets. */
  public enum Path {
    /** {@code Target.of(job, labels.get("__address__"), labels)} for every map. */
    TARGET_OF,
    /** A {@link TargetInterner} kept from refresh to refresh, {@code endRefresh()} after. */
    INTERNER
  }

  /** The allocator's strategy. */
  @Param({"consistent-hashing", "per-node"})
  public String strategy;

  /** How targets are built from the label sets. */
  @Param
  public Path path;

  /** Targets per refresh (named so that {@link OpCounters} reports bytes per target). */
  @Param({"100000"})
  public int targets;

  private List<Map<String, String>> base;
  private List<Map<String, String>> churned;
  private Allocator allocator;
  private TargetInterner interner;
  private int operation;
  private boolean alternate;
  /** This operation's input: fresh copies, built untimed. */
  private List<Map<String, String>> input;
  private OpCounters counters;

  /**
   * Builds the label sets and the allocator holding the first refresh's targets.
   *
   * @param params which benchmark runs: only {@link #churn} alternates between the sets
   */
  @Setup(Level.Trial)
  public void setUp(BenchmarkParams params) {
    alternate = params.getBenchmark().endsWith(".churn");
    base = new ArrayList<>(targets);
    for (int i = 0; i < targets; i++) {
      base.add(PodLabels.of(i, i));
    }
    churned = new ArrayList<>(base);
    for (int i = 0; i < targets; i += 100) {
      churned.set(i, PodLabels.of(i, targets + i));
    }
    List<Collector> collectors = new ArrayList<>(1000);
    for (int j = 0; j < 1000; j++) {
      collectors.add(Collector.of("collector-" + j, "node-" + j));
    }
    allocator = Allocators.builder(strategy).build();
    allocator.setCollectors(collectors);
    interner = new TargetInterner();
    allocator.setTargets(build(PodLabels.fresh(base)));
    operation = 0;
  }

  /**
   * Copies the next operation's input anew, untimed.
   *
   * @param counters where the operation's own allocation is counted
   */
  @Setup(Level.Iteration)
  public void next(OpCounters counters) {
    // The churn alternates between the churned and the base set: each operation replaces 1%.
    input = PodLabels.fresh(alternate && operation++ % 2 == 0 ? churned : base);
    // As in the comparison with the upstream allocator: a forced GC before the timed call, so
    // that the young collection that would copy the 150 MB of input just built (a cost of
    // decoding it, not of the refresh) does not land in the first allocation the refresh makes.
    System.gc();
    this.counters = counters;
    counters.begin();
  }

  /** Ends the operation's count. */
  @TearDown(Level.Iteration)
  public void done() {
    counters.end(0);
    input = null;
  }

  private List<Target> build(List<Map<String, String>> sets) {
    List<Target> list = new ArrayList<>(sets.size());
    if (path == Path.INTERNER) {
      for (Map<String, String> m : sets) {
        list.add(interner.intern(PodLabels.JOB, m.get(PodLabels.ADDRESS), m));
      }
      interner.endRefresh();
    } else {
      for (Map<String, String> m : sets) {
        list.add(Target.of(PodLabels.JOB, m.get(PodLabels.ADDRESS), m));
      }
    }
    return list;
  }

  /**
   * The floor: one pass over the fresh maps, summing the lengths of every name and value.
   *
   * @return the sum
   */
  @Benchmark
  @OperationsPerInvocation(TARGETS)
  public long floor() {
    long sum = 0;
    for (Map<String, String> m : input) {
      for (Map.Entry<String, String> e : m.entrySet()) {
        sum += e.getKey().length() + e.getValue().length();
      }
    }
    return sum;
  }

  /**
   * Every map to a new target with {@code Target.of}, what the targets keep included.
   *
   * @param bh keeps the targets
   */
  @Benchmark
  @OperationsPerInvocation(TARGETS)
  public void build(Blackhole bh) {
    List<Target> list = new ArrayList<>(input.size());
    for (Map<String, String> m : input) {
      list.add(Target.of(PodLabels.JOB, m.get(PodLabels.ADDRESS), m));
    }
    bh.consume(list);
  }

  /**
   * A refresh in which nothing changed: the same label sets, freshly decoded, to a snapshot.
   * Only the base set is used, so the allocator ends as it started.
   */
  @Benchmark
  @OperationsPerInvocation(TARGETS)
  public void unchanged() {
    allocator.setTargets(build(input));
  }

  /** A refresh that replaces 1% of the pods (alternately those and the originals). */
  @Benchmark
  @OperationsPerInvocation(TARGETS)
  public void churn() {
    allocator.setTargets(build(input));
  }
}
