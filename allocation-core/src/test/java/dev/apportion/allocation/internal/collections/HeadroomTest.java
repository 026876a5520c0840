package dev.apportion.allocation.internal.collections;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link Headroom#withHeadroom}: a sixteenth more, but no extra MiB of a humongous array unless
 * that would leave less than a sixty-fourth.
 */
class HeadroomTest {
  private static final long MIB = 1L << 20;

  @Test
  void smallArraysGetASixteenthMore() {
    assertEquals(16, Headroom.withHeadroom(0));
    assertEquals(100_000 + 6_250 + 16, Headroom.withHeadroom(100_000));
    assertEquals(51_200 + 3_200 + 16, Headroom.withHeadroom(51_200));
  }

  @Test
  void aRingOf512000TokensStaysInItsFourMebibytes() {
    int n = Headroom.withHeadroom(512_000);
    // 16 bytes of header with compressed class pointers, 24 without: within 4 MiB either way
    assertTrue(24 + 8L * n <= 4 * MIB, "capacity " + n);
    assertTrue(n >= 512_000 + 12_000, "still room for 23 more members of 512 tokens: " + n);
  }

  @Test
  void aMillionSlotsKeepTheirMebibytesForEveryElementSize() {
    int n = Headroom.withHeadroom(1_000_000);
    assertTrue(24 + 8L * n <= 8 * MIB, "longs: " + n);
    assertTrue(24 + 4L * n <= 4 * MIB, "ints: " + n);
    assertTrue(n > 1_040_000, "headroom kept: " + n);
  }

  /**
   * For any n: at least a sixty-fourth more, at most a sixteenth and 16 more, and for every
   * element size no more whole MiBs than n elements take (so no region size from 1 to 32 MiB gets
   * another region), unless the next MiB is closer than a sixty-fourth.
   */
  @Test
  void aSixtyFourthAtLeastAndNoOtherMebibyteUnlessTooClose() {
    SplittableRandom random = new SplittableRandom(7);
    int capped = 0;
    int kept = 0;
    for (int i = 0; i < 100_000; i++) {
      int n = i < 1000 ? i : random.nextInt(1, 300_000_000);
      int c = Headroom.withHeadroom(n);
      assertTrue(c >= n + (n >> 6), n + " -> " + c);
      assertTrue(c <= n + (n >> 4) + 16L, n + " -> " + c);
      boolean wasCapped = c < n + (n >> 4) + 16L;
      capped += wasCapped ? 1 : 0;
      for (int e = 1; e <= 8; e <<= 1) {
        long exact = 24 + (long) n * e;
        long with = 24 + (long) c * e;
        long mebibytes = (exact + MIB - 1) / MIB;
        if (exact >= MIB / 2 && (with + MIB - 1) / MIB != mebibytes) {
          // only where staying within n's MiBs would leave less than a sixty-fourth
          long room = (mebibytes * MIB - 24) / e - n;
          assertTrue(room < (n >> 6), "n " + n + ", " + e + "-byte elements: capacity " + c);
          kept++;
        }
      }
    }
    assertTrue(capped > 1000 && kept > 1000, "both cases seen: " + capped + ", " + kept);
  }

  @Test
  void theLargestSizesDoNotOverflow() {
    for (int n : new int[] {2_021_161_080, 2_021_161_081, 2_100_000_000, Integer.MAX_VALUE - 8}) {
      int c = Headroom.withHeadroom(n);
      assertTrue(c >= n && c <= Integer.MAX_VALUE - 8, n + " -> " + c);
    }
  }

  @Test
  void theRingOfAThousandCollectorsHasRoomForTwentyThreeMore() {
    // the cap of 2-byte elements binds first: (1 MiB - 24) / 2
    assertEquals(524_276, Headroom.withHeadroom(512_000));
  }

  @Test
  void aSizeJustBelowAMebibyteKeepsItsSixteenth() {
    // 1,048,000 longs end 4,584 bytes before 8 MiB: that little room would make a 1% replacement
    // copy every array, so the sixteenth is kept
    int n = 1_048_000;
    assertEquals(n + (n >> 4) + 16, Headroom.withHeadroom(n));
  }
}
