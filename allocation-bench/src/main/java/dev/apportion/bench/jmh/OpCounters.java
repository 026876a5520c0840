package dev.apportion.bench.jmh;

import java.lang.management.ManagementFactory;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Per-operation figures JMH does not give for benchmarks that restore their state before each
 * operation: how many targets the operation moved, and how many bytes it allocated. JMH's
 * {@code -prof gc} divides all the allocation of an iteration by its operations, the restoring
 * {@code @Setup(Level.Invocation)} included; these counters take the thread's allocated bytes
 * right before and right after the operation only, so they measure the operation alone.
 *
 * <p>Reported as JMH secondary results ({@code movedPerOp}, {@code allocBytesPerOp}, and
 * {@code allocBytesPerTarget}: {@code allocBytesPerOp} divided by the benchmark's {@code targets}
 * parameter, when it has one): the mean per operation over the measurement iterations. JMH adds up an {@code EVENTS} counter over the
 * measurement iterations, so each iteration reports its own mean divided by the number of
 * measurement iterations; the per-iteration lines JMH prints are therefore that fraction, and
 * the final figure is the mean of the iterations' means.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class OpCounters {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** Mean targets moved per operation in this iteration. */
  public double movedPerOp;
  /** Mean bytes allocated per operation in this iteration. */
  public double allocBytesPerOp;
  /** {@link #allocBytesPerOp} per target of the benchmark's {@code targets} parameter. */
  public double allocBytesPerTarget;

  private int iterations = 1;
  private int targets;
  private long ops;
  private long moved;
  private long bytes;
  private long start;

  /**
   * Learns how many measurement iterations will be added up, and how many targets the
   * benchmark works on (its {@code targets} parameter; without one, no per-target figure).
   *
   * @param params the run's parameters
   */
  @Setup(Level.Trial)
  public void init(BenchmarkParams params) {
    iterations = Math.max(1, params.getMeasurement().getCount());
    String t = params.getParam("targets");
    targets = t == null ? 0 : Integer.parseInt(t);
  }

  /** Clears the counters at the start of each iteration. */
  @Setup(Level.Iteration)
  public void clear() {
    ops = 0;
    moved = 0;
    bytes = 0;
    movedPerOp = 0;
    allocBytesPerOp = 0;
    allocBytesPerTarget = 0;
  }

  /** Marks the start of an operation: call last in the invocation's setup. */
  void begin() {
    start = THREADS.getCurrentThreadAllocatedBytes();
  }

  /**
   * Marks the end of an operation: call first in the invocation's teardown.
   *
   * @param movedByOp targets the operation moved
   */
  void end(int movedByOp) {
    bytes += THREADS.getCurrentThreadAllocatedBytes() - start;
    moved += movedByOp;
    ops++;
    movedPerOp = (double) moved / ops / iterations;
    allocBytesPerOp = (double) bytes / ops / iterations;
    allocBytesPerTarget = targets > 0 ? allocBytesPerOp / targets : 0;
  }

  /** Bytes the current thread has allocated so far. */
  static long allocatedBytes() {
    return THREADS.getCurrentThreadAllocatedBytes();
  }
}
