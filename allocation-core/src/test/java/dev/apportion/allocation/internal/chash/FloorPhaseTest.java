package dev.apportion.allocation.internal.chash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link FloorPhase}: collectors below their floor reach it when nearby targets allow, and no
 * pull takes another collector below its floor, above its own cap, or moves a target set aside.
 */
class FloorPhaseTest {

  /** One weighted placement, and its loads and choices before the floor phase. */
  private static final class Run {
    private final PlacerParts.Pipeline p;
    private final Members members;
    private final PlacerParts.View view;
    private final long[] loadBefore;
    private final int[] chosenBefore;

    Run(PlacerParts.Pipeline p, Members members, PlacerParts.View view, long[] loadBefore,
        int[] chosenBefore) {
      this.p = p;
      this.members = members;
      this.view = view;
      this.loadBefore = loadBefore;
      this.chosenBefore = chosenBefore;
    }

    PlacerParts.Pipeline p() {
      return p;
    }

    Members members() {
      return members;
    }

    PlacerParts.View view() {
      return view;
    }

    long[] loadBefore() {
      return loadBefore;
    }

    int[] chosenBefore() {
      return chosenBefore;
    }
  }

  private static Run matchOnly(long seed, int virtualNodes, int n, int c, long[] costs) {
    return matchOnly(seed, virtualNodes, n, c, costs, 1.15);
  }

  private static Run matchOnly(long seed, int virtualNodes, int n, int c, long[] costs,
      double costLoadFactor) {
    Members members = PlacerParts.members(c, 1, 2, 3);
    PlacerParts.View view = new PlacerParts.View(PlacerParts.hashes(n, seed), costs);
    PlacerParts.Pipeline p = new PlacerParts.Pipeline(virtualNodes, 1.2, costLoadFactor, true);
    assertTrue(p.match(members, view));
    long[] load = new long[p.ring.idSpan()];
    for (Member m : members) {
      load[m.id()] = p.bounds.load(m.id());
    }
    return new Run(p, members, view, load, Arrays.copyOf(p.scratch.chosen, n));
  }

  private static int belowFloor(Run r) {
    int below = 0;
    for (Member m : r.members()) {
      below += r.p().bounds.load(m.id()) < r.p().bounds.floor(m.id()) ? 1 : 0;
    }
    return below;
  }

