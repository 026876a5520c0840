package dev.apportion.allocation.internal.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.apportion.allocation.ring.HashRing;
import dev.apportion.allocation.ring.HashRings;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The placer's flat scoring loop picks exactly the owner the rendezvous ring picks, for every
 * member count around the unrolling's edges, including members with equal scores (ties go to the
 * lower index, the smaller name).
 */
class RendezvousBestTest {

  @Test
  void theFlatLoopAgreesWithTheRing() {
    Random random = new Random(7);
    for (int n = 1; n <= 41; n++) {
      List<String> names = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        names.add(String.format("collector-%03d", i));
      }
      HashRing ring = HashRings.rendezvous(names);
      long[] hashes = new long[n];
      for (int i = 0; i < n; i++) {
        hashes[i] = HashRings.memberHash(ring.member(i));
      }
      for (int k = 0; k < 2000; k++) {
        long key = random.nextLong();
        assertEquals(ring.ownerIndex(key), RendezvousPlacer.best(hashes, key), "n=" + n);
      }
    }
  }

  @Test
  void equalScoresGoToTheLowerIndexWhateverTheLane() {
    for (int n = 1; n <= 17; n++) {
      long[] same = new long[n];
      java.util.Arrays.fill(same, 42L);
      assertEquals(0, RendezvousPlacer.best(same, 99L), "n=" + n);
      for (int winner = 0; winner < n; winner++) {
        long[] hashes = same.clone();
        // Two members tie at the top: the lower index wins.
        long key = 12345L;
        int other = (winner + 5) % n;
        long top = Long.MIN_VALUE;
        long topHash = 0;
        for (long h = 0; h < 200; h++) {
          long s = HashRings.rendezvousScore(h, key);
          if (s > top) {
            top = s;
            topHash = h;
          }
        }
        for (int i = 0; i < n; i++) {
          if (HashRings.rendezvousScore(hashes[i], key) >= top) {
            hashes[i] = topHash == 0 ? 1 : 0;
          }
        }
        hashes[winner] = topHash;
        hashes[other] = topHash;
        assertEquals(Math.min(winner, other), RendezvousPlacer.best(hashes, key), "n=" + n);
      }
    }
  }
}
