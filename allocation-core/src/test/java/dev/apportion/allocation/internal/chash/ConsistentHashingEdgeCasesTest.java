package dev.apportion.allocation.internal.chash;

import static dev.apportion.allocation.internal.Fixtures.assertComplete;
import static dev.apportion.allocation.internal.Fixtures.assignment;
import static dev.apportion.allocation.internal.Fixtures.paretoCosts;
import static dev.apportion.allocation.internal.Fixtures.targets;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.Fixtures;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.leastweighted.LeastWeightedPlacer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Edge cases of the cost-aware placers found in review: each of these failed (an exception, a
 * stale cost, a lost hysteresis, churn, a wrong order) before its fix.
 */
class ConsistentHashingEdgeCasesTest {

  /** Costs changed, then every target left: a collector change must not index past the arrays. */
  @Test
  void collectorsJoiningAnEmptiedStaleViewArePlacedWithoutError() {
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    a.setCollectors(Fixtures.collectors(1));
    Target t = Target.of("job", "10.0.0.1:80");
    a.setTargets(List.of(t.withCost(10)));
    a.setTargets(List.of(t.withCost(11)));
    a.setTargets(List.of());
    a.setCollectors(Fixtures.collectors(3));
    List<Target> back = targets(300, 3);
    a.setTargets(back);
    assertComplete(a, back);
  }

  /** A target that leaves and comes back with another cost is placed with its new cost. */
  @Test
  void aReturningTargetBringsItsCurrentCost() {
    List<Target> base = new ArrayList<>();
    for (Target t : targets(4000, 4)) {
      base.add(t.withCost(1000));
    }
    Target big = Target.of("big", "big:80");
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    a.setCollectors(Fixtures.collectors(4));
    List<Target> with = new ArrayList<>(base);
    with.add(big.withCost(1));
    a.setTargets(with);
    a.setTargets(base);
    List<Target> heavy = new ArrayList<>(base);
    heavy.add(big.withCost(1_000_000));
    a.setTargets(heavy);
    Allocator fresh = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    fresh.setCollectors(Fixtures.collectors(4));
    fresh.setTargets(heavy);
    assertEquals(assignment(fresh.snapshot()), assignment(a.snapshot()));
  }

  /** One target costlier than every bound must not turn each small drift into a re-placement. */
  @Test
  void anOversizeTargetKeepsTheHysteresis() {
    List<Target> ts = new ArrayList<>(paretoCosts(targets(20_000, 6), 21));
    ts.add(Target.of("ksm", "kube-state-metrics:8080").withCost(1_000_000));
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    a.setCollectors(Fixtures.collectors(100));
    a.setTargets(ts);
    Map<Target, String> before = assignment(a.snapshot());
    for (int round = 0; round < 5; round++) {
      List<Target> drifted = new ArrayList<>(Fixtures.drift(ts.subList(0, ts.size() - 1), 0.02,
          400 + round));
      drifted.add(ts.get(ts.size() - 1));
      ts = drifted;
      a.setTargets(ts);
    }
    int moved = Fixtures.moved(before, assignment(a.snapshot()));
    assertEquals(0, moved, "five 2% drifts with one oversize target");
  }

  /**
   * Limits that cannot hold every target: the leftovers wait and no collector passes its limit.
   * (Each leftover used to walk the whole ring looking for room first: seconds per write at this
   * shape. What such an over-full cluster still does is move many targets on one addition, since
   * every collector is full and a single change reshuffles the overflow; docs/api.md says so.)
   */
  @Test
  void limitsBelowTheTargetsLeaveTheRestWaiting() {
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).maxTargetsPerCollector(90)
        .build();
    a.setCollectors(Fixtures.collectors(500));
    List<Target> ts = new ArrayList<>(targets(50_000, 6));
    a.setTargets(ts);
    assertEquals(50_000 - 500 * 90, a.snapshot().unassigned().size());
    ts.add(Target.of("extra", "extra:80"));
    a.setTargets(ts);
    assertEquals(50_001 - 500 * 90, a.snapshot().unassigned().size());
    for (Collector c : a.snapshot().collectors()) {
      assertEquals(90, a.snapshot().targetCount(c.name()), c.name());
    }
  }

  /** per-node's pool keeps within the limit net of each collector's node-local targets. */
  @Test
  void perNodesPoolCountsNodeLocalTargetsAgainstTheLimit() {
    List<Target> ts = new ArrayList<>(Fixtures.nodeTargets(10, 50));
    ts.addAll(targets(400, 4));
    List<Collector> cs = new ArrayList<>();
    for (int n = 0; n < 10; n++) {
      cs.add(Collector.of("agent-" + n, Fixtures.node(n)));
    }
    Allocator a = Allocators.builder(Allocators.PER_NODE).maxTargetsPerCollector(100).build();
    a.setCollectors(cs);
    a.setTargets(ts);
    assertComplete(a, ts);
    int total = Fixtures.movedByAdditions(a, ts, 5);
    assertTrue(total <= 10, () -> "five pool additions moved " + total);
    for (Collector c : cs) {
      assertTrue(a.snapshot().targetCount(c.name()) <= 100, c.name());
    }
  }

  /** least-weighted's batch order: costliest first, a cost of 0 last, ties in the given order. */
  @Test
  void leastWeightedOrdersABatchCostliestFirstWithZeroLast() {
    long[] costs = {0, 5, Target.MAX_COST, 5, 0, 1};
    Assignment view = new Assignment() {
      @Override
      public Member ownerOf(int slot) {
        return null;
      }

      @Override
      public void place(int slot, Member member) {}

      @Override
      public Target target(int slot) {
        throw new UnsupportedOperationException();
      }

      @Override
      public long hash(int slot) {
        return slot;
      }

      @Override
      public int job(int slot) {
        return 0;
      }

      @Override
      public long cost(int slot) {
        return costs[slot];
      }

      @Override
      public int size() {
        return costs.length;
      }

      @Override
      public int slotAt(int i) {
        return i;
      }
    };
    IntList slots = new IntList();
    for (int i = 0; i < costs.length; i++) {
      slots.add(i);
    }
    assertArrayEquals(new int[] {2, 1, 3, 5, 0, 4}, LeastWeightedPlacer.costliestFirst(slots, view));
  }
}
