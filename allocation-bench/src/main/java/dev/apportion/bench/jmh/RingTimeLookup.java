package dev.apportion.bench.jmh;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.bench.sim.Cluster;
import java.util.ArrayList;
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
 * Owner lookup: which member owns a target, on our two rings and on the peers, in the same run.
 * The keys are 1024 real targets, looked up in turn (so the branch predictor cannot learn one
 * answer).
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar RingTimeLookup -f 1 -wi 2 -i 3 -w 1s -r 1s -prof gc
 * </pre>
 *
 * <p>Our rings, hash4j and Guava's jump hash look up the target's precomputed 64-bit identity
 * hash; allgood-consistent-hash can only look up a string, so its figure includes hashing the
 * address. That is the cost a user of each library pays per lookup, which is what is compared.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class RingTimeLookup {
  private static final int KEYS = 1024;

  /** Members on the ring. */
  @Param({"100", "1000"})
  public int collectors;

  /** The ring. */
  @Param
  public NamedRing.Type ring;

  private NamedRing instance;
  private Target[] keys;
  private int next;

  /** Builds the ring and picks the keys. */
  @Setup(Level.Trial)
  public void setUp() {
    Cluster cluster = Shapes.cluster(KEYS, collectors);
    List<String> names = new ArrayList<>();
    for (Collector c : cluster.collectors()) {
      names.add(c.name());
    }
    instance = ring.create(names);
    keys = cluster.targets().toArray(new Target[0]);
  }

  /**
   * One lookup.
   *
   * @return the owner's name
   */
  @Benchmark
  public String owner() {
    return instance.owner(keys[next++ & (KEYS - 1)]);
  }
}
