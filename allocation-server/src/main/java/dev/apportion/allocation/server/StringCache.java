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
 * <p>Values of a name seldom found ({@link #get(String, char[], int, int)}) are not looked up
 * for a while: a lookup that misses costs more than the {@code String} it saves.
 *
 * <p>Why not every value of the last read: holding them all (an open-addressing table of 200,000
 * strings for 100,000 targets) saved all their allocation but made the read slower, each lookup
 * a few cache misses into the table and strings scattered over the heap where a new {@code
 * String} is a bump of the allocation pointer (measured: 60% more CPU per read). This cache stays
 * small enough to stay in the processor's cache.
 *
 * <p>Bounded: {@link #SLOTS} strings of at most {@link #MAX_LENGTH} characters (and a copy of
 * their characters), whatever is read: at most about 1 MB, a few hundred KB in practice.
 * Not thread-safe: a source is read by one thread at a time.
 */
final class StringCache {
  /** Slots; a power of two. */
  static final int SLOTS = 1 << 12;
  /** The longest string kept, in characters; longer ones are made anew. */
  static final int MAX_LENGTH = 64;

  /** Slots of the per-name statistics; a power of two. */
  static final int NAME_SLOTS = 64;
  /** Lookups of one name's values over which its hits are counted. */
  static final int PROBE = 256;
  /** Values of a name passed by, uncached, after a probe found under a quarter of them. */
  static final int SKIP = 1 << 14;

  private final String[] strings = new String[SLOTS];
  /**
   * Per slot: its string's characters at the start of an array reused by the strings that follow
   * it there (one allocated only when a longer one comes), compared with a vectorised {@link
   * Arrays#equals(char[], int, int, char[], int, int)}: a {@code charAt} loop was a tenth of the
   * read, and a copy per string put there allocated as much as the string.
   */
  private final char[][] chars = new char[SLOTS][];
  /** Per slot: its string's hash, the lowest bit replaced by "found since put here". */
  private final int[] hashes = new int[SLOTS];

  /** Per name slot: the name (a parser's canonical instance), compared by reference. */
  private final String[] names = new String[NAME_SLOTS];
  /** Per name slot: its values looked up in the current probe. */
  private final int[] tried = new int[NAME_SLOTS];
  /** Per name slot: how many of those were found. */
  private final int[] found = new int[NAME_SLOTS];
  /** Per name slot: how many of its next values pass by the cache. */
  private final int[] skip = new int[NAME_SLOTS];
  /** Whether the last {@link #get(char[], int, int)} found the string. */
  private boolean hit;

  /** An empty cache. */
  StringCache() {}

  /**
   * The value of label {@code name} (or of another field: any constant instance naming it): as
   * {@link #get(char[], int, int)}, except that a name whose values are seldom found (an
   * address, a pod's name: one per target) passes them by. Its values are counted over {@link
   * #PROBE} lookups; if under a quarter were found, its next {@link #SKIP} values are made anew
   * without a lookup (a lookup that misses costs a hash, a copy into the slot and, on a busy
   * machine, cache misses, more than a new {@code String}), then it is probed again.
   *
   * @param name the label's name, the same instance for each of its values
   * @param text the characters
   * @param offset where the string starts
   * @param length its length
   * @return an equal string
   */
  // ReferenceEquality: a name is its parser's canonical instance; another instance of an equal
  // name only takes the slot over.
  @SuppressWarnings("ReferenceEquality")
  String get(String name, char[] text, int offset, int length) {
    int n = name.hashCode() & (NAME_SLOTS - 1);
    if (names[n] != name) {
      names[n] = name;
      tried[n] = 0;
      found[n] = 0;
      skip[n] = 0;
    }
    if (skip[n] > 0) {
      skip[n]--;
      return length == 0 ? "" : new String(text, offset, length);
    }
    String s = get(text, offset, length);
    if (hit) {
      found[n]++;
    }
    if (++tried[n] == PROBE) {
      if (found[n] < PROBE / 4) {
        skip[n] = SKIP;
      }
      tried[n] = 0;
      found[n] = 0;
    }
    return s;
  }

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
    hit = true;
    if (length == 0) {
      return "";
    }
    hit = false;
    if (length > MAX_LENGTH) {
      return new String(text, offset, length);
    }
    int h = hash(text, offset, length);
    int i = h & (SLOTS - 1);
    String s = strings[i];
    int held = hashes[i];
    if (s != null
        && (held | 1) == (h | 1)
        && s.length() == length
        && Arrays.equals(chars[i], 0, length, text, offset, offset + length)) {
      hashes[i] = held | 1;
      hit = true;
      return s;
    }
    String made = new String(text, offset, length);
    if (s != null && (held & 1) != 0) {
      hashes[i] = held & ~1;
    } else {
      char[] c = chars[i];
      if (c == null || c.length < length) {
        c = new char[Math.min(MAX_LENGTH, Math.max(16, Integer.highestOneBit(length - 1) << 1))];
        chars[i] = c;
      }
      System.arraycopy(text, offset, c, 0, length);
      strings[i] = made;
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
