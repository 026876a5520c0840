package dev.apportion.allocation.internal;

import java.util.Arrays;

/**
 * A growable array of {@code long}s held in chunks of {@code 2^shift} values, for the structures
 * whose size is a multiple of the collectors' count rather than of the targets' (the token ring:
 * 512 tokens a collector), which one array would make larger than half a G1 region. G1 gives such
 * an array whole regions of its own ("humongous") and the tail of the last is lost: the ring of
 * 1000 collectors, 4.2 MB, took two 4 MB regions, 38 bytes a target of nothing. A chunk of the
 * default size ({@value #DEFAULT_SHIFT} bits: 256 KB) is below half of the smallest region (1
 * MB), so the heap holds the values and little more.
 *
 * <p>Every chunk but the last is full; the last grows with headroom up to a full chunk, so a small
 * ring stays one small array. Reads cost one more load than a flat array's (the chunk), which sits
 * in a short array read by every access. Writer-thread only.
 */
final class LongChunks {
  /** Chunks of 32,768 values: 256 KB, below half of G1's smallest region. */
  static final int DEFAULT_SHIFT = 15;

  private final int shift;
  private final int mask;
  private long[][] chunks = new long[0][];
  private int capacity;

  /** An empty array in chunks of {@value #DEFAULT_SHIFT} bits. */
  LongChunks() {
    this(DEFAULT_SHIFT);
  }

  /**
   * An empty array in chunks of {@code 2^shift} values (small shifts are for tests: they make
   * every operation cross chunks).
   *
   * @param shift the chunks' size in bits, from 1 to 30
   */
  LongChunks(int shift) {
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
  long get(int i) {
    return chunks[i >>> shift][i & mask];
  }

  /**
   * Writes the value at {@code i}.
   *
   * @param i below {@link #capacity()}
   * @param value the value
   */
  void set(int i, long value) {
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
   * Makes room for {@code n} values, keeping those held: new chunks, and the last one grown (with
   * headroom, up to a full chunk). Allocates at most a chunk's copy besides the new chunks.
   *
   * @param n the capacity needed
   */
  void ensureCapacity(int n) {
    if (n <= capacity) {
      return;
    }
    int count = chunkCount(n, shift);
    if (count > chunks.length) {
      chunks = Arrays.copyOf(chunks, count);
    }
    for (int c = 0; c < count; c++) {
      int length = chunkLength(c, count, n, shift, chunks[c] == null ? 0 : chunks[c].length);
      if (chunks[c] == null) {
        chunks[c] = new long[length];
      } else if (chunks[c].length < length) {
        chunks[c] = Arrays.copyOf(chunks[c], length);
      }
    }
    capacity = ((count - 1) << shift) + chunks[count - 1].length;
  }

  /**
   * Copies {@code length} values from {@code from} to {@code to}, either way, as {@link
   * System#arraycopy} does within one array (the ranges may overlap).
   *
   * @param from the first value's index
   * @param to where it goes
   * @param length how many values
   */
  void move(int from, int to, int length) {
    if (length <= 0 || from == to) {
      return;
    }
    if (to < from) {
      // Left: ascending, one piece at a time that stays within a chunk at both ends.
      while (length > 0) {
        int piece = Math.min(length, Math.min(mask + 1 - (from & mask), mask + 1 - (to & mask)));
        System.arraycopy(chunks[from >>> shift], from & mask, chunks[to >>> shift], to & mask,
            piece);
        from += piece;
        to += piece;
        length -= piece;
      }
    } else {
      // Right: descending, from the ends.
      int fromEnd = from + length;
      int toEnd = to + length;
      while (length > 0) {
        int piece = Math.min(length, Math.min(((fromEnd - 1) & mask) + 1,
            ((toEnd - 1) & mask) + 1));
        fromEnd -= piece;
        toEnd -= piece;
        System.arraycopy(chunks[fromEnd >>> shift], fromEnd & mask, chunks[toEnd >>> shift],
            toEnd & mask, piece);
        length -= piece;
      }
    }
  }

  /** How many chunks {@code n} values need. */
  static int chunkCount(int n, int shift) {
    return (int) ((n + (1L << shift) - 1) >>> shift);
  }

  /**
   * The length chunk {@code c} of {@code count} needs to hold {@code n} values: full but for the
   * last, which takes what it needs with an eighth more (up to a full chunk) when it must grow
   * past {@code current}.
   */
  static int chunkLength(int c, int count, int n, int shift, int current) {
    int full = 1 << shift;
    if (c < count - 1) {
      return full;
    }
    int need = n - (c << shift);
    if (need <= current) {
      return current;
    }
    return (int) Math.min(full, need + (need >> 3) + 16L);
  }
}