  /**
   * Many light targets and few tokens (uneven arcs): the matching leaves several collectors
   * below their floor, and the floor phase lifts every one of them to it.
   */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4})
  void collectorsBelowTheirFloorReachItWhenTheTargetsAllow(long seed) {
    int n = 20_000;
    long[] costs = new long[n];
    Random random = new Random(seed);
    for (int i = 0; i < n; i++) {
      costs[i] = 1L + random.nextInt(8);
    }
    Run r = matchOnly(seed, 16, n, 12, costs);
    int before = belowFloor(r);
    assertTrue(before > 0, "the test needs collectors below their floor");
    r.p().floorPhase.fill(r.members(), n);
    assertEquals(0, belowFloor(r), before + " below their floor before");
    assertInvariants(r);
  }

  /** Heavy-tailed costs: whether or not every floor is reached, the invariants hold. */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6})
  void noPullTakesAnotherBelowItsFloorOrItselfAboveItsCap(long seed) {
    int n = 5_000 + 1_000 * (int) seed;
    long[] costs = PlacerParts.paretoCosts(n, seed);
    // One target costlier than every cap, set aside: it never moves.
    costs[(int) seed] = 10_000_000;
    Run r = matchOnly(seed, 16, n, 7 + (int) seed, costs);
    assertEquals(1, r.p().matching.oversize());
    int before = belowFloor(r);
    r.p().floorPhase.fill(r.members(), n);
    assertTrue(belowFloor(r) <= before);
    assertInvariants(r);
  }

  /**
   * A narrow band (floors at 0.97 of the share): the collectors the needy pull from sit close to
   * their own floor, so a pull that did not check the giver's floor would push it below.
   */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void inANarrowBandNoPullTakesAnotherBelowItsFloor(long seed) {
    int n = 20_000;
    long[] costs = new long[n];
    Random random = new Random(seed);
    for (int i = 0; i < n; i++) {
      costs[i] = 1L + random.nextInt(8);
    }
    Run r = matchOnly(seed, 16, n, 12, costs, 1.03);
    int before = belowFloor(r);
    assertTrue(before > 0, "the test needs collectors below their floor");
    r.p().floorPhase.fill(r.members(), n);
    assertFalse(Arrays.equals(r.chosenBefore(), Arrays.copyOf(r.p().scratch.chosen, n)),
        "the floor phase moved nothing");
    assertTrue(belowFloor(r) < before);
    assertInvariants(r);
  }

  /**
   * One collector emptied onto another after the matching, in a narrow band (floors at 0.97 of
   * the share): it must pull about its whole share back, mostly from collectors near their own
   * floor, and gets there without taking any of them below theirs.
   */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void anEmptiedCollectorRefillsWithoutTakingOthersBelowTheirFloor(long seed) {
    int n = 20_000;
    long[] costs = new long[n];
    Random random = new Random(seed);
    for (int i = 0; i < n; i++) {
      costs[i] = 1L + random.nextInt(8);
    }
    Run matched = matchOnly(seed, 16, n, 6, costs, 1.03);
    PlacerParts.Pipeline p = matched.p();
    int[] chosen = p.scratch.chosen;
    for (int i = 0; i < n; i++) {
      if (chosen[i] == 0) {
        p.bounds.give(0, p.scratch.cost[i]);
        p.bounds.take(1, p.scratch.cost[i]);
        chosen[i] = 1;
      }
    }
    assertEquals(0, p.bounds.load(0));
    long[] load = new long[p.ring.idSpan()];
    for (Member m : matched.members()) {
      load[m.id()] = p.bounds.load(m.id());
    }
    Run r = new Run(p, matched.members(), matched.view(), load, Arrays.copyOf(chosen, n));
    p.floorPhase.fill(r.members(), n);
    assertEquals(0, belowFloor(r));
    assertInvariants(r);
  }

  private static void assertInvariants(Run r) {
    LoadBounds b = r.p().bounds;
    int[] chosen = r.p().scratch.chosen;
    int n = r.view().size();
    long[] load = new long[r.loadBefore().length];
    for (int i = 0; i < n; i++) {
      load[chosen[i]] += r.p().scratch.cost[i];
      if (chosen[i] != r.chosenBefore()[i]) {
        int to = chosen[i];
        assertTrue(r.p().scratch.distance[i] != -1, "a target set aside moved");
        assertTrue(r.loadBefore()[to] < b.floor(to), "moved to a collector not below its floor");
      }
    }
    for (Member m : r.members()) {
      int id = m.id();
      long before = r.loadBefore()[id];
      assertEquals(load[id], b.load(id), m.name() + ": the bounds' load");
      if (before >= b.floor(id)) {
        assertTrue(load[id] >= b.floor(id), m.name() + " pushed below its floor");
      } else {
        assertTrue(load[id] >= before, m.name() + " below its floor lost load");
      }
      assertTrue(load[id] <= Math.max(before, b.cap(id)), m.name() + " pushed above its cap");
    }
  }

  @Test
  void noCollectorBelowItsFloorLeavesEverythingInPlace() {
    int n = 4_000;
    long[] costs = new long[n];
    Arrays.fill(costs, 3);
    Run r = matchOnly(8, 512, n, 3, costs);
    // Wide band (a 1.15 factor, 512 tokens per unit of capacity, 3 collectors): all within it.
    assertEquals(0, belowFloor(r));
    r.p().floorPhase.fill(r.members(), n);
    assertArrayEquals(r.chosenBefore(), Arrays.copyOf(r.p().scratch.chosen, n));
  }

  @Test
  void theHeapPopsInAscendingOrder() {
    Random random = new Random(4);
    for (int trial = 0; trial < 50; trial++) {
      int size = random.nextInt(300);
      long[] keys = new long[size];
      long[] heap = new long[size];
      int h = 0;
      for (int i = 0; i < size; i++) {
        keys[i] = random.nextInt(3) == 0 ? random.nextInt(5) : random.nextLong() >>> 1;
        h = FloorPhase.heapPush(heap, h, keys[i]);
      }
      Arrays.sort(keys);
      for (int i = 0; i < size; i++) {
        assertEquals(keys[i], heap[0], "trial " + trial + " pop " + i);
        h = FloorPhase.heapPop(heap, h);
      }
      assertEquals(0, h);
    }
  }
}
