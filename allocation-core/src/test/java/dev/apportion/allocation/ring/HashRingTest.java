package dev.apportion.allocation.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class HashRingTest {
  enum Kind {
    RENDEZVOUS {
      @Override
      HashRing plain(List<String> members) {
        return HashRings.rendezvous(members);
      }

      @Override
      HashRing weighted(Map<String, Double> weights) {
        return HashRings.rendezvous(weights);
      }
    },
    CONSISTENT {
      @Override
      HashRing plain(List<String> members) {
        return HashRings.consistent(members);
      }

      @Override
      HashRing weighted(Map<String, Double> weights) {
        return HashRings.consistent(weights, 256);
      }
    };

    abstract HashRing plain(List<String> members);

    abstract HashRing weighted(Map<String, Double> weights);
  }

  static List<String> names(int n) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add("member-" + i);
    }
    return out;
  }

  static long[] keys(int n, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    long[] out = new long[n];
    for (int i = 0; i < n; i++) {
      out[i] = r.nextLong();
    }
    return out;
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void placementDependsOnlyOnTheMemberSetNotItsOrder(Kind kind) {
    List<String> names = names(50);
    List<String> shuffled = new ArrayList<>(names);
    Collections.shuffle(shuffled, new Random(7));
    HashRing a = kind.plain(names);
    HashRing b = kind.plain(shuffled);
    assertEquals(a.members(), b.members(), "members are in name order");
    for (long k : keys(10_000, 1)) {
      assertEquals(a.ownerIndex(k), b.ownerIndex(k));
    }
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void anIncrementalRingEqualsAFreshOne(Kind kind) {
    HashRing grown = kind.plain(names(20));
    Map<String, Double> next = new LinkedHashMap<>();
    for (String n : names(30)) {
      if (!n.equals("member-4") && !n.equals("member-11")) {
        next.put(n, 1.0);
      }
    }
    grown = grown.withMembers(next);
    HashRing fresh = kind.plain(new ArrayList<>(next.keySet()));
    assertEquals(fresh.members(), grown.members());
    for (long k : keys(20_000, 2)) {
      assertEquals(fresh.owner(k), grown.owner(k));
    }
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void removingAMemberMovesOnlyItsKeys(Kind kind) {
    HashRing before = kind.plain(names(40));
    List<String> less = names(40);
    less.remove("member-13");
    HashRing after = kind.plain(less);
    int moved = 0;
    for (long k : keys(40_000, 3)) {
      String was = before.owner(k);
      if (was.equals("member-13")) {
        moved++;
      } else {
        assertEquals(was, after.owner(k), "a survivor's key moved");
      }
    }
    assertTrue(moved > 500 && moved < 1600, "member-13 held " + moved + " of 40000");
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void addingAMemberMovesKeysOnlyToIt(Kind kind) {
    HashRing before = kind.plain(names(40));
    HashRing after = kind.plain(names(41));
    for (long k : keys(40_000, 4)) {
      String now = after.owner(k);
      if (!now.equals(before.owner(k))) {
        assertEquals("member-40", now);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void ownersAreDistinctInPreferenceOrderAndStartWithTheOwner(Kind kind) {
    HashRing ring = kind.plain(names(12));
    int[] buf = new int[5];
    for (long k : keys(2_000, 5)) {
      List<String> owners = ring.owners(k, 5);
      assertEquals(5, owners.size());
      assertEquals(ring.owner(k), owners.get(0));
      assertEquals(5, new HashSet<>(owners).size());
      assertEquals(5, ring.ownerIndices(k, buf));
      for (int i = 0; i < 5; i++) {
        assertEquals(owners.get(i), ring.member(buf[i]));
      }
    }
    assertEquals(12, ring.owners(1L, 99).size(), "capped at the member count");
    assertEquals(12, new HashSet<>(ring.owners(1L, 99)).size());
    assertThrows(IllegalArgumentException.class, () -> ring.owners(1L, -1));
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void theSecondOwnerIsWhereAKeyGoesWhenItsOwnerLeaves(Kind kind) {
    HashRing ring = kind.plain(names(25));
    for (long k : keys(300, 6)) {
      List<String> two = ring.owners(k, 2);
      List<String> rest = names(25);
      rest.remove(two.get(0));
      assertEquals(two.get(1), kind.plain(rest).owner(k));
    }
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void weightsMapToShares(Kind kind) {
    Map<String, Double> w = new LinkedHashMap<>();
    w.put("small", 1.0);
    w.put("big", 3.0);
    HashRing ring = kind.weighted(w);
    int big = 0;
    long[] ks = keys(100_000, 8);
    for (long k : ks) {
      if (ring.owner(k).equals("big")) {
        big++;
      }
    }
    double share = big / (double) ks.length;
    assertTrue(Math.abs(share - 0.75) < 0.03, "big's share " + share + ", expected 0.75");
    assertEquals(3.0, ring.weight(ring.members().indexOf("big")));
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void balanceIsThatOfRandomPlacement(Kind kind) {
    HashRing ring = kind.plain(names(100));
    int[] counts = new int[100];
    for (long k : keys(100_000, 9)) {
      counts[ring.ownerIndex(k)]++;
    }
    int max = 0;
    int min = Integer.MAX_VALUE;
    for (int c : counts) {
      max = Math.max(max, c);
      min = Math.min(min, c);
    }
    assertTrue(max < 1000 * 1.25, "peak " + max + " of mean 1000");
    assertTrue(min > 1000 * 0.75, "min " + min + " of mean 1000");
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void badInputIsRejectedWithAClearMessage(Kind kind) {
    assertThrows(IllegalArgumentException.class, () -> kind.plain(List.of()));
    assertThrows(NullPointerException.class, () -> kind.plain(null));
    assertThrows(IllegalArgumentException.class, () -> kind.plain(List.of("")));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> kind.weighted(Map.of("a", -1.0)));
    assertTrue(e.getMessage().contains("'a'"), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> kind.weighted(Map.of("a", Double.POSITIVE_INFINITY)));
    assertThrows(IllegalArgumentException.class,
        () -> HashRings.consistent(Map.of("a", 1.0), 0));
  }

  /**
   * Golden values: placement must be identical on every JVM and in every release, since replicas
   * and allocators compare notes through it. If one of these changes, placement changed for every
   * user: that is a breaking change, never a test to update.
   */
  @org.junit.jupiter.api.Test
  void placementIsStable() {
    HashRing r = HashRings.rendezvous(names(10));
    HashRing c = HashRings.consistent(names(10));
    StringBuilder rs = new StringBuilder();
    StringBuilder cs = new StringBuilder();
    for (long k = 0; k < 8; k++) {
      rs.append(r.ownerIndex(k * 0x9E3779B97F4A7C15L));
      cs.append(c.ownerIndex(k * 0x9E3779B97F4A7C15L));
    }
    assertEquals(GOLDEN_RENDEZVOUS, rs.toString());
    assertEquals(GOLDEN_CONSISTENT, cs.toString());
    assertEquals(GOLDEN_MEMBER_HASH, Long.toHexString(HashRings.memberHash("collector-0")));
    assertEquals(GOLDEN_SCORE, Long.toHexString(HashRings.rendezvousScore(1, 2)));
    assertNotEquals(HashRings.rendezvousScore(1, 2), HashRings.rendezvousScore(2, 2));
  }

  static final String GOLDEN_RENDEZVOUS = "44208800";
  static final String GOLDEN_SCORE = "1e535eede31428f0";
  static final String GOLDEN_CONSISTENT = "34410481";
  static final String GOLDEN_MEMBER_HASH = "9afad8c46e4a97e5";
}
