package dev.apportion.allocation.internal.chash;

import dev.apportion.allocation.internal.engine.Assignment;

/**
 * Searches of a view's targets by identity hash: a view lists its targets in identity-hash order
 * ({@link Assignment#hashAt}), so a position is found by a search of the hashes.
 */
final class ViewSearch {
  private ViewSearch() {}

  /** The first position whose hash is above {@code x} (unsigned), or {@code n}. */
  static int upperBound(Assignment assignment, int n, long x) {
    return firstAbove(assignment, n, x, false);
  }

  /**
   * The first position whose hash is above {@code x} ({@code orEqual}: at or above it), or
   * {@code n}. Identity hashes are uniform, so the search starts where {@code x}'s fraction of
   * the hash space says and gallops to a bracket before bisecting it: a few reads near each
   * other, where a plain bisection of 100,000 takes seventeen far apart.
   */
  static int firstAbove(Assignment assignment, int n, long x, boolean orEqual) {
    if (n == 0) {
      return 0;
    }
    int guess = (int) Math.min(n - 1L, Math.max(0L, (long) (((x >>> 11) * 0x1.0p-53) * n)));
    int lo;
    int hi;
    if (below(assignment.hashAt(guess), x, orEqual)) {
      lo = guess + 1;
      hi = lo;
      int step = 1;
      while (hi < n && below(assignment.hashAt(hi), x, orEqual)) {
        lo = hi + 1;
        hi += step;
        step <<= 1;
      }
      hi = Math.min(hi, n);
    } else {
      hi = guess;
      lo = hi;
      int step = 1;
      while (lo > 0 && !below(assignment.hashAt(lo - 1), x, orEqual)) {
        hi = lo - 1;
        lo = Math.max(0, lo - step);
        step <<= 1;
      }
    }
    // Every position before lo is below the bound; every one from hi on is not.
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (below(assignment.hashAt(mid), x, orEqual)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** Whether {@code h} comes before the bound: at or below {@code x}, or below it. */
  private static boolean below(long h, long x, boolean orEqual) {
    int c = Long.compareUnsigned(h, x);
    return orEqual ? c < 0 : c <= 0;
  }

  /** The position of {@code slot} in the view. */
  static int positionOf(Assignment assignment, int slot, int n) {
    long h = assignment.hash(slot);
    int lo = firstAbove(assignment, n, h, true);
    for (int i = lo; i < n && assignment.hashAt(i) == h; i++) {
      if (assignment.slotAt(i) == slot) {
        return i;
      }
    }
    throw new IllegalStateException("slot " + slot + " is not in the view");
  }
}
