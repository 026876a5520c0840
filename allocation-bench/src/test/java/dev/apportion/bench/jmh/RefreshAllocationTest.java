package dev.apportion.bench.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.TargetInterner;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What a discovery refresh allocates, per target, counted with the JVM's per-thread allocation
 * counter on the same input as {@link RefreshTimeEndToEnd} (fresh label maps every refresh): a
 * count, not a time, so it holds on any machine. Each refresh is repeated until the JIT has
 * compiled the path (an interpreted {@code forEach} allocates what compiled code does not).
 */
class RefreshAllocationTest {
  private static final int TARGETS = 20_000;
  private static final int WARM_REFRESHES = 8;

  private static List<Map<String, String>> base() {
    List<Map<String, String>> base = new ArrayList<>(TARGETS);
    for (int i = 0; i < TARGETS; i++) {
      base.add(PodLabels.of(i, i));
    }
    return base;
  }

  private static List<Target> intern(TargetInterner interner, List<Map<String, String>> sets) {
    List<Target> out = new ArrayList<>(sets.size());
    for (Map<String, String> m : sets) {
      out.add(interner.intern(PodLabels.JOB, m.get(PodLabels.ADDRESS), m));
    }
    interner.endRefresh();
    return out;
  }

  @Test
  void anUnchangedInternedRefreshAllocatesAtMostTenBytesPerTarget() {
    List<Map<String, String>> base = base();
    List<Collector> collectors = new ArrayList<>();
    for (int j = 0; j < 200; j++) {
      collectors.add(Collector.of("collector-" + j, "node-" + j));
    }
    for (String strategy : List.of(Allocators.CONSISTENT_HASHING, Allocators.PER_NODE)) {
      Allocator allocator = Allocators.builder(strategy).build();
      allocator.setCollectors(collectors);
      TargetInterner interner = new TargetInterner();
      List<Target> first = intern(interner, PodLabels.fresh(base));
      allocator.setTargets(first);
      Allocation placed = allocator.snapshot();
      long perTarget = Long.MAX_VALUE;
      for (int r = 0; r < WARM_REFRESHES; r++) {
        List<Map<String, String>> input = PodLabels.fresh(base);
        long before = OpCounters.allocatedBytes();
        List<Target> targets = intern(interner, input);
        allocator.setTargets(targets);
        perTarget = Math.min(perTarget, (OpCounters.allocatedBytes() - before) / TARGETS);
        assertSame(first.get(r), targets.get(r), "the held target comes back");
      }
      assertSame(placed, allocator.snapshot(), strategy + ": nothing to publish");
      // The list of targets itself is 4 bytes per target (compressed references).
      assertTrue(perTarget <= 10,
          strategy + ": an unchanged refresh allocated " + perTarget + " bytes per target");
    }
  }

  /**
   * A target built anew, by {@code Target.of} and by an interner that has not seen it, allocates
   * at most 300 bytes, what the target keeps included.
   */
  @Test
  void buildingANewTargetAllocatesAtMostThreeHundredBytesPerTarget() {
    List<Map<String, String>> base = base();
    List<Map<String, String>> others = new ArrayList<>(TARGETS);
    for (int i = 0; i < TARGETS; i++) {
      others.add(PodLabels.of(i, TARGETS + i));
    }
    long perTargetOf = Long.MAX_VALUE;
    long perInterned = Long.MAX_VALUE;
    for (int r = 0; r < WARM_REFRESHES; r++) {
      List<Map<String, String>> input = PodLabels.fresh(base);
      long before = OpCounters.allocatedBytes();
      List<Target> built = new ArrayList<>(TARGETS);
      for (Map<String, String> m : input) {
        built.add(Target.of(PodLabels.JOB, m.get(PodLabels.ADDRESS), m));
      }
      perTargetOf = Math.min(perTargetOf, (OpCounters.allocatedBytes() - before) / TARGETS);
      assertEquals(TARGETS, built.size());

      // An interner whose table has grown to the size of a refresh already (as it has after
      // the first refresh), but that has none of these targets: every one is built anew.
      TargetInterner interner = new TargetInterner();
      intern(interner, others);
      interner.endRefresh();
      assertEquals(0, interner.size());
      input = PodLabels.fresh(base);
      before = OpCounters.allocatedBytes();
      List<Target> interned = intern(interner, input);
      perInterned = Math.min(perInterned, (OpCounters.allocatedBytes() - before) / TARGETS);
      assertEquals(built.get(r), interned.get(r));
    }
    // What each target keeps is included: the Target, its label view and its label array.
    assertTrue(perTargetOf <= 300, "Target.of allocated " + perTargetOf + " bytes per target");
    assertTrue(perInterned <= 300,
        "a new interned target allocated " + perInterned + " bytes per target");
  }
}
