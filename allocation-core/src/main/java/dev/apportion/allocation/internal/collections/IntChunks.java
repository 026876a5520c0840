package dev.apportion.allocation.internal.collections;

import java.util.Arrays;

/**
 * A growable array of {@code int}s held in chunks of {@code 2^shift} values: the token ring's
 * grouping of its tokens by member ({@code chash.TokenRing}), an int a token, 512 tokens
 * a collector. As one array with the ring's headroom it took 2.2 MB for 1000 collectors, above
 * half of a 4 MB G1 region, so G1 gave it a whole region of its own ("humongous") and lost the
 * rest: 18 bytes a target of nothing. A chunk of the default size ({@value #DEFAULT_SHIFT} bits,
 * 256 KB) is below half of the smallest region (1 MB).
 *
 * <p>Every chunk but the last is full; the last grows with an eighth of headroom up to a full
 * chunk, so a small grouping stays one small array. Writer-thread only.
 */
public final class IntChunks {
  /** Chunks of 65,536 values: 256 KB, below half of G1's smallest region. */
  public static final int DEFAULT_SHIFT = 16;

  private final int shift;
  private final int mask;
  private int[][] chunks = new int[0][];
  private int capacity;

  /**
   * An empty array in chunks of {@code 2^shift} values (small shifts are for tests: values then
   * sit in several chunks).
   *
   * @param shift the chunks' size in bits, from 1 to 30
   */
  public IntChunks(int shift) {
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
  public int get(int i) {
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
   * The chunks themselves, for a loop that indexes them directly (value {@code i} is {@code
   * chunks()[i >>> shift()][i & (2^shift() - 1)]}) instead of calling {@link #set} for each
   * ({@link Passes}). {@link #ensureCapacity} replaces the
   * array: read it again after that.
   *
   * @return the live chunks
   */
  public int[][] chunks() {
    return chunks;
  }

  /**
   * The chunks' size in bits.
   *
   * @return the shift
   */
  public int shift() {
    return shift;
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
   * Makes room for {@code n} values, keeping those held: new full chunks, and the last one grown
   * (with an eighth of headroom, up to a full chunk). Allocates the new chunks and at most one
   * chunk's copy.
   *
   * @param n the capacity needed
   */
  public void ensureCapacity(int n) {
    if (n <= capacity) {
      return;
    }
    int count = (int) ((n + (long) mask) >>> shift);
    if (count > chunks.length) {
      chunks = Arrays.copyOf(chunks, count);
    }
    for (int c = 0; c < count; c++) {
      int current = chunks[c] == null ? 0 : chunks[c].length;
      int length;
      if (c < count - 1) {
        length = mask + 1;
      } else {
        int need = n - (c << shift);
        length = need <= current ? current : (int) Math.min(mask + 1L, need + (need >> 3) + 16L);
      }
      if (length > current) {
        chunks[c] = current == 0 ? new int[length] : Arrays.copyOf(chunks[c], length);
      }
    }
    // At most Integer.MAX_VALUE: the last chunk's headroom may reach past it.
    capacity = (int) Math.min(Integer.MAX_VALUE,
        ((long) (count - 1) << shift) + chunks[count - 1].length);
  }
}
