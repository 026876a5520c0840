package dev.apportion.bench.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Target;
import dev.apportion.bench.sim.Cluster;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The read path allocates nothing: counted in bytes with the JVM's per-thread allocation counter
 * around many {@code targetsFor} calls. A count, not a time, so it holds on any machine; the JMH
 * figure is {@code ReadTimeTargetsFor.alone} with {@code -prof gc}.
 */
class ReadPathAllocationTest {
  private static final int CALLS = 200_000;

  @Test
  void targetsForAllocatesNothing() {
    Cluster cluster = Shapes.cluster(5_000, 50);
    for (String strategy : Allocators.strategies()) {
      Allocator allocator = Allocators.builder(strategy).build();
      allocator.setCollectors(cluster.collectors());
      allocator.setTargets(cluster.targets());
      int queries = 256;
      String[] collectors = new String[queries];
      String[] jobs = new String[queries];
      for (int i = 0; i < queries; i++) {
        Target t = cluster.targets().get(i * 17);
        collectors[i] = allocator.snapshot().collectorOf(t).orElseThrow();
        jobs[i] = t.job();
      }
      long sink = read(allocator, collectors, jobs);
      long before = OpCounters.allocatedBytes();
      sink += read(allocator, collectors, jobs);
      long allocated = OpCounters.allocatedBytes() - before;
      assertTrue(sink > 0, "the reads found targets");
      // One allocation per call would be at least 16 bytes * CALLS = 3.2 MB; the counter itself
      // may account a few bytes, so allow a small constant, far below one byte per call.
      assertTrue(allocated < 1024,
          strategy + ": " + CALLS + " targetsFor calls allocated " + allocated + " bytes");
    }
  }

  private static long read(Allocator allocator, String[] collectors, String[] jobs) {
    long found = 0;
    for (int i = 0; i < CALLS; i++) {
      int q = i & (collectors.length - 1);
      List<Target> l = allocator.targetsFor(collectors[q], jobs[q]);
      found += l.size();
    }
    return found;
  }

  @Test
  void theCounterSeesAnAllocation() {
    long before = OpCounters.allocatedBytes();
    Object[] array = new Object[100_000];
    long allocated = OpCounters.allocatedBytes() - before;
    assertEquals(100_000, array.length);
    assertTrue(allocated >= 400_000, "a 100k-element array is counted: " + allocated);
  }
}
