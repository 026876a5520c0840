package dev.apportion.bench.jmh;

import dev.apportion.allocation.Target;
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
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Building a target, <b>cache-resident</b>: {@code Target.of(job, address, labels)} on 1024
 * inputs that stay in the CPU's caches. It isolates the CPU work of one call; it is <em>not</em>
 * what a refresh costs, which reads 100,000 distinct maps decoded anew: {@link
 * RefreshTimeEndToEnd} measures that, beside the floor of reading them. The labels are those of
 * the refresh workloads ({@link PodLabels}): a realistic Prometheus pod target's thirteen, four
 * identity labels, eight {@code __meta_kubernetes_*} discovery labels (the pod's node among
 * them) and {@code __address__}. The inputs are 1024 different pods, built once and used in
 * turn.
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar TargetTimeOf -f 1 -wi 2 -i 3 -w 1s -r 1s -prof gc
 * </pre>
 *
 * <p>Two label inputs ({@link Source}): a {@link HashMap}, as a discovery client builds it, and
 * an existing target's {@link Target#labels()}, the re-label path (a target rebuilt from
 * another). With {@code -prof gc}, {@code gc.alloc.rate.norm} is the bytes one call allocates,
 * the new target and everything it keeps included; the input is built beforehand and not counted.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class TargetTimeOf {
  private static final int INPUTS = 1024;

  /** Where the labels come from. */
  public enum Source {
    /** A {@link HashMap} of the thirteen labels. */
    HASH_MAP,
    /** The {@link Target#labels()} of a target built from that map. */
    TARGET_LABELS
  }

  /** The label input. */
  @Param
  public Source source;

  private String[] jobs;
  private String[] addresses;
  private List<Map<String, String>> labels;
  private int next;

  /** Builds the inputs. */
  @Setup(Level.Trial)
  public void setUp() {
    jobs = new String[INPUTS];
    addresses = new String[INPUTS];
    labels = new ArrayList<>(INPUTS);
    for (int i = 0; i < INPUTS; i++) {
      Map<String, String> map = PodLabels.of(i, i);
      jobs[i] = PodLabels.JOB;
      addresses[i] = map.get(PodLabels.ADDRESS);
      labels.add(source == Source.HASH_MAP ? map
          : Target.of(jobs[i], addresses[i], map).labels());
    }
  }

  /**
   * Builds one target.
   *
   * @return the target
   */
  @Benchmark
  public Target of() {
    int i = next++ & (INPUTS - 1);
    return Target.of(jobs[i], addresses[i], labels.get(i));
  }
}
