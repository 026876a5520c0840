package dev.apportion.allocation.identity;

/**
 * The non-cryptographic mixers behind the in-memory hashes of label sets: two independent 64-bit
 * finalizers (the key and the check of a label set in {@code TargetInterner}), a 32-bit one for
 * small direct-mapped caches, and a 64-bit hash of a string's characters. None of these values is
 * stable across releases or leaves the process; the identity hash that does is {@link XxHash64}
 * over the {@linkplain Encoder canonical encoding}. All pure functions, allocation-free.
 */
public final class Mixers {
  private Mixers() {}

  /**
   * A 64-bit finalizer (Stafford's variant 13 of MurmurHash3's): every bit affects every bit.
   *
   * @param z the value
   * @return its mix
   */
  public static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /**
   * Another 64-bit finalizer (Stafford's variant 4), independent of {@link #mix}.
   *
   * @param z the value
   * @return its mix
   */
  public static long mix2(long z) {
    z = (z ^ (z >>> 33)) * 0x62A9D9ED799705F5L;
    z = (z ^ (z >>> 28)) * 0xCB24D0A5C88C35B3L;
    return z ^ (z >>> 32);
  }

  /**
   * A 32-bit mix (Fibonacci hashing) whose high bits depend on every bit of {@code h}.
   *
   * @param h a hash code
   * @return its mix
   */
  public static int mixInt(int h) {
    h *= 0x9E3779B9;
    return h ^ (h >>> 16);
  }

  /**
   * A 64-bit hash of {@code s}'s characters, mixed four characters at a time, where {@code
   * String.hashCode()} takes one at a time into 32 bits. Each step is a bijection of the state for
   * a given input word, so two strings of one length that differ in a single word never collide;
   * others collide with probability about 2<sup>-64</sup>. Read with {@code charAt}: for the short
   * values of label sets, measured faster on JDK 17 than a bulk copy into a buffer first ({@code
   * getChars}), whose fixed cost a value of a dozen characters does not repay.
   *
   * @param s a string
   * @return its hash
   */
  public static long charsHash(String s) {
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
