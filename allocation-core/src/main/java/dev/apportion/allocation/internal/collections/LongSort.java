package dev.apportion.allocation.internal.collections;

import java.util.Arrays;

/**
 * Sorts {@code long}s as signed numbers, fast: a least-significant-digit radix sort, 11 bits a
 * pass (six passes cover 64 bits; the top digit's sign bit is flipped so the order is signed),
 * skipping a pass whose digit is the same in every key. Linear in the number of keys, against
 * {@code n log n} comparisons for {@link Arrays#sort(long[])}: several times faster from a few
 * thousand keys on; below that it defers to {@code Arrays.sort}. An instance owns its scratch
 * buffer and reuses it across calls; not thread-safe.
 */
public final class LongSort {
  /** Below this many keys a comparison sort beats the radix sort's fixed passes. */
  private static final int RADIX_MIN = 2048;
  private static final int DIGIT_BITS = 11;
  private static final int DIGITS = 1 << DIGIT_BITS;

  private long[] buffer = new long[0];
  private final int[] counts = new int[DIGITS];

  /** A sorter with an empty scratch buffer. */
  public LongSort() {}

  /**
   * Sorts {@code keys[0 .. n)} in place, ascending as signed longs. Allocates only to grow its
   * scratch buffer.
   *
   * @param keys the keys
   * @param n how many, from the start of the array
   */
  public void sort(long[] keys, int n) {
    if (n < RADIX_MIN) {
      Arrays.sort(keys, 0, n);
      return;
    }
    if (buffer.length < n) {
      // Grown to what this sort needs (doubling), not to the keys' array: a caller whose array
      // is sized for a full placement sorts a few thousand keys on a small change.
      buffer = new long[Math.min(Math.max(n, 2 * buffer.length), keys.length)];
    }
    long[] from = keys;
    long[] to = buffer;
    for (int shift = 0; shift < 64; shift += DIGIT_BITS) {
      Arrays.fill(counts, 0);
      for (int i = 0; i < n; i++) {
        counts[digit(from[i], shift)]++;
      }
      if (counts[digit(from[0], shift)] == n) {
        continue;
      }
      int sum = 0;
      for (int d = 0; d < DIGITS; d++) {
        int c = counts[d];
        counts[d] = sum;
        sum += c;
      }
      for (int i = 0; i < n; i++) {
        long k = from[i];
        to[counts[digit(k, shift)]++] = k;
      }
      long[] t = from;
      from = to;
      to = t;
    }
    if (from != keys) {
      System.arraycopy(from, 0, keys, 0, n);
    }
  }

  /** Drops the scratch buffer (after a large sort, so that it is not retained). */
  public void release() {
    buffer = new long[0];
  }

  /** The digit of {@code key} at {@code shift}, the top one with its sign bit flipped. */
  private static int digit(long key, int shift) {
    long d = key >>> shift;
    if (shift + DIGIT_BITS >= 64) {
      d ^= 1L << (63 - shift);
    }
    return (int) (d & (DIGITS - 1));
  }
}
