package dev.apportion.allocation.internal.chash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.internal.ConsistentHashingTest;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.engine.Slots;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link BoundedMatching}: within the caps, primaries before overflow, targets costlier than
 * every cap alone, and a result that depends on the sets alone.
 */
class BoundedMatchingTest {

  private static long[] unitCosts(int n) {
    long[] out = new long[n];
    java.util.Arrays.fill(out, 1);
    return out;
  }

  /** Counts and costs, equal and mixed capacities, one member with per-collector limits. */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void noCollectorGoesAboveItsCapOrLimit(boolean costs) {
    for (long seed = 1; seed <= 4; seed++) {
      int n = 8_000 + (int) seed * 777;
      Members members = PlacerParts.members(23, seed % 2 == 0 ? new double[] {1}
          : new double[] {1, 2, 4});
      members.get(3).limits(150, Long.MAX_VALUE);
      PlacerParts.View view = new PlacerParts.View(PlacerParts.hashes(n, seed),
          costs ? PlacerParts.paretoCosts(n, seed) : unitCosts(n));
      view.heldOutside(members.get(3), 40);
      PlacerParts.Pipeline p = new PlacerParts.Pipeline(64, 1.2, 1.15, true);
      p.match(members, view);
      assertEquals(0, p.matching.oversize());
      long[] load = new long[members.size()];
      int[] count = new int[members.size()];
      Member[] owner = p.bySlot(view);
      for (int s = 0; s < n; s++) {
        load[owner[s].id()] += view.cost(s);
        count[owner[s].id()]++;
      }
      for (Member m : members) {
        int id = m.id();
        String at = "seed " + seed + " " + m.name();
        assertTrue(load[id] <= p.bounds.cap(id), at + ": " + load[id] + " > " + p.bounds.cap(id));
        assertTrue(count[id] <= p.bounds.countCap(id), at);
        assertEquals(load[id], p.bounds.load(id), at);
        assertEquals(count[id], p.bounds.count(id), at);
      }
      assertEquals(110, count[3]);
    }
  }

  /**
   * The sort keys are scratch: a matching whose keys' array was let go ({@link
   * BoundedMatching#releaseKeys}, as a placer does after a large placement) matches the same
   * view to the same owners when it runs again ({@code ConsistentHashingTest} covers the probe
   * rounds of the changes that follow such a placement).
   */
  @Test
  void aMatchAfterTheKeysWereReleasedPlacesTheSame() {
    int n = 9_000;
    Members members = PlacerParts.members(29, 1);
    PlacerParts.View view = new PlacerParts.View(PlacerParts.hashes(n, 5), unitCosts(n));
    PlacerParts.Pipeline p = new PlacerParts.Pipeline(16, 1.1, 1.1, true);
    p.match(members, view);
    Member[] first = p.bySlot(view);
    p.matching.releaseKeys();
    p.match(members, view);
    org.junit.jupiter.api.Assertions.assertArrayEquals(first, p.bySlot(view));
  }

  /**
   * A few targets on a large ring (more than {@link
   * BoundedMatching#SEARCH_ABOVE_TOKENS_PER_TARGET} tokens a target) find their tokens by a
   * search: each target's first choice is its ring successor's member, and with the floor phase's
   * arcs recorded, each token's first target past it is what a walk over the ring gives.
   */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aFewTargetsOnALargeRingFindTheTokensAWalkFinds(boolean arcs) {
    for (long seed = 1; seed <= 6; seed++) {
      int n = 10 + (int) seed * 7;
      // Capacities 1 and 2: weighted, so the floor phase's arcs are recorded; 1 alone: they are not.
      Members members = arcs ? PlacerParts.members(300, 1, 2) : PlacerParts.members(300, 1);
      PlacerParts.Pipeline p = new PlacerParts.Pipeline(64, 100, 100, true);
      p.ring.update(members);
      int count = p.ring.size();
      // Random targets, and the edges: past the last token (it wraps to the first), before the
      // first, exactly on a token, just past one.
      long[] hashes = PlacerParts.hashes(n, seed);
      hashes[0] = -1L;
      hashes[1] = 0L;
      hashes[2] = p.ring.positionAt(count / 3);
      hashes[3] = p.ring.positionAt(2 * count / 3) + (1L << TokenRing.ID_BITS);
      hashes[4] = p.ring.positionAt(count - 1);
      PlacerParts.View view = new PlacerParts.View(hashes, unitCosts(n));
      assertEquals(arcs, p.match(members, view));
      assertTrue(count > BoundedMatching.SEARCH_ABOVE_TOKENS_PER_TARGET * n, "searched");
      Member[] owner = p.bySlot(view);
      for (int i = 0; i < n; i++) {
        long q = view.hashAt(i) & TokenRing.POSITION_MASK;
        int t = 0;
        while (t < count && Long.compareUnsigned(p.ring.positionAt(t), q) < 0) {
          t++;
        }
        Member successor = p.ring.member(p.ring.idAt(t == count ? 0 : t));
        // Caps of 100 times the mean: nobody is rejected, every target is its successor's.
        assertEquals(successor, owner[view.slotAt(i)], "seed " + seed + " target " + i);
        if (arcs) {
          assertEquals(q, p.scratch.position[i], "seed " + seed + " target " + i);
        }
      }
      if (arcs) {
        for (int t = 0; t < count; t++) {
          long at = p.ring.positionAt(t);
          int first = 0;
          for (int i = 0; i < n; i++) {
            if (Long.compareUnsigned(view.hashAt(i) & TokenRing.POSITION_MASK, at) > 0) {
              first = i;
              break;
            }
          }
          assertEquals(first, p.scratch.firstAfter[t], "seed " + seed + " token " + t);
        }
      }
    }
  }

