package dev.apportion.allocation.server;

import java.util.Arrays;

/**
 * The label values a source reads again and again ({@code "true"}, a namespace, a node name),
 * found again by their characters: a parser hands over a value as a range of its own {@code char}
 * buffer, and a value held here comes back as the same {@code String} instance, without
 * allocating one. Values seen once per answer (an address, a pod name) pass through: they cost a
 * hash and a new {@code String}, as without the cache.
 *
 * <p>Direct-mapped: a value's slot is chosen by a hash of its characters; a lookup compares the
 * hash, the length and every character, so it is exact for any text (empty, non-ASCII,
 * surrogates, escapes already decoded by the parser). A value not found replaces the slot's
 * string unless that string was found since it was put there (it then gets a second chance and
 * loses its mark), so a value met at every target is not pushed out by the unique ones between
 * its occurrences.
 *
 * <p>Why not every value of the last read: holding them all (an open-addressing table of 200,000
 * strings for 100,000 targets) saved all their allocation but made the read slower, each lookup
 * a few cache misses into the table and strings scattered over the heap where a new {@code
 * String} is a bump of the allocation pointer (measured: 60% more CPU per read). This cache stays
 * small enough to stay in the processor's cache.
 *
 * <p>Bounded: {@link #SLOTS} strings of at most {@link #MAX_LENGTH} characters (and a copy of
 * their characters), whatever is read: at most about 1.3 MB.
 * Not thread-safe: a source is read by one thread at a time.
 */
final class StringCache {
  /** Slots; a power of two. */
  static final int SLOTS = 1 << 13;
  /** The longest string kept, in characters; longer ones are made anew. */
  static final int MAX_LENGTH = 64;

  private final String[] strings = new String[SLOTS];
  /**
   * Per slot: its string's characters, compared with a vectorised {@link Arrays#equals(char[],
   * int, int, char[], int, int)} (a {@code charAt} loop was a tenth of the read).
   */
  private final char[][] chars = new char[SLOTS][];
  /** Per slot: its string's hash, the lowest bit replaced by "found since put here". */
  private final int[] hashes = new int[SLOTS];

  /** An empty cache. */
  StringCache() {}

  /**
   * The string of {@code length} characters of {@code text} from {@code offset}: the instance
   * held if one is equal, else a new one.
   *
   * @param text the characters
   * @param offset where the string starts
   * @param length its length
   * @return an equal string
   */
  String get(char[] text, int offset, int length) {
    if (length == 0) {
      return "";
    }
    if (length > MAX_LENGTH) {
      return new String(text, offset, length);
    }
    int h = hash(text, offset, length);
    int i = h & (SLOTS - 1);
    String s = strings[i];
    int held = hashes[i];
    if (s != null
        && (held | 1) == (h | 1)
        && Arrays.equals(chars[i], 0, chars[i].length, text, offset, offset + length)) {
      hashes[i] = held | 1;
      return s;
    }
    String made = new String(text, offset, length);
    if (s != null && (held & 1) != 0) {
      hashes[i] = held & ~1;
    } else {
      strings[i] = made;
      chars[i] = Arrays.copyOfRange(text, offset, offset + length);
      hashes[i] = h & ~1;
    }
    return made;
  }

  /** A hash of the characters, every bit of each spread over the result. */
  static int hash(char[] text, int offset, int length) {
    int h = length;
    int end = offset + length;
    for (int k = offset; k < end; k++) {
      h = 31 * h + text[k];
    }
    h *= 0x9E3779B9;
    return h ^ (h >>> 15);
  }

  /**
   * How many strings are held.
   *
   * @return the count, at most {@link #SLOTS}
   */
  int size() {
    int n = 0;
    for (String s : strings) {
      if (s != null) {
        n++;
      }
    }
    return n;
  }

  @Override
  public String toString() {
    return "StringCache{" + size() + " strings}";
  }
}
