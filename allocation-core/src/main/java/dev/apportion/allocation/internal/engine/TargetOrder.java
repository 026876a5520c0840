package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The one order of targets used everywhere placement or output order matters: the identity hash
 * as an unsigned number, then (for the astronomically rare equal hashes) job, address and the
 * identity labels. It depends on identity alone, never on input order or {@code Object.hashCode}.
 */
final class TargetOrder {
  /** Identity-hash order. */
  public static final Comparator<Target> HASH = TargetOrder::compare;

  private TargetOrder() {}

  /**
   * Sorts {@code targets} in identity-hash order, in place. Sorting objects with a comparator
   * costs a comparator call per comparison; this sorts primitive keys instead (the top bits of
   * each hash with the element's index in the low bits, so one {@code long[]} sort orders both),
   * then finishes with an insertion pass that is linear unless hash prefixes collide.
   *
   * @param targets the targets to sort
   */
  public static void sort(Target[] targets) {
    int n = targets.length;
    if (n < 64) {
      Arrays.sort(targets, HASH);
      return;
    }
    int indexBits = 64 - Long.numberOfLeadingZeros(n - 1);
    long[] keys = new long[n];
    for (int i = 0; i < n; i++) {
      long prefix = (targets[i].hash() >>> indexBits) << indexBits;
      // Flipping the sign bit makes the signed sort an unsigned one.
      keys[i] = (prefix | i) ^ Long.MIN_VALUE;
    }
    Arrays.sort(keys);
    Target[] copy = targets.clone();
    long mask = (1L << indexBits) - 1;
    for (int i = 0; i < n; i++) {
      targets[i] = copy[(int) ((keys[i] ^ Long.MIN_VALUE) & mask)];
    }
    for (int i = 1; i < n; i++) {
      Target t = targets[i];
      int j = i - 1;
      while (j >= 0 && compare(targets[j], t) > 0) {
        targets[j + 1] = targets[j];
        j--;
      }
      targets[j + 1] = t;
    }
  }

  /**
   * Sorts a list in identity-hash order, in place (see {@link #sort(Target[])}).
   *
   * @param targets a modifiable list
   */
  public static void sort(List<Target> targets) {
    Target[] a = targets.toArray(new Target[0]);
    sort(a);
    for (int i = 0; i < a.length; i++) {
      targets.set(i, a[i]);
    }
  }

  /**
   * Compares two targets in identity-hash order.
   *
   * @param a a target
   * @param b another target
   * @return negative, zero (equal identity) or positive
   */
  public static int compare(Target a, Target b) {
    int c = Long.compareUnsigned(a.hash(), b.hash());
    if (c != 0 || a.equals(b)) {
      return c;
    }
    c = a.job().compareTo(b.job());
    if (c != 0) {
      return c;
    }
    c = a.address().compareTo(b.address());
    return c != 0 ? c : a.toString().compareTo(b.toString());
  }
}
