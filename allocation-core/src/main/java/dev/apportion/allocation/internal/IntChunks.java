package dev.apportion.allocation.internal;

import java.util.Arrays;

/**
 * The {@code int} counterpart of {@link LongChunks}, for the token ring's grouping of tokens by
 * member: an array in chunks below half of G1's smallest region, so that a large one does not
 * take whole regions of its own. Writer-thread only.
 */
final class IntChunks {
  private final int shift;
  private final int mask;
  private int[][] chunks = new int[0][];
  private int capacity;

  /**
   * An empty array in chunks of {@code 2^shift} values.
   *
   * @param shift the chunks' size in bits, from 1 to 30
   */
  IntChunks(int shift) {
    if (shift < 1 || shift > 30) {
      throw new IllegalArgumentException("chunk shift " + shift + " is not in [1, 30]");
    }
    this.shift = shift;
    this.mask = (1 << shift) - 1;
  }

  /**
   * The value at {@code i}.
   *
   * @param i below {@link #capacity()}
   * @return the value
   */
  int get(int i) {
    return chunks[i >>> shift][i & mask];
  }

  /**
   * Writes the value at {@code i}.
   *
   * @param i below {@link #capacity()}
   * @param value the value
   */
  void set(int i, int value) {
    chunks[i >>> shift][i & mask] = value;
  }

  /**
   * How many values it can hold now.
   *
   * @return the capacity
   */
  int capacity() {
    return capacity;
  }

  /**
   * Makes room for {@code n} values; what it held is kept only up to the old capacity's chunks
   * (the callers rewrite it whole).
   *
   * @param n the capacity needed
   */
  void ensureCapacity(int n) {
    if (n <= capacity) {
      return;
    }
    int count = LongChunks.chunkCount(n, shift);
    if (count > chunks.length) {
      chunks = Arrays.copyOf(chunks, count);
    }
    for (int c = 0; c < count; c++) {
      int current = chunks[c] == null ? 0 : chunks[c].length;
      int length = LongChunks.chunkLength(c, count, n, shift, current);
      if (length > current) {
        chunks[c] = current == 0 ? new int[length] : Arrays.copyOf(chunks[c], length);
      }
    }
    capacity = ((count - 1) << shift) + chunks[count - 1].length;
  }
}
