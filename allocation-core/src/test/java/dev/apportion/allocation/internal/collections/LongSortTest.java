package dev.apportion.allocation.internal.collections;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The radix sort orders like {@link Arrays#sort(long[])}, on both sides of its cut-over. */
class LongSortTest {

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 100, 2047, 2048, 5000, 100_000})
  void sortsLikeArraysSort(int n) {
    LongSort sorter = new LongSort();
    for (long seed = 1; seed <= 5; seed++) {
      Random random = new Random(seed);
      long[] keys = new long[n + 3];
      for (int i = 0; i < keys.length; i++) {
        switch ((int) (seed % 3)) {
          case 0 -> keys[i] = random.nextLong();
          // Few distinct values, negative and positive: equal digits, skipped passes.
          case 1 -> keys[i] = (random.nextInt(7) - 3) * 0x0100_0000_0000_0001L;
          default -> keys[i] = random.nextBoolean() ? Long.MIN_VALUE + random.nextInt(100)
              : Long.MAX_VALUE - random.nextInt(100);
        }
      }
      long[] expected = keys.clone();
      Arrays.sort(expected, 0, n);
      sorter.sort(keys, n);
      assertArrayEquals(expected, keys, "seed " + seed);
    }
  }
}
