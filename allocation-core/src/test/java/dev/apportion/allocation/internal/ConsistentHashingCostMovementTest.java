package dev.apportion.allocation.internal;

import static dev.apportion.allocation.internal.Fixtures.assignment;
import static dev.apportion.allocation.internal.Fixtures.paretoCosts;
import static dev.apportion.allocation.internal.Fixtures.targets;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code consistent-hashing}'s movement with heavy-tailed costs held fixed (20k Pareto-cost
 * targets on 200 collectors), as counts: ten single removals and ten single additions from the
 * placed state against their minimum, and the other targets moved by replacing 1% of the
 * targets. With such costs about a fifth of the collectors are full at load factor 1.2 (their
 * cost's spread is about 25%, against 10% for counts), so the movement goals of the count case
 * hold only from about 1.5 on: docs/strategies.md, "Cost and capacity", has the frontier.
 */
class ConsistentHashingCostMovementTest {
  private static final int TARGETS = 20_000;
  private static final int COLLECTORS = 200;

  /** Removals' and additions' moves over their minimum, and the replacement's others moved. */
  record Figures(double removals, double additions, int replacedOthersMoved) {}

  static Figures measure(double loadFactor) {
    List<Target> ts = paretoCosts(targets(TARGETS, 6), 5);
    List<Collector> cs = Fixtures.collectors(COLLECTORS);
    Allocator base = allocator(loadFactor, cs, ts);
    Map<Target, String> placed = assignment(base.snapshot());
    long removed = 0;
    long minimum = 0;
    long added = 0;
    for (int k = 0; k < 10; k++) {
      Allocator a = allocator(loadFactor, cs, ts);
      List<Collector> fewer = new ArrayList<>(cs);
      Collector gone = fewer.remove(k * (COLLECTORS / 10) + 3);
      minimum += a.snapshot().targetCount(gone.name());
      a.setCollectors(fewer);
      removed += Fixtures.moved(placed, assignment(a.snapshot()));
      Allocator b = allocator(loadFactor, cs, ts);
      List<Collector> more = new ArrayList<>(cs);
      more.add(Collector.of("joined-" + k));
      b.setCollectors(more);
      added += Fixtures.moved(placed, assignment(b.snapshot()));
    }
    List<Target> replaced = new ArrayList<>(ts);
    for (int i = 0; i < replaced.size(); i += 100) {
      Target old = replaced.get(i);
      replaced.set(i, Target.of(old.job(), "new-" + i + ":80").withCost(old.cost()));
    }
    base.setTargets(replaced);
    Map<Target, String> after = assignment(base.snapshot());
    int others = 0;
    for (Map.Entry<Target, String> e : placed.entrySet()) {
      String now = after.get(e.getKey());
      if (now != null && !now.equals(e.getValue())) {
        others++;
      }
    }
    Figures f = new Figures((double) removed / minimum,
        added / (10.0 * TARGETS / (COLLECTORS + 1)), others);
    System.out.println("costs, load factor " + loadFactor + ": " + f);
    return f;
  }

  private static Allocator allocator(double loadFactor, List<Collector> cs, List<Target> ts) {
    Allocators.Builder b = Allocators.builder(Allocators.CONSISTENT_HASHING);
    Allocator a = (Double.isNaN(loadFactor) ? b : b.loadFactor(loadFactor)).build();
    a.setCollectors(cs);
    a.setTargets(ts);
    return a;
  }

  @Test
  void atLoadFactorOnePointFiveTheMovementGoalsHoldWithCosts() {
    Figures f = measure(1.5);
    assertTrue(f.removals() <= 1.25, f::toString);
    assertTrue(f.additions() <= 1.25, f::toString);
    assertTrue(f.replacedOthersMoved() <= 0.001 * TARGETS * 0.99, f::toString);
  }

  /**
   * The default's figures (a band of 15% both ways), measured (2.20x, 2.49x, 244 others), with a
   * little room: a regression guard, not the goal. With caps alone at 1.2 they were 1.52x, 1.67x
   * and 71; the floors' price is documented in docs/strategies.md.
   */
  @Test
  void atTheDefaultCostsMoveMoreThanCountsAndNoMoreThanMeasured() {
    Figures f = measure(Double.NaN);
    assertTrue(f.removals() <= 2.4, f::toString);
    assertTrue(f.additions() <= 2.7, f::toString);
    assertTrue(f.replacedOthersMoved() <= 270, f::toString);
  }
}
