package dev.apportion.allocation.internal;

import static dev.apportion.allocation.internal.Fixtures.assertComplete;
import static dev.apportion.allocation.internal.Fixtures.assignment;
import static dev.apportion.allocation.internal.Fixtures.paretoCosts;
import static dev.apportion.allocation.internal.Fixtures.targets;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * consistent-hashing with target costs and collector capacities: the cap is in cost units and
 * scales with capacity. These fail on a count-based placer (cost peak/mean about 1.4-1.9 there).
 */
class ConsistentHashingCostTest {

  @Test
  void heavyTailedCostIsBoundedAtTheLoadFactor() {
    List<Target> ts = paretoCosts(targets(20_000, 6), 1);
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).loadFactor(1.15).build();
    a.setCollectors(Fixtures.collectors(100));
    a.setTargets(ts);
    assertComplete(a, ts);
    double peak = CostCapacityTest.peakOverMean(a.snapshot());
    assertTrue(peak <= 1.15, () -> "cost peak/mean " + peak);
  }

  @Test
  void mixedCapacitiesStayUnderTheirCapacityShareTimesTheLoadFactor() {
    List<Target> ts = paretoCosts(targets(30_000, 6), 2);
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).loadFactor(1.15).build();
    a.setCollectors(CostCapacityTest.mixed(99));
    a.setTargets(ts);
    assertComplete(a, ts);
    Allocation s = a.snapshot();
    double totalCap = 0;
    long totalCost = 0;
    for (Collector c : s.collectors()) {
      totalCap += c.capacity();
      totalCost += s.costOf(c.name());
    }
    for (Collector c : s.collectors()) {
      double bound = Math.ceil(1.15 * totalCost * c.capacity() / totalCap);
      assertTrue(s.costOf(c.name()) <= bound, c.name() + " carries " + s.costOf(c.name())
          + ", above its bound " + bound);
      assertTrue(s.targetCount(c.name()) > 0, c.name() + " is idle");
    }
  }

  @Test
  void aTenPercentDriftMovesAtMostOnePercent() {
    List<Target> ts = paretoCosts(targets(20_000, 6), 3);
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    a.setCollectors(Fixtures.collectors(100));
    a.setTargets(ts);
    Map<Target, String> before = assignment(a.snapshot());
    for (int round = 0; round < 5; round++) {
      ts = Fixtures.drift(ts, 0.10, 100 + round);
      a.setTargets(ts);
      assertComplete(a, ts);
    }
    int moved = Fixtures.moved(before, assignment(a.snapshot()));
    assertTrue(moved <= ts.size() / 100, () -> "five +-10% drifts moved " + moved);
  }

  @Test
  void aTargetCostlierThanItsBoundIsPlacedNotDropped() {
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    List<Target> ts = new java.util.ArrayList<>(targets(1000, 2));
    Target whale = Target.of("ksm", "kube-state-metrics:8080").withCost(100_000);
    ts.add(whale);
    a.setCollectors(Fixtures.collectors(10));
    a.setTargets(ts);
    assertComplete(a, ts);
    Allocation s = a.snapshot();
    assertEquals(0, s.unassigned().size());
    String home = s.collectorOf(whale).orElseThrow();
    for (Collector c : s.collectors()) {
      if (!c.name().equals(home)) {
        assertTrue(s.targetCount(c.name()) >= s.targetCount(home), c.name());
      }
    }
  }
}