  /**
   * {@link BoundedMatching#firstNotBelow} against a walk, from every kind of start: positions
   * before the first token, past the last, on a token, between two, and starts at and past the
   * ring's end.
   */
  @Test
  void theSearchStopsWhereTheWalkStops() {
    Members members = PlacerParts.members(40, 1, 3);
    PlacerParts.Pipeline p = new PlacerParts.Pipeline(16, 1.2, 1.2, true);
    p.ring.update(members);
    int count = p.ring.size();
    java.util.SplittableRandom random = new java.util.SplittableRandom(11);
    for (int k = 0; k < 200_000; k++) {
      int t = random.nextInt(count + 2);
      long q;
      switch (k % 4) {
        case 0 -> q = random.nextLong() & TokenRing.POSITION_MASK;
        case 1 -> q = p.ring.positionAt(random.nextInt(count));
        case 2 -> q = p.ring.positionAt(random.nextInt(count)) + (1L << TokenRing.ID_BITS);
        default -> q = k % 8 == 3 ? TokenRing.POSITION_MASK : 0L;
      }
      int walk = t;
      while (walk < count && Long.compareUnsigned(p.ring.positionAt(walk), q) < 0) {
        walk++;
      }
      assertEquals(walk, p.matching.firstNotBelow(t, count, q), "from " + t + " to " + q);
    }
  }

  /**
   * Unit costs: a collector offered no more than its cap by the targets its tokens own (its
   * primaries) keeps them all; one offered more keeps exactly its cap of them, the closest to its
   * tokens, and no overflow from elsewhere. An overflowing target never displaces a primary.
   */
  @Test
  void primariesBeatOverflowAndTheClosestPrimariesStay() {
    int n = 12_000;
    Members members = PlacerParts.members(31, 1);
    PlacerParts.View view = new PlacerParts.View(PlacerParts.hashes(n, 9), unitCosts(n));
    PlacerParts.Pipeline p = new PlacerParts.Pipeline(16, 1.1, 1.1, true);
    p.match(members, view);
    Member[] owner = p.bySlot(view);
    Map<Integer, List<long[]>> primaries = new HashMap<>();
    int[] primary = new int[n];
    for (int s = 0; s < n; s++) {
      int t = p.ring.tokenIndex(view.hash(s));
      primary[s] = p.ring.idAt(t);
      long distance = p.ring.positionAt(t) - (view.hash(s) & TokenRing.POSITION_MASK);
      primaries.computeIfAbsent(primary[s], k -> new ArrayList<>())
          .add(new long[] {distance, s});
    }
    int full = 0;
    for (Member m : members) {
      int id = m.id();
      List<long[]> mine = primaries.getOrDefault(id, List.of());
      long cap = p.bounds.cap(id);
      long kept = mine.stream().filter(e -> owner[(int) e[1]] == m).count();
      if (mine.size() <= cap) {
        assertEquals(mine.size(), kept, m.name() + " keeps all its primaries");
        continue;
      }
      full++;
      assertEquals(cap, kept, m.name() + " keeps its cap of its primaries");
      assertEquals(cap, p.bounds.count(id), m.name() + " takes no overflow");
      // The kept are the closest (to the sort key's precision: ties go by position).
      long farthestKept = Long.MIN_VALUE;
      long closestRejected = Long.MAX_VALUE;
      for (long[] e : mine) {
        long d = e[0] >>> 24;
        if (owner[(int) e[1]] == m) {
          farthestKept = Math.max(farthestKept, d);
        } else {
          closestRejected = Math.min(closestRejected, d);
        }
      }
      assertTrue(farthestKept <= closestRejected, m.name());
    }
    assertTrue(full > 3, "the test needs full collectors: " + full);
  }

