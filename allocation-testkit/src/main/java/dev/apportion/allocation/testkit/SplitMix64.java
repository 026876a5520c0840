package dev.apportion.allocation.testkit;

/**
 * SplitMix64 (Steele, Lea and Flood, "Fast Splittable Pseudorandom Number Generators", OOPSLA
 * 2014): the kit's only source of randomness.
 *
 * <p>Why our own and not {@link java.util.SplittableRandom}: the algorithm is ten lines and fully
 * specified here, so a seed gives the same scenario on every JVM, vendor and release, which is
 * what makes a reported seed replayable anywhere. The test pins its output to the reference
 * implementation's.
 *
 * <p>Not thread-safe; each generation owns one.
 */
final class SplitMix64 {
  private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;

  private long state;

  SplitMix64(long seed) {
    this.state = seed;
  }

  long nextLong() {
    state += GOLDEN_GAMMA;
    return mix(state);
  }

  /** A uniform int in {@code [0, bound)}, {@code bound > 0}, by multiply-shift of 32 bits. */
  int nextInt(int bound) {
    if (bound <= 0) {
      throw new IllegalArgumentException("bound must be positive: " + bound);
    }
    return (int) (((nextLong() >>> 32) * bound) >>> 32);
  }

  /** A uniform int in {@code [min, max]}. */
  int between(int min, int max) {
    return min + nextInt(max - min + 1);
  }

  /** True with probability {@code p}. */
  boolean chance(double p) {
    return (nextLong() >>> 11) * 0x1.0p-53 < p;
  }

  /** An independent generator, so that adding draws to one part never shifts another's. */
  SplitMix64 split() {
    return new SplitMix64(nextLong());
  }

  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** The seed of try {@code index} of a run whose base seed is {@code base}. */
  static long trySeed(long base, int index) {
    return mix(base + (index + 1) * GOLDEN_GAMMA);
  }
}
