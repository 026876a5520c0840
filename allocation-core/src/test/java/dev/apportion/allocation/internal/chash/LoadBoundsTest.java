package dev.apportion.allocation.internal.chash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.ring.HashRings;
import dev.apportion.allocation.spi.AllocatorSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link LoadBounds}: the caps' range and their randomized rounding, the floors, the limits and
 * the room and take accounting.
 */
class LoadBoundsTest {

  /** A count placement's cap: every target costs 1, so the grid step is 1. */
  private static long cap(double loadFactor, long total, int c, String name) {
    return LoadBounds.memberCap(loadFactor, total, c, HashRings.memberHash(name), 1, c, true, 1);
  }

  @ParameterizedTest
  @ValueSource(doubles = {1.01, 1.05, 1.1, 1.2, 1.5, 2.0})
  void aCountCapIsNeverBelowTheEvenShareNorAboveBoundedLoadCap(double loadFactor) {
    for (int c = 1; c <= 40; c += 3) {
      for (int n = 0; n <= 30_000; n += n < 200 ? 1 : 397) {
        for (int k = 0; k < 5; k++) {
          String at = "collector-" + k + " n " + n + " c " + c;
          long cap = cap(loadFactor, n, c, "collector-" + k);
          assertTrue(cap >= (n + c - 1) / c, at);
          assertTrue(cap <= AllocatorSpec.boundedLoadCap(loadFactor, n, c), at);
        }
      }
    }
  }

  /**
   * With real costs: never below the even share, and once that is 1000 or more (the grid) never
   * above {@code loadFactor} times it, so no load exceeds the load factor; below, at most its
   * ceiling.
   */
  @Test
  void aCostCapIsBetweenTheEvenShareAndTheLoadFactorTimesIt() {
    double loadFactor = 1.15;
    int onGrid = 0;
    for (long total = 1_000; total < 100_000_000L; total = total * 3 + 7) {
      for (int c = 1; c <= 64; c *= 2) {
        for (int k = 0; k < 5; k++) {
          long cap = LoadBounds.memberCap(loadFactor, total, c, HashRings.memberHash("c" + k), 1,
              c, true, (double) Long.highestOneBit(Math.max(1, total / 1000)));
          long even = (total + c - 1) / c;
          double x = loadFactor * total / c;
          String at = "total " + total + " c " + c + " cap " + cap;
          assertTrue(cap >= even, at);
          if (even >= 1000) {
            onGrid++;
            assertTrue(cap <= Math.max(even, (long) Math.floor(x)), at);
          } else {
            assertTrue(cap <= Math.max(even, (long) Math.ceil(x - 1e-9)), at);
          }
        }
      }
    }
    assertTrue(onGrid > 100);
  }

  /**
   * The randomized rounding: as {@code n} grows by one, about {@code loadFactor} caps change (the
   * collectors whose offset {@code u} the drift crosses), never all {@code c} at once as a plain
   * rounding would do at 110 to 111.
   */
  @Test
  void fewCapsChangeWhenTheTargetCountDriftsByOne() {
    double loadFactor = 1.1;
    int c = 1000;
    long[] before = new long[c];
    for (int i = 0; i < c; i++) {
      before[i] = cap(loadFactor, 100_000, c, "collector-" + i);
    }
    int total = 0;
    for (int n = 100_001; n <= 101_000; n++) {
      int changed = 0;
      for (int i = 0; i < c; i++) {
        long cap = cap(loadFactor, n, c, "collector-" + i);
        assertTrue(cap >= before[i], "caps never shrink as n grows");
        changed += cap != before[i] ? 1 : 0;
        before[i] = cap;
      }
      assertTrue(changed <= 12, "n " + n + ": " + changed + " caps changed");
      total += changed;
    }
    // About loadFactor per step (a Poisson count): 1100 over the 1000 steps.
    assertTrue(total > 900 && total < 1300, "caps changed over 1000 steps: " + total);
  }

  @Test
  void theFloorMirrorsTheCap() {
    assertEquals(850, LoadBounds.memberFloor(1.15, 4000, 1, 4));
    assertEquals(1700, LoadBounds.memberFloor(1.15, 4000, 2, 4));
    assertEquals(0, LoadBounds.memberFloor(2.0, 4000, 1, 4));
    assertEquals(0, LoadBounds.memberFloor(2.5, 4000, 1, 4));
    // Rounded up.
    assertEquals(1, LoadBounds.memberFloor(1.5, 1, 1, 4));
  }

  @Test
  void computeHonoursTheMembersLimitsAndTheTwoSidedBound() {
    Members members = PlacerParts.members(4, 1, 3);
    Member limited = members.get(1);
    limited.limits(50, 2_000);
    PlacerParts.View view = new PlacerParts.View(new long[0], new long[0]);
    view.heldOutside(limited, 20);
    LoadBounds bounds = new LoadBounds(1.2, 1.15, true);
    long total = 8_000;
    bounds.compute(members, total, 400, view, true, 4);
    for (Member m : members) {
      int id = m.id();
      double share = total * m.capacity() / members.totalCapacity();
      if (m != limited) {
        assertTrue(bounds.cap(id) >= Math.ceil(share) && bounds.cap(id) <= 1.15 * share,
            m.name() + " cap " + bounds.cap(id));
        assertEquals(Integer.MAX_VALUE, bounds.countCap(id));
      }
      assertEquals(Math.min(bounds.cap(id), (long) Math.ceil(0.85 * share - 1e-9)),
          bounds.floor(id), m.name());
    }
    assertEquals(2_000, bounds.cap(limited.id()));
    assertEquals(30, bounds.countCap(limited.id()));
    // One-sided, or unweighted: no floors, and the count's load factor.
    LoadBounds oneSided = new LoadBounds(1.5, 1.15, false);
    oneSided.compute(members, total, 400, view, true, 4);
    for (Member m : members) {
      assertEquals(0, oneSided.floor(m.id()));
    }
    assertTrue(oneSided.cap(0) > 1.2 * total * members.get(0).capacity() / 8);
  }