  /**
   * The same targets in other slots, the members under other ids, a ring and scratch that
   * served other sets before: every target lands on the same member.
   */
  @Test
  void theResultDependsOnTheSetsAloneNotOnSlotsIdsOrHistory() {
    int n = 6_000;
    long[] hashes = PlacerParts.hashes(n, 5);
    long[] costs = PlacerParts.paretoCosts(n, 5);
    Members members = PlacerParts.members(17, 1, 2);
    PlacerParts.View view = new PlacerParts.View(hashes, costs);
    PlacerParts.Pipeline fresh = new PlacerParts.Pipeline(32, 1.2, 1.15, true);
    fresh.match(members, view);
    Map<Long, String> expected = byHash(view, fresh.bySlot(view));

    // Slots shuffled.
    Random random = new Random(5);
    int[] perm = new int[n];
    for (int i = 0; i < n; i++) {
      perm[i] = i;
    }
    for (int i = n - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    long[] h2 = new long[n];
    long[] c2 = new long[n];
    for (int i = 0; i < n; i++) {
      h2[perm[i]] = hashes[i];
      c2[perm[i]] = costs[i];
    }
    // Ids reversed.
    Member[] reversed = new Member[members.size()];
    for (int i = 0; i < reversed.length; i++) {
      Member m = members.get(i);
      reversed[i] = new Member(m.collector(), members.size() - 1 - i);
    }
    PlacerParts.View shuffled = new PlacerParts.View(h2, c2);
    PlacerParts.Pipeline used = new PlacerParts.Pipeline(32, 1.2, 1.15, true);
    // History: a larger view on other members first.
    used.match(PlacerParts.members(40, 1), new PlacerParts.View(PlacerParts.hashes(2 * n, 6),
        PlacerParts.paretoCosts(2 * n, 6)));
    used.match(new Members(reversed), shuffled);
    assertEquals(expected, byHash(shuffled, used.bySlot(shuffled)));
  }

  private static Map<Long, String> byHash(PlacerParts.View view, Member[] owner) {
    Map<Long, String> out = new HashMap<>();
    for (int s = 0; s < view.size(); s++) {
      out.put(view.hash(s), owner[s].name());
    }
    return out;
  }

  /**
   * A target costlier than every cap is set aside: placed alone where it fits best, no other
   * target on its collector, and the others within the caps of the rest.
   */
  @Test
  void aTargetCostlierThanEveryCapIsPlacedAlone() {
    int n = 3_000;
    long[] costs = PlacerParts.paretoCosts(n, 2);
    costs[17] = 1_000_000;
    Members members = PlacerParts.members(9, 1);
    PlacerParts.View view = new PlacerParts.View(PlacerParts.hashes(n, 2), costs);
    PlacerParts.Pipeline p = new PlacerParts.Pipeline(32, 1.2, 1.15, true);
    p.match(members, view);
    assertEquals(1, p.matching.oversize());
    assertTrue(p.matching.largestCap() < 1_000_000);
    Member[] owner = p.bySlot(view);
    Member alone = owner[17];
    long[] load = new long[members.size()];
    for (int s = 0; s < n; s++) {
      assertTrue(s == 17 || owner[s] != alone, "slot " + s + " joined the oversize target");
      load[owner[s].id()] += costs[s];
    }
    assertEquals(1, p.bounds.count(alone.id()));
    for (Member m : members) {
      if (m != alone) {
        assertTrue(load[m.id()] <= p.bounds.cap(m.id()), m.name());
        assertTrue(p.bounds.cap(m.id()) <= p.matching.largestCap(), m.name());
      }
    }
  }

  @Test
  void theSortKeyOrdersByIdThenDistanceThenPosition() {
    int idBits = 5;
    int indexBits = 12;
    long a = BoundedMatching.key(3, 1L << 40, 7, idBits, indexBits);
    long b = BoundedMatching.key(3, 1L << 41, 2, idBits, indexBits);
    long c = BoundedMatching.key(4, 0, 0, idBits, indexBits);
    long d = BoundedMatching.key(3, 1L << 40, 8, idBits, indexBits);
    assertTrue(a >= 0 && b >= 0 && c >= 0 && BoundedMatching.key(31, -1L, 4095, 5, 12) >= 0);
    assertTrue(a < d && d < b && b < c);
    assertEquals(7, a & ((1L << indexBits) - 1));
    assertEquals(3, a >>> (63 - idBits));
  }
}
