package dev.apportion.allocation;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.function.BiConsumer;

/**
 * Reads a label map in one {@code forEach} pass (no iterator, no entry objects): copies its names
 * and values, interleaved, into {@link #kv}, notes whether any pair is invalid (a null name or
 * value, an empty name), and, when asked, sums an order-independent hash of the pairs for {@link
 * TargetInterner}. Reused by one thread; allocates only to grow.
 */
final class PairReader implements BiConsumer<String, String> {
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  /** Longer values are copied into a buffer of their own, not kept. */
  private static final int MAX_BUFFER = 1 << 12;

  private byte[] buffer = new byte[64];
  String[] kv = new String[32];
  int pairs;
  boolean invalid;
  /** Whether {@link #sum} is computed. */
  boolean hashing;
  /** The sum of {@link TargetInterner#mix} of each pair's name hash code and value hash. */
  long sum;

  void start(int expected) {
    pairs = 0;
    sum = 0;
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
      // A HashMap has cached its names' hash codes; the values are hashed here, in bulk.
      sum += TargetInterner.mix(name.hashCode() * 0x9E3779B97F4A7C15L ^ valueHash(value));
    }
  }

  /**
   * A 64-bit hash of {@code v}'s characters, each taken modulo 256: copied in bulk into a buffer
   * (for a string of Latin-1 characters, the JDK's compact representation, one array copy) and
   * mixed eight bytes at a time, where {@code String.hashCode()} takes one character at a time.
   * Characters above 255 are truncated, so such strings collide more often; that costs a
   * comparison, never a wrong answer: {@link TargetInterner} confirms every match exactly.
   */
  // deprecation: getBytes(int, int, byte[], int) is deprecated for dropping each char's high
  // byte, which is exactly what is wanted here (a bulk copy, no encoding).
  @SuppressWarnings("deprecation")
  long valueHash(String v) {
    int n = v.length();
    byte[] b = buffer;
    if (n > b.length) {
      b = new byte[Math.max(n, b.length << 1)];
      if (n <= MAX_BUFFER) {
        buffer = b;
      }
    }
    v.getBytes(0, n, b, 0);
    long h = n * 0xC2B2AE3D27D4EB4FL;
    int i = 0;
    for (; i + 8 <= n; i += 8) {
      h = (h ^ (long) LONGS.get(b, i)) * 0xBF58476D1CE4E5B9L;
      h ^= h >>> 31;
    }
    long tail = 0;
    for (; i < n; i++) {
      tail = (tail << 8) | (b[i] & 0xFF);
    }
    return (h ^ tail) * 0x94D049BB133111EBL;
  }
}
