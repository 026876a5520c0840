package dev.apportion.allocation.internal.collections;

/**
 * The size to give an array that must hold {@code n} elements and a few percent more without
 * growing: what the engine's per-slot arrays and the placers' arrays by slot are sized with.
 */
public final class Headroom {
  private Headroom() {}

  /**
   * {@code n} and a sixteenth more: the size to reserve for {@code n} targets so that replacing
   * up to about 6% of them in one call (new targets arrive before the dropped ones are freed)
   * grows nothing. Costs about 2 bytes per target in the per-slot arrays and the table.
   *
   * <p>Less headroom where the sixteenth would take an array of {@code n} elements of 1, 2, 4 or
   * 8 bytes past the next whole MiB: G1 allocates an array of half a region or more in whole
   * regions (1 to 32 MiB, a power of two), so an array that just passes a region's end takes
   * another region and leaves it nearly empty. An array whose size in bytes stays within {@code
   * n}'s size rounded up to a MiB takes no more regions than {@code n} elements would, whatever
   * the region size: a ring of 512,000 tokens ({@code long}s, 4.1 MB) keeps one 4 MiB region,
   * where a sixteenth more took two. The cap never leaves less than a sixty-fourth (replacing
   * 1.5% of the targets grows nothing): where the next MiB is closer, the sixteenth is kept. Near
   * {@code Integer.MAX_VALUE} the array length limit bounds either.
   */
  public static int withHeadroom(int n) {
    long wanted = Math.min(Integer.MAX_VALUE - 8, (long) n + (n >> 4) + 16);
    long least = (long) n + (n >> 6);
    for (int elementBytes = 1; elementBytes <= 8; elementBytes <<= 1) {
      long fits = fittingItsMebibytes(n, elementBytes);
      if (fits >= least) {
        wanted = Math.min(wanted, fits);
      }
    }
    return (int) wanted;
  }

  /** Half of G1's smallest region: arrays below it are never humongous. */
  private static final long HUMONGOUS_MIN = 1L << 19;
  private static final long MIB = 1L << 20;
  /**
   * An array's header, rounded up: 16 bytes with compressed class pointers, 20 (24 aligned)
   * without; the larger keeps the bound safe under both. (An array of {@code n} whose 16-byte
   * header ends it within 8 bytes of a MiB is rounded up to the next MiB here; that MiB is then
   * the cap, or, closer than a sixty-fourth, the sixteenth is kept: either way such an array of
   * {@code n} and its headroom take the region a sixteenth more took before.)
   */
  private static final long ARRAY_HEADER = 24;

  /**
   * How many elements of {@code elementBytes} fit in the whole MiBs an array of {@code n} of them
   * starts in ({@link Long#MAX_VALUE} when such an array is never humongous).
   */
  static long fittingItsMebibytes(int n, int elementBytes) {
    long bytes = ARRAY_HEADER + (long) n * elementBytes;
    if (bytes < HUMONGOUS_MIN) {
      return Long.MAX_VALUE;
    }
    long limit = (bytes + MIB - 1) & -MIB;
    return (limit - ARRAY_HEADER) / elementBytes;
  }
}
