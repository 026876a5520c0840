package dev.apportion.allocation;

import java.util.Arrays;
import java.util.function.BiConsumer;

/**
 * Reads a label map in one {@code forEach} pass (no iterator, no entry objects): copies its names
 * and values, interleaved, into {@link #kv}, notes whether any pair is invalid (a null name or
 * value, an empty name), and, when asked, sums two independent order-independent hashes of the
 * pairs for {@link TargetInterner}. Reused by one thread; allocates only to grow.
 */
final class PairReader implements BiConsumer<String, String> {
  String[] kv = new String[32];
  int pairs;
  boolean invalid;
  /** Whether {@link #sum} and {@link #check} are computed. */
  boolean hashing;
  /** The sum of {@link TargetInterner#mix} of each pair's name hash code and value hash. */
  long sum;
  /** The sum of {@link TargetInterner#mix2} of the same, independent of {@link #sum}. */
  long check;

  void start(int expected) {
    pairs = 0;
    sum = 0;
    check = 0;
    invalid = false;
    if (expected << 1 > kv.length) {
      kv = new String[Math.max(expected, 16) << 1];
    }
  }

  @Override
  public void accept(String name, String value) {
    if (name == null || value == null || name.isEmpty()) {
      invalid = true;
      return;
    }
    int p = pairs << 1;
    if (p == kv.length) {
      kv = Arrays.copyOf(kv, p << 1);
    }
    kv[p] = name;
    kv[p + 1] = value;
    pairs++;
    if (hashing) {
      // A HashMap has cached its names' hash codes (the interner compares the names themselves);
      // the values are hashed here, four chars at a time, every char counting.
      long v = charsHash(value);
      long n = name.hashCode();
      sum += TargetInterner.mix(n * 0x9E3779B97F4A7C15L ^ v);
      check += TargetInterner.mix2(v + n * 0xC2B2AE3D27D4EB4FL);
    }
  }

  /**
   * A 64-bit hash of {@code s}'s characters, mixed four characters at a time, where {@code
   * String.hashCode()} takes one at a time into 32 bits. Each step is a bijection of the state for
   * a given input word, so two strings of one length that differ in a single word never collide;
   * others collide with probability about 2<sup>-64</sup>. Read with {@code charAt}: for the short
   * values of label sets, measured faster on JDK 17 than a bulk copy into a buffer first ({@code
   * getChars}), whose fixed cost a value of a dozen characters does not repay.
   */
  static long charsHash(String s) {
    int n = s.length();
    long h = (n + 1) * 0xC2B2AE3D27D4EB4FL;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
      long w = s.charAt(i) | (long) s.charAt(i + 1) << 16 | (long) s.charAt(i + 2) << 32
          | (long) s.charAt(i + 3) << 48;
      h = (h ^ w) * 0xBF58476D1CE4E5B9L;
      h ^= h >>> 31;
    }
    long tail = 0;
    for (; i < n; i++) {
      tail = (tail << 16) | s.charAt(i);
    }
    h = (h ^ tail) * 0x94D049BB133111EBL;
    return h ^ (h >>> 29);
  }
}
