package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import java.util.Comparator;

/**
 * The one order of targets used everywhere placement or output order matters: the identity hash
 * as an unsigned number, then (for the astronomically rare equal hashes) job, address and the
 * identity labels. It depends on identity alone, never on input order or {@code Object.hashCode}.
 */
public final class TargetOrder {
  /** Identity-hash order. */
  public static final Comparator<Target> HASH = TargetOrder::compare;

  private TargetOrder() {}

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
