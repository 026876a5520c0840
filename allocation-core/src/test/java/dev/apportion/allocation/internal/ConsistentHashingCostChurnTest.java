package dev.apportion.allocation.internal;

import static dev.apportion.allocation.internal.Fixtures.assertComplete;
import static dev.apportion.allocation.internal.Fixtures.assignment;
import static dev.apportion.allocation.internal.Fixtures.paretoCosts;
import static dev.apportion.allocation.internal.Fixtures.targets;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.chash.ConsistentHashingPlacer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code consistent-hashing}'s cost churn rule (docs/strategies.md): hysteresis while every
 * collector stays within its bound times 1.1 at current costs; past that, or at a collector
 * change, a re-placement with every current cost, which is the pure function of the sets and
 * costs again. Each of these fails on a placer that keeps placing with stale costs.
 */
class ConsistentHashingCostChurnTest {
  private static final double LOAD_FACTOR = 1.15;

  private static Allocator allocator() {
    return Allocators.builder(Allocators.CONSISTENT_HASHING).loadFactor(LOAD_FACTOR).build();
  }

  /** Most targets grow four times lighter: the collectors holding the rest are left heavy. */
  @Test
  void aCollectorLeftHeavyBecauseTheOthersGrewLighterIsRebalanced() {
    List<Target> ts = paretoCosts(targets(20_000, 6), 11);
    Allocator a = allocator();
    a.setCollectors(Fixtures.collectors(100));
    a.setTargets(ts);
    Allocation placed = a.snapshot();
    List<String> kept = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      kept.add(Fixtures.collectors(100).get(i * 10).name());
    }
    List<Target> lighter = Fixtures.recost(ts, placed, c -> !kept.contains(c),
        c -> Math.max(1, c / 4));
    a.setTargets(lighter);
    assertComplete(a, lighter);
    double peak = CostCapacityTest.peakOverMean(a.snapshot());
    assertTrue(peak <= LOAD_FACTOR + 1e-9, () -> "cost peak/mean " + peak);
  }

  /** The slack is the hysteresis: a drift that stays within it moves nothing at all. */
  @Test
  void driftsWithinTheSlackMoveNothing() {
    List<Target> ts = paretoCosts(targets(20_000, 6), 12);
    Allocator a = allocator();
    a.setCollectors(Fixtures.collectors(100));
    a.setTargets(ts);
    Map<Target, String> before = assignment(a.snapshot());
    for (int round = 0; round < 5; round++) {
      ts = Fixtures.drift(ts, 0.10, 200 + round);
      a.setTargets(ts);
      // Target churn between drifts places with the costs of the last placement: no drift moves.
      List<Target> plus = new ArrayList<>(ts);
      plus.add(Target.of("extra", "extra-" + round + ":80"));
      ts = plus;
      a.setTargets(ts);
    }
    Map<Target, String> after = assignment(a.snapshot());
    int moved = Fixtures.moved(before, after);
    assertTrue(moved <= 5, () -> "drifts and five additions moved " + moved);
    double peak = CostCapacityTest.peakOverMean(a.snapshot());
    assertTrue(peak <= LOAD_FACTOR * 1.1 + 1e-9, () -> "cost peak/mean " + peak);
  }

  /** Replicas that saw different cost histories agree again after a collector change. */
  @Test
  void replicasWithDifferentCostHistoriesAgreeAfterACollectorChange() {
    List<Target> first = paretoCosts(targets(20_000, 6), 13);
    List<Target> drifted = Fixtures.drift(first, 0.10, 300);
    Allocator a = allocator();
    a.setCollectors(Fixtures.collectors(100));
    a.setTargets(first);
    a.setTargets(drifted);
    Allocator b = allocator();
    b.setCollectors(Fixtures.collectors(100));
    b.setTargets(drifted);
    List<Collector> fewer = new ArrayList<>(Fixtures.collectors(100));
    fewer.remove(37);
    a.setCollectors(fewer);
    b.setCollectors(fewer);
    assertEquals(assignment(b.snapshot()), assignment(a.snapshot()));
    Allocator fresh = allocator();
    fresh.setCollectors(fewer);
    fresh.setTargets(drifted);
    assertEquals(assignment(fresh.snapshot()), assignment(a.snapshot()));
  }

  /** The per-collector limit is one of the placer's caps: adding targets churns nothing. */
  @Test
  void aPerCollectorLimitBelowTheBoundDoesNotChurn() {
    List<Target> ts = new ArrayList<>(targets(20_000, 6));
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).loadFactor(LOAD_FACTOR)
        .maxTargetsPerCollector(205).build();
    a.setCollectors(Fixtures.collectors(100));
    a.setTargets(ts);
    assertComplete(a, ts);
    for (Collector c : a.snapshot().collectors()) {
      assertTrue(a.snapshot().targetCount(c.name()) <= 205, c.name());
    }
    int total = Fixtures.movedByAdditions(a, ts, 5);
    assertTrue(total <= 10, () -> "five single additions moved " + total);
    assertEquals(0, a.snapshot().unassigned().size());
  }

  @Test
  void aTargetCostlierThanEveryBoundIsReportedOncePerEpisode() {
    try (LogCapture log = LogCapture.of(ConsistentHashingPlacer.class)) {
      Allocator a = allocator();
      List<Target> ts = new ArrayList<>(targets(1000, 2));
      a.setCollectors(Fixtures.collectors(10));
      a.setTargets(ts);
      ts.add(Target.of("ksm", "kube-state-metrics:8080").withCost(100_000));
      a.setTargets(ts);
      ts.add(Target.of("ksm", "kube-state-metrics-2:8080"));
      a.setTargets(ts);
      assertEquals(1, log.messages(Level.WARN, "cost more than any collector's bound").size());
      ts.remove(ts.size() - 2);
      a.setTargets(ts);
      assertEquals(1, log.messages(Level.INFO, "no target costs more").size());
    }
  }
}
