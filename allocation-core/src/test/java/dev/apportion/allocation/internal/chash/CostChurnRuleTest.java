package dev.apportion.allocation.internal.chash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * {@link CostChurnRule}: the placed costs it keeps, its check at current costs on both sides of
 * the slack, and, through {@link ConsistentHashingPlacer}, that a drift within the slack moves
 * nothing and one beyond it places again.
 */
class CostChurnRuleTest {
  private static final int N = 400;

  /**
   * Four equal collectors, every target of one cost, slot {@code s} on member {@code s % 4},
   * except that member 0 also holds {@code skew} targets of each other member; then the rule's
   * bookkeeping of a placement.
   */
  private static final class Fixture {
    final Members members = PlacerParts.members(4, 1);
    final PlacerParts.View view;
    final TokenRing ring = new TokenRing(16);
    final LoadBounds bounds = new LoadBounds(1.2, 1.15, true);
    final CostChurnRule rule;

    Fixture(boolean twoSided, long cost, int skew) {
      long[] costs = new long[N];
      Arrays.fill(costs, cost);
      view = new PlacerParts.View(PlacerParts.hashes(N, 1), costs);
      for (int s = 0; s < N; s++) {
        view.place(s, members.get(s < 4 * skew && s % 4 != 0 ? 0 : s % 4));
      }
      LoadBounds b = twoSided ? bounds : new LoadBounds(1.2, 1.15, false);
      rule = new CostChurnRule(twoSided, ring, b);
      // What the placer does around a placement: placed costs, bounds, remembered bounds.
      ring.update(members);
      long total = rule.placedCosts(view, N, null);
      b.compute(members, total, N, view, true, ring.idSpan());
      rule.remember(members, b.largestCap(members));
    }

    /** Sets the cost of every target on member {@code id}. */
    void recost(int id, long cost) {
      for (int s = 0; s < N; s++) {
        if (view.ownerOf(s).id() == id) {
          view.cost(s, cost);
        }
      }
      rule.markStale();
    }
  }

  @Test
  void aDriftWithinTheSlackIsNotOver() {
    Fixture f = new Fixture(true, 10, 0);
    // Member 0 from 1000 to 1200 (the total 4200, its cap about 1.15 x 1050).
    f.recost(0, 12);
    assertTrue(f.rule.stale());
    assertFalse(f.rule.overAtCurrentCosts(f.members, f.view));
    // Member 1 from 1000 to 800 (its floor about 0.85 x 950, 728 with the slack).
    f.recost(0, 10);
    f.recost(1, 8);
    assertFalse(f.rule.overAtCurrentCosts(f.members, f.view));
  }

  @Test
  void aDriftBeyondTheSlackIsOverOnEitherSide() {
    Fixture heavy = new Fixture(true, 10, 0);
    // 1500 against a cap of about 1.15 x 1125, 1423 with the slack.
    heavy.recost(0, 15);
    assertTrue(heavy.rule.overAtCurrentCosts(heavy.members, heavy.view));
    Fixture light = new Fixture(true, 10, 0);
    // 700 against a floor of about 0.85 x 925, 708 with the slack.
    light.recost(2, 7);
    assertTrue(light.rule.overAtCurrentCosts(light.members, light.view));
    // One-sided (per-node's pool): no floor to fall below.
    Fixture pool = new Fixture(false, 10, 0);
    pool.recost(2, 7);
    assertFalse(pool.rule.overAtCurrentCosts(pool.members, pool.view));
  }

  /**
   * A collector the placement itself left above its cap (here 1300 of 1000 even) is measured
   * from where it was left: a 2% drift of every cost is not over, though 1300 is past the cap
   * times the slack.
   */
  @Test
  void aCollectorLeftAboveItsCapIsMeasuredFromWhereItWasLeft() {
    Fixture f = new Fixture(true, 100, 10);
    assertEquals(13_000, load(f, 0));
    for (int id = 0; id < 4; id++) {
      f.recost(id, 102);
    }
    assertFalse(f.rule.overAtCurrentCosts(f.members, f.view));
    // A 30% jump on that collector alone is.
    f.recost(0, 130);
    assertTrue(f.rule.overAtCurrentCosts(f.members, f.view));
  }

