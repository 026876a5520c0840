package dev.apportion.allocation.internal.hash;

/** SplitMix64's finalizer, the mixer placement is derived from. Pure, no allocation. */
public final class SplitMix {
  private SplitMix() {}

  /**
   * SplitMix64's finalizer (Steele, Lea, Flood 2014): a bijective 64-bit mixer. Stable: its
   * output for a given input never changes, since placements are derived from it.
   *
   * @param z any value
   * @return the mixed value
   */
  public static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
