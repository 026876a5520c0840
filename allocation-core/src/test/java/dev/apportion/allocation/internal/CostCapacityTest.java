package dev.apportion.allocation.internal;

import static dev.apportion.allocation.internal.Fixtures.assertComplete;
import static dev.apportion.allocation.internal.Fixtures.assignment;
import static dev.apportion.allocation.internal.Fixtures.paretoCosts;
import static dev.apportion.allocation.internal.Fixtures.targets;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Target cost and collector capacity: the value types, the engine carrying them, and the
 * strategies that use them (least-weighted, rendezvous; consistent-hashing's cost bound is
 * tested with its placer). Every figure is a count.
 */
public class CostCapacityTest {

  /** Collectors with capacities 1, 2 and 4 in turn. */
  static List<Collector> mixed(int n) {
    List<Collector> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(Collector.of("collector-" + i).withCapacity(1 << (i % 3)));
    }
    return out;
  }

  /** Largest |cost share / capacity share - 1| over the collectors. */
  static double worstShareError(Allocation a) {
    double totalCap = 0;
    long totalCost = 0;
    for (Collector c : a.collectors()) {
      totalCap += c.capacity();
      totalCost += a.costOf(c.name());
    }
    double worst = 0;
    for (Collector c : a.collectors()) {
      double share = (double) a.costOf(c.name()) / totalCost;
      worst = Math.max(worst, Math.abs(share / (c.capacity() / totalCap) - 1));
    }
    return worst;
  }

  public static double peakOverMean(Allocation a) {
    long max = 0;
    long sum = 0;
    for (Collector c : a.collectors()) {
      max = Math.max(max, a.costOf(c.name()));
      sum += a.costOf(c.name());
    }
    return max / ((double) sum / a.collectors().size());
  }

  @Test
  void costIsNotIdentity() {
    Target t = Target.of("job", "10.0.0.1:9100", Map.of("a", "b"));
    Target heavy = t.withCost(100_000);
    assertEquals(1, t.cost());
    assertEquals(100_000, heavy.cost());
    assertEquals(t, heavy);
    assertEquals(t.hashCode(), heavy.hashCode());
    assertEquals(t.hash(), heavy.hash());
    assertEquals(t.labelsHash(), heavy.labelsHash());
    assertTrue(t.sameLabels(heavy));
    assertSame(heavy, heavy.withCost(100_000));
    assertEquals(0, t.withCost(0).cost());
    assertThrows(IllegalArgumentException.class, () -> t.withCost(-1));
  }

  @Test
  void capacityIsAValueButNotAName() {
    Collector c = Collector.of("a", "node-1");
    assertEquals(1.0, c.capacity());
    Collector big = c.withCapacity(4);
    assertNotEquals(c, big);
    assertEquals(c.name(), big.name());
    assertEquals(c.node(), big.node());
    assertEquals("a@node-1x4.0", big.toString());
    assertSame(c, c.withCapacity(1));
    assertThrows(IllegalArgumentException.class, () -> c.withCapacity(0));
    assertThrows(IllegalArgumentException.class, () -> c.withCapacity(Double.NaN));
    assertThrows(IllegalArgumentException.class,
        () -> c.withCapacity(Double.POSITIVE_INFINITY));
  }

  @Test
  void leastWeightedBalancesHeavyTailedCost() {
    List<Target> ts = paretoCosts(targets(10_000, 6), 1);
    Allocator byCost = Allocators.builder(Allocators.LEAST_WEIGHTED).build();
    byCost.setCollectors(Fixtures.collectors(20));
    byCost.setTargets(ts);
    assertComplete(byCost, ts);
    Allocator byCount = Allocators.builder(Allocators.LEAST_WEIGHTED).build();
    byCount.setCollectors(Fixtures.collectors(20));
    byCount.setTargets(targets(10_000, 6));
    // The same placement by count, priced at the Pareto costs, for contrast.
    double countPeak = pricedPeakOverMean(byCount.snapshot(), ts);
    double costPeak = peakOverMean(byCost.snapshot());
    assertTrue(costPeak <= 1.05, () -> "cost peak/mean " + costPeak);
    assertTrue(countPeak > costPeak, () -> "count-based gives " + countPeak);
  }

  @Test
  void leastWeightedGivesEachCollectorItsCapacityShare() {
    List<Target> ts = paretoCosts(targets(10_000, 6), 2);
    Allocator a = Allocators.builder(Allocators.LEAST_WEIGHTED).build();
    a.setCollectors(mixed(21));
    a.setTargets(ts);
    assertComplete(a, ts);
    double worst = worstShareError(a.snapshot());
    assertTrue(worst <= 0.15, () -> "worst share error " + worst);
  }

  /**
   * The issue's shape for the capacity goal, scaled down ten times: 10k heavy-tailed targets on
   * 99 collectors of capacity 1, 2 and 4 (about 43 targets on a capacity-1 collector, whose share
   * is then only a few of the largest targets). Costliest-first placement keeps every collector
   * within 15% of its share; identity-hash order overshoots by a whole large target.
   */
  @Test
  void leastWeightedGivesEachCollectorItsCapacityShareAtTheIssuesShape() {
    List<Target> ts = paretoCosts(targets(10_000, 6), 4);
    Allocator a = Allocators.builder(Allocators.LEAST_WEIGHTED).build();
    a.setCollectors(mixed(99));
    a.setTargets(ts);
    assertComplete(a, ts);
    double worst = worstShareError(a.snapshot());
    assertTrue(worst <= 0.15, () -> "worst share error " + worst);
  }

  @Test
  void rendezvousGivesEachCollectorItsCapacityShareOfTargets() {
    List<Target> ts = targets(60_000, 6);
    Allocator a = Allocators.builder(Allocators.RENDEZVOUS).build();
    a.setCollectors(mixed(21));
    a.setTargets(ts);
    assertComplete(a, ts);
    double worst = worstShareError(a.snapshot());
    assertTrue(worst <= 0.15, () -> "worst share error " + worst);
  }

  @Test
  void weightedRendezvousIsAFunctionOfTheSetsWhateverTheHistory() {
    List<Target> ts = targets(5000, 3);
    List<Collector> start = mixed(12);
    List<Collector> end = new ArrayList<>(start);
    end.set(4, end.get(4).withCapacity(8));
    end.add(Collector.of("collector-new").withCapacity(2));
    end.remove(7);
    Allocator incremental = Allocators.builder(Allocators.RENDEZVOUS).build();
    incremental.setCollectors(start);
    incremental.setTargets(ts);
    Map<Target, String> before = assignment(incremental.snapshot());
    incremental.setCollectors(end);
    Allocator fresh = Allocators.builder(Allocators.RENDEZVOUS).build();
    fresh.setCollectors(end);
    fresh.setTargets(ts);
    Map<Target, String> after = assignment(incremental.snapshot());
    assertEquals(assignment(fresh.snapshot()), after);
    // Only targets to or from the three changed collectors moved.
    for (Target t : ts) {
      if (!before.get(t).equals(after.get(t))) {
        assertTrue(before.get(t).equals("collector-4") || before.get(t).equals("collector-7")
            || after.get(t).equals("collector-4") || after.get(t).equals("collector-new"),
            () -> t + ": " + before.get(t) + " -> " + after.get(t));
      }
    }
  }

  @Test
  void equalCapacitiesOtherThanOnePlaceAsTheDefault() {
    List<Target> ts = targets(3000, 3);
    Allocator ones = Allocators.builder(Allocators.RENDEZVOUS).build();
    ones.setCollectors(Fixtures.collectors(9));
    ones.setTargets(ts);
    Allocator fours = Allocators.builder(Allocators.RENDEZVOUS).build();
    List<Collector> big = new ArrayList<>();
    for (Collector c : Fixtures.collectors(9)) {
      big.add(c.withCapacity(4));
    }
    fours.setCollectors(big);
    fours.setTargets(ts);
    assertEquals(assignment(ones.snapshot()), assignment(fours.snapshot()));
  }

  @Test
  void aCapacityChangeIsACollectorChange() {
    Allocator a = Allocators.builder(Allocators.RENDEZVOUS).build();
    List<Target> ts = targets(4000, 2);
    a.setCollectors(Fixtures.collectors(4));
    a.setTargets(ts);
    int before = a.snapshot().targetCount("collector-0");
    List<Collector> cs = new ArrayList<>(Fixtures.collectors(4));
    cs.set(0, cs.get(0).withCapacity(3));
    a.setCollectors(cs);
    assertComplete(a, ts);
    assertTrue(a.snapshot().collectors().contains(cs.get(0)));
    int after = a.snapshot().targetCount("collector-0");
    assertTrue(after > 1.8 * before, () -> before + " -> " + after);
  }

  /**
   * Found by the property kit's costs-and-capacities runs: a capacity change of a collector that
   * keeps its name did not reach the placer of a partition (zone-aware strategies, per-node's
   * fallback), so the placement depended on the capacities of before.
   */
  @Test
  void aCapacityChangeInsideAPartitionReachesItsPlacer() {
    List<Target> ts = paretoCosts(targets(3000, 3), 4);
    List<Collector> before = mixed(12);
    List<Collector> after = new ArrayList<>();
    for (Collector c : before) {
      after.add(c.withCapacity(1));
    }
    for (String strategy : List.of(Allocators.PER_NODE, Allocators.CONSISTENT_HASHING)) {
      Allocators.Builder b = Allocators.builder(strategy);
      Allocator a = (strategy.equals(Allocators.PER_NODE) ? b : b.zoneAware()).build();
      a.setCollectors(before);
      a.setTargets(ts);
      a.setCollectors(after);
      Allocators.Builder f = Allocators.builder(strategy);
      Allocator fresh = (strategy.equals(Allocators.PER_NODE) ? f : f.zoneAware()).build();
      fresh.setCollectors(after);
      fresh.setTargets(ts);
      assertEquals(Fixtures.assignment(fresh.snapshot()), Fixtures.assignment(a.snapshot()),
          strategy);
    }
  }

  /**
   * Found by the same runs: weighted rendezvous ranked two collectors of one capacity by the
   * unsigned score, the unweighted loop by the signed one, so a target's owner depended on
   * whether a collector of another capacity had come and gone.
   */
  @Test
  void weightedRendezvousRanksCollectorsOfOneCapacityAsTheUnweightedLoop() {
    List<Target> ts = targets(4000, 2);
    List<Collector> pair = List.of(Collector.of("collector-a").withCapacity(4),
        Collector.of("collector-b").withCapacity(4));
    List<Collector> withThird = new ArrayList<>(pair);
    withThird.add(Collector.of("collector-c"));
    Allocator a = Allocators.builder(Allocators.RENDEZVOUS).build();
    a.setCollectors(withThird);
    a.setTargets(ts);
    a.setCollectors(pair);
    Allocator fresh = Allocators.builder(Allocators.RENDEZVOUS).build();
    fresh.setCollectors(pair);
    fresh.setTargets(ts);
    assertEquals(Fixtures.assignment(fresh.snapshot()), Fixtures.assignment(a.snapshot()));
  }

  @Test
  void perNodeFallbackInheritsCostAwareness() {
    // Every target without a node: the whole set is the fallback's pool.
    List<Target> ts = paretoCosts(targets(4000, 3), 5);
    Allocator a = Allocators.builder(Allocators.PER_NODE).fallback(Allocators.LEAST_WEIGHTED)
        .build();
    a.setCollectors(Fixtures.collectors(10));
    a.setTargets(ts);
    assertComplete(a, ts);
    double peak = peakOverMean(a.snapshot());
    assertTrue(peak <= 1.05, () -> "cost peak/mean " + peak);
  }

  @Test
  void anUnchangedReSetWithCostsPublishesNothing() {
    List<Target> ts = paretoCosts(targets(3000, 3), 9);
    for (String s : Allocators.strategies()) {
      Allocator a = Allocators.builder(s).build();
      a.setCollectors(Fixtures.collectors(6));
      a.setTargets(ts);
      Allocation before = a.snapshot();
      a.setTargets(new ArrayList<>(ts));
      assertSame(before, a.snapshot(), s);
      a.setTargets(paretoCosts(targets(3000, 3), 9));
      assertSame(before, a.snapshot(), s + ": equal targets rebuilt with equal costs");
      assertFalse(before.collectors().isEmpty());
    }
  }

  /** Cost peak/mean of {@code a}'s assignment with each target priced as in {@code priced}. */
  static double pricedPeakOverMean(Allocation a, List<Target> priced) {
    Map<String, Long> totals = new java.util.HashMap<>();
    for (Collector c : a.collectors()) {
      totals.put(c.name(), 0L);
    }
    for (Target t : priced) {
      a.collectorOf(t).ifPresent(c -> totals.merge(c, t.cost(), Long::sum));
    }
    long max = 0;
    long sum = 0;
    for (long v : totals.values()) {
      max = Math.max(max, v);
      sum += v;
    }
    return max / ((double) sum / totals.size());
  }
}