  private static long load(Fixture f, int id) {
    long load = 0;
    for (int s = 0; s < N; s++) {
      load += f.view.ownerOf(s).id() == id ? f.view.cost(s) : 0;
    }
    return load;
  }

  @Test
  void placedCostsKeepTheCostOfTheLastPlacementUntilForgotten() {
    Fixture f = new Fixture(true, 1, 0);
    assertTrue(f.rule.unitCosts());
    f.view.cost(5, 40);
    f.view.cost(6, 50);
    // The slots keep the cost they were placed with.
    assertEquals(N, f.rule.placedCosts(f.view, N, null));
    assertEquals(1, f.rule.placedCost(5));
    assertTrue(f.rule.unitCosts());
    // A slot forgotten (its target left, or came) brings its current cost.
    IntList five = new IntList();
    five.add(5);
    f.rule.forget(five);
    assertEquals(N + 39, f.rule.placedCosts(f.view, N, null));
    assertEquals(40, f.rule.placedCost(5));
    assertEquals(1, f.rule.placedCost(6));
    assertFalse(f.rule.unitCosts());
    // All forgotten: every current cost, and no longer stale.
    f.rule.markStale();
    f.rule.forgetPlacedCosts(f.view);
    assertFalse(f.rule.stale());
    assertEquals(N + 39 + 49, f.rule.placedCosts(f.view, N, null));
  }

  /**
   * Through the placer: a drift within the slack moves no target; one beyond it places the view
   * again, exactly as a placer that never saw the old costs would.
   */
  @Test
  void throughThePlacerADriftWithinTheSlackMovesNothingAndBeyondItPlacesAgain() {
    int n = 6_000;
    long[] costs = PlacerParts.paretoCosts(n, 3);
    PlacerParts.View view = new PlacerParts.View(PlacerParts.hashes(n, 3), costs);
    Members members = PlacerParts.members(11, 1, 2);
    ConsistentHashingPlacer placer = new ConsistentHashingPlacer(1.2, 1.15, 64, true);
    IntList all = new IntList();
    for (int s = 0; s < n; s++) {
      all.add(s);
    }
    placer.targetsChanged(all, new IntList(), members, view);
    Member[] placed = owners(view);
    // Within the slack: every cost up 3%, or down.
    IntList recosted = new IntList();
    for (int s = 0; s < n; s += 2) {
      view.cost(s, costs[s] + (costs[s] * 3 + 50) / 100);
      recosted.add(s);
    }
    placer.costsChanged(recosted, members, view);
    assertArrayEquals(placed, owners(view), "a drift within the slack moved targets");
    // Beyond: the targets of one collector three times as costly.
    recosted.clear();
    Member heavy = members.get(4);
    for (int s = 0; s < n; s++) {
      if (view.ownerOf(s) == heavy) {
        view.cost(s, 3 * view.cost(s));
        recosted.add(s);
      }
    }
    placer.costsChanged(recosted, members, view);
    Member[] after = owners(view);
    assertNotEquals(Arrays.asList(placed), Arrays.asList(after));
    // The same as a placer placing these costs from nothing.
    long[] now = new long[n];
    for (int s = 0; s < n; s++) {
      now[s] = view.cost(s);
    }
    PlacerParts.View fresh = new PlacerParts.View(PlacerParts.hashes(n, 3), now);
    new ConsistentHashingPlacer(1.2, 1.15, 64, true).targetsChanged(all, new IntList(), members,
        fresh);
    assertArrayEquals(owners(fresh), after, "not the placement of the current costs");
  }

  private static Member[] owners(PlacerParts.View view) {
    Member[] out = new Member[view.size()];
    for (int s = 0; s < out.length; s++) {
      out[s] = view.ownerOf(s);
    }
    return out;
  }
}