  @Test
  void roomTakeAndGiveAccountForCostAndCount() {
    Members members = PlacerParts.members(2, 1);
    members.get(0).limits(3, Long.MAX_VALUE);
    LoadBounds bounds = new LoadBounds(1.2, 1.2, true);
    PlacerParts.View view = new PlacerParts.View(new long[0], new long[0]);
    bounds.compute(members, 100, 10, view, true, 2);
    long cap = bounds.cap(1);
    assertTrue(bounds.room(1, cap));
    assertFalse(bounds.room(1, cap + 1));
    bounds.take(1, cap - 10);
    assertTrue(bounds.room(1, 10));
    assertFalse(bounds.room(1, 11));
    assertEquals(cap - 10, bounds.load(1));
    assertEquals(1, bounds.count(1));
    bounds.give(1, cap - 10);
    assertEquals(0, bounds.load(1));
    assertEquals(0, bounds.count(1));
    // The target limit: three targets, whatever their cost.
    for (int i = 0; i < 3; i++) {
      assertTrue(bounds.room(0, 1));
      bounds.take(0, 1);
    }
    assertFalse(bounds.room(0, 1));
    bounds.clearLoads();
    assertTrue(bounds.room(0, 1));
    assertEquals(0, bounds.load(0));
  }

  /** The bulk reads a collector change's passes make: what the accessors say, at the ids given. */
  @Test
  void copiesAndHeldLoadsAreTheAccessorsValuesAtTheIdsGiven() {
    Members members = PlacerParts.members(4, 1, 3, 2);
    LoadBounds bounds = new LoadBounds(1.2, 1.15, true);
    bounds.compute(members, 8_000, 400, new PlacerParts.View(new long[0], new long[0]), true, 6);
    bounds.take(0, 70);
    bounds.take(2, 30);
    bounds.take(2, 5);
    int[] ids = {2, 0};
    long[] caps = {-1, -1, -1, -1, -1, -1};
    long[] floors = {-1, -1, -1, -1, -1, -1};
    bounds.copyBounds(ids, caps, floors);
    long[] capsOnly = {-1, -1, -1, -1, -1, -1};
    bounds.copyBounds(ids, capsOnly, null);
    long[] offered = {1, 1, 1, 1, 1, 1};
    int[] offeredCount = {1, 1, 1, 1, 1, 1};
    bounds.addHeld(ids, offered, offeredCount);
    for (int id = 0; id < 6; id++) {
      boolean given = id == 0 || id == 2;
      assertEquals(given ? bounds.cap(id) : -1, caps[id], "cap " + id);
      assertEquals(given ? bounds.floor(id) : -1, floors[id], "floor " + id);
      assertEquals(given ? bounds.cap(id) : -1, capsOnly[id], "cap only " + id);
      assertEquals(given ? 1 + bounds.load(id) : 1, offered[id], "offered " + id);
      assertEquals(given ? 1 + bounds.count(id) : 1, offeredCount[id], "count " + id);
    }
    assertEquals(71, offered[0]);
    assertEquals(3, offeredCount[2]);
  }

  @Test
  void fitsBestIsTheLeastLoadRelativeToCapacityTiesToTheSmallerName() {
    Members members = PlacerParts.members(3, 1, 2, 1);
    LoadBounds bounds = new LoadBounds(1.2, 1.2, true);
    bounds.compute(members, 1000, 10, new PlacerParts.View(new long[0], new long[0]), true, 3);
    // All empty: (0 + cost) / capacity is least for the capacity-2 member.
    assertEquals(1, bounds.fitsBest(members, 100));
    bounds.take(1, 300);
    // 400 / 2 = 200 against 100 / 1: the first of the two equal ones.
    assertEquals(0, bounds.fitsBest(members, 100));
    bounds.take(0, 50);
    assertEquals(2, bounds.fitsBest(members, 100));
  }

  @Test
  void withoutOversizeBoundsTheRestAndOnlyShrinksCaps() {
    Members members = PlacerParts.members(5, 1);
    LoadBounds bounds = new LoadBounds(1.2, 1.15, true);
    PlacerParts.View view = new PlacerParts.View(new long[0], new long[0]);
    long total = 100_000;
    bounds.compute(members, total, 1000, view, true, 5);
    long[] caps = new long[5];
    for (int i = 0; i < 5; i++) {
      caps[i] = bounds.cap(i);
    }
    assertEquals(bounds.largestCap(members), java.util.Arrays.stream(caps).max().orElseThrow());
    boolean[] holds = {false, true, false, false, false};
    // Member 1 holds one target of 60 000: the other four share the remaining 40 000.
    bounds.withoutOversize(members, total, 1000, 60_000, 1, holds);
    assertEquals(0, bounds.floor(1));
    assertEquals(caps[1], bounds.cap(1));
    long largest = 0;
    for (int i : new int[] {0, 2, 3, 4}) {
      assertTrue(bounds.cap(i) <= caps[i]);
      assertTrue(bounds.cap(i) >= 10_000 && bounds.cap(i) <= 11_500, "cap " + bounds.cap(i));
      assertEquals(8_500, bounds.floor(i));
      largest = Math.max(largest, bounds.cap(i));
    }
    assertEquals(largest, bounds.largestCapOfOthers(members, holds));
  }
}
