package dev.apportion.allocation;

import java.util.Arrays;
import java.util.function.BiConsumer;

/**
 * Reads a label map in one {@code forEach} pass (no iterator, no entry objects): copies its names
 * and values, interleaved, into {@link #kv}, notes whether any pair is invalid (a null name or
 * value, an empty name), and, when asked, sums an order-independent hash of the pairs for {@link
 * TargetInterner}. Reused by one thread; allocates only to grow.
 */
final class PairReader implements BiConsumer<String, String> {
  String[] kv = new String[32];
  int pairs;
  boolean invalid;
  /** Whether {@link #sum} is computed. */
  boolean hashing;
  /** The sum of {@link TargetInterner#mix} of each pair's name and value hash codes. */
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
      // A HashMap has cached its names' hash codes; a value's is computed once, here.
      sum += TargetInterner.mix(((long) name.hashCode() << 32) ^ (value.hashCode() & 0xFFFFFFFFL));
    }
  }
}
