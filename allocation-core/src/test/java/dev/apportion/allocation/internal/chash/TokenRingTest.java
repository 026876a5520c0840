package dev.apportion.allocation.internal.chash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.engine.TestMembers;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link TokenRing}: the tokens' order and counts, the incremental rebuild against a ring built
 * from nothing, the lookup's wrap-around and the in-place merge.
 */
class TokenRingTest {

  /** The ring's tokens: position | id, as the ring holds them. */
  private static long[] tokens(TokenRing ring) {
    long[] out = new long[ring.size()];
    for (int t = 0; t < out.length; t++) {
      out[t] = ring.positionAt(t) | ring.idAt(t);
    }
    return out;
  }

  private static TokenRing fresh(int virtualNodes, Members members) {
    TokenRing ring = new TokenRing(virtualNodes);
    ring.update(members);
    return ring;
  }

  @Test
  void tokensAreSortedUnsignedAndEachMemberHasItsCount() {
    Members members = PlacerParts.members(37, 1, 2, 0.5, 4);
    TokenRing ring = fresh(64, members);
    long[] t = tokens(ring);
    int[] perId = new int[members.size()];
    for (int i = 0; i < t.length; i++) {
      if (i > 0) {
        assertTrue(Long.compareUnsigned(t[i - 1], t[i]) < 0, "token " + i);
      }
      perId[ring.idAt(i)]++;
      assertEquals(0, ring.positionAt(i) & TokenRing.ID_MASK);
    }
    int expected = 0;
    for (Member m : members) {
      assertEquals(ring.tokensFor(m.capacity()), perId[m.id()], m.name());
      assertSame(m, ring.member(m.id()));
      expected += ring.tokensFor(m.capacity());
    }
    assertEquals(expected, ring.size());
    // Positions are spread over the whole unsigned range: some have the top bit set, some not.
    assertTrue(t[0] >= 0 && t[t.length - 1] < 0);
  }

  @Test
  void tokensForIsVirtualNodesTimesCapacityWithinItsLimits() {
    TokenRing ring = new TokenRing(512);
    assertEquals(512, ring.tokensFor(1));
    assertEquals(1024, ring.tokensFor(2));
    assertEquals(256, ring.tokensFor(0.5));
    assertEquals(16, ring.tokensFor(0.001));
    assertEquals(1 << 16, ring.tokensFor(1e6));
  }

  /**
   * Random sequences of removals, additions (a departed member's id reused by a new name, as the
   * engine does) and capacity changes: after each, the incrementally rebuilt ring holds exactly
   * the tokens of a ring built from nothing for the same members.
   */
  @Test
  void aRebuildAfterAddsAndRemovesEqualsARingBuiltFromScratch() {
    // 12 members: a removal passes over every token; 60: a removal's tokens are found by their
    // positions and the runs between them moved. Odd seeds group the tokens by member in chunks
    // of 64, so that groups cross chunks.
    for (long seed = 1; seed <= 20; seed++) {
      Random random = new Random(seed);
      List<Member> byId = new ArrayList<>();
      List<Integer> live = new ArrayList<>();
      int names = 0;
      for (int id = 0; id < (seed <= 10 ? 12 : 60); id++) {
        byId.add(member("m-" + names++, 1, id));
        live.add(id);
      }
      TokenRing ring = seed % 2 == 1 ? new TokenRing(32, 6) : new TokenRing(32);
      ring.update(PlacerParts.subset(byId, live));
      for (int step = 0; step < 60; step++) {
        int op = random.nextInt(4);
        if (op == 0 && live.size() > 1) {
          live.remove(random.nextInt(live.size()));
        } else if (op == 1) {
          // A new collector, with a free id (a departed one's, or the next).
          int id = 0;
          while (live.contains(id)) {
            id++;
          }
          Member m = member("m-" + names++, 1 + random.nextInt(3), id);
          if (id < byId.size()) {
            byId.set(id, m);
          } else {
            byId.add(m);
          }
          live.add(id);
        } else if (op == 2) {
          // The same member, a new capacity: its tokens are made again.
          Member m = byId.get(live.get(random.nextInt(live.size())));
          TestMembers.setCollector(m,
              Collector.of(m.name()).withCapacity(0.5 + random.nextInt(4)));
        } else {
          // Several at once.
          live.remove(random.nextInt(live.size()));
          int id = 0;
          while (live.contains(id)) {
            id++;
          }
          Member m = member("m-" + names++, 1, id);
          if (id < byId.size()) {
            byId.set(id, m);
          } else {
            byId.add(m);
          }
          live.add(id);
        }
        Members members = PlacerParts.subset(byId, live);
        ring.update(members);
        assertArrayEquals(tokens(fresh(32, members)), tokens(ring), "seed " + seed + " step "
            + step);
        for (Member m : members) {
          assertSame(m, ring.member(m.id()));
        }
        if (step % 3 != 2) {
          // Grouped on most steps, so a grouping left from before an update would show.
          assertGroupedByMember(ring, "seed " + seed + " step " + step);
        }
      }
    }
  }

