package dev.apportion.allocation.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SplitMix64Test {

  /** The reference implementation's output for seed 1234567 (Vigna's splitmix64.c). */
  @Test
  void matchesTheReferenceOutput() {
    SplitMix64 r = new SplitMix64(1234567L);
    assertEquals(Long.parseUnsignedLong("6457827717110365317"), r.nextLong());
    assertEquals(Long.parseUnsignedLong("3203168211198807973"), r.nextLong());
    assertEquals(Long.parseUnsignedLong("9817491932198370423"), r.nextLong());
    assertEquals(Long.parseUnsignedLong("4593380528125082431"), r.nextLong());
    assertEquals(Long.parseUnsignedLong("16408922859458223821"), r.nextLong());
  }

  @Test
  void boundedDrawsStayInRangeAndCoverIt() {
    SplitMix64 r = new SplitMix64(7);
    int[] seen = new int[5];
    for (int i = 0; i < 1000; i++) {
      int v = r.between(3, 7);
      assertTrue(v >= 3 && v <= 7, "in range: " + v);
      seen[v - 3]++;
    }
    for (int count : seen) {
      assertTrue(count > 150, "every value drawn about a fifth of the time: " + count);
    }
    assertThrows(IllegalArgumentException.class, () -> r.nextInt(0));
  }

  @Test
  void trySeedsDifferFromTryToTryAndFromBaseToBase() {
    assertNotEquals(SplitMix64.trySeed(1, 0), SplitMix64.trySeed(1, 1));
    assertNotEquals(SplitMix64.trySeed(1, 0), SplitMix64.trySeed(2, 0));
    assertEquals(SplitMix64.trySeed(42, 3), SplitMix64.trySeed(42, 3));
  }
}