  /** The tokens grouped by member id list exactly each id's token indices, ascending. */
  private static void assertGroupedByMember(TokenRing ring, String where) {
    ring.indexByMember();
    int listed = 0;
    for (int id = 0; id < ring.idSpan(); id++) {
      List<Integer> expected = new ArrayList<>();
      for (int t = 0; t < ring.size(); t++) {
        if (ring.idAt(t) == id) {
          expected.add(t);
        }
      }
      List<Integer> grouped = new ArrayList<>();
      for (int k = ring.groupFrom(id); k < ring.groupTo(id); k++) {
        grouped.add(ring.groupedToken(k));
      }
      assertEquals(expected, grouped, where + " id " + id);
      listed += grouped.size();
    }
    assertEquals(ring.size(), listed, where);
  }

  private static Member member(String name, double capacity, int id) {
    return new Member(Collector.of(name).withCapacity(capacity), id);
  }

  @Test
  void tokenIndexFindsTheFirstTokenAtOrAfterAndWraps() {
    TokenRing ring = fresh(16, PlacerParts.members(5, 1));
    int last = ring.size() - 1;
    // Past the last token: the first.
    assertEquals(0, ring.tokenIndex(ring.positionAt(last) + (1L << TokenRing.ID_BITS)));
    assertEquals(0, ring.tokenIndex(-1L));
    assertEquals(0, ring.tokenIndex(0L));
    for (int t = 0; t < ring.size(); t++) {
      long p = ring.positionAt(t);
      // At a token: that token, whatever the key's id bits.
      assertEquals(t, ring.tokenIndex(p));
      assertEquals(t, ring.tokenIndex(p | TokenRing.ID_MASK));
      // Just before it: that token too.
      if (t > 0 && ring.positionAt(t - 1) != p - (1L << TokenRing.ID_BITS)) {
        assertEquals(t, ring.tokenIndex(p - (1L << TokenRing.ID_BITS)));
      }
      // Just past it: the next one, round the ring.
      assertEquals(t == last ? 0 : t + 1, ring.tokenIndex(p + (1L << TokenRing.ID_BITS)));
    }
  }

  @Test
  void mergeFromTheBackMergesUnsignedRunsInPlace() {
    Random random = new Random(3);
    for (int trial = 0; trial < 200; trial++) {
      int xn = random.nextInt(50);
      int yn = random.nextInt(50);
      long[] x = new long[xn + yn];
      long[] y = new long[yn];
      for (int i = 0; i < xn; i++) {
        x[i] = random.nextInt(4) == 0 ? random.nextInt(10) : random.nextLong();
      }
      for (int i = 0; i < yn; i++) {
        y[i] = random.nextInt(4) == 0 ? random.nextInt(10) : random.nextLong();
      }
      sortUnsigned(x, xn);
      sortUnsigned(y, yn);
      long[] expected = Arrays.copyOf(x, xn + yn);
      System.arraycopy(y, 0, expected, xn, yn);
      sortUnsigned(expected, xn + yn);
      TokenRing.mergeFromTheBack(x, xn, y, yn);
      assertArrayEquals(expected, x, "trial " + trial);
    }
  }

  private static void sortUnsigned(long[] a, int n) {
    for (int i = 0; i < n; i++) {
      a[i] ^= Long.MIN_VALUE;
    }
    Arrays.sort(a, 0, n);
    for (int i = 0; i < n; i++) {
      a[i] ^= Long.MIN_VALUE;
    }
  }

  @Test
  void anIdPastTwentyBitsIsRefused() {
    Members members = new Members(new Member[] {member("big", 1, 1 << TokenRing.ID_BITS)});
    TokenRing ring = new TokenRing(16);
    assertThrows(IllegalStateException.class, () -> ring.update(members));
  }
  /**
   * A ring built in buckets holds what generating every token and sorting them all gives, from a
   * few hundred tokens to half a million and with capacities that give members different token
   * counts; and an incremental rebuild from it (the removed members' tokens dropped, none added)
   * matches a ring built from nothing for the members left.
   */
  @Test
  void aRingBuiltInBucketsIsTheSortedSetOfItsTokens() {
    for (int collectors : new int[] {1, 2, 7, 8, 63, 64, 65, 1000}) {
      Members members = PlacerParts.members(collectors, 1, 2, 0.5, 4);
      TokenRing ring = fresh(64, members);
      java.util.List<Long> expected = new java.util.ArrayList<>();
      for (Member m : members) {
        for (int j = 0; j < ring.tokensFor(m.capacity()); j++) {
          expected.add(TokenRing.tokenPosition(m, j) | m.id());
        }
      }
      expected.sort(Long::compareUnsigned);
      long[] t = tokens(ring);
      assertEquals(expected.size(), t.length, collectors + " collectors");
      for (int i = 0; i < t.length; i++) {
        assertEquals(expected.get(i).longValue(), t[i], collectors + " collectors, token " + i);
      }
      if (collectors > 3) {
        Members fewer = PlacerParts.members(collectors - 3, 1, 2, 0.5, 4);
        ring.update(fewer);
        org.junit.jupiter.api.Assertions.assertArrayEquals(tokens(fresh(64, fewer)), tokens(ring),
            collectors + " collectors, three fewer");
      }
    }
  }
}
