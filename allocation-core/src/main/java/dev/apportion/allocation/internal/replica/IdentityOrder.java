package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.Target;
import java.util.Arrays;

/** The order the placement takes targets in where order matters: by identity hash. */
final class IdentityOrder {
  private IdentityOrder() {}

  /**
   * Every target index sorted by identity hash (unsigned), then by identity: a primitive sort of
   * the hashes' top bits packed with the index, then a pass that orders the (rare) runs whose top
   * bits are equal by the whole hash and the identity.
   */
  static int[] of(Target[] targets) {
    int n = targets.length;
    int shift = 32 - Integer.numberOfLeadingZeros(Math.max(1, n - 1));
    long mask = (1L << shift) - 1;
    long[] packed = new long[n];
    for (int i = 0; i < n; i++) {
      long unsignedOrder = targets[i].hash() ^ Long.MIN_VALUE;
      packed[i] = ((unsignedOrder >> shift) << shift) | i;
    }
    Arrays.sort(packed);
    int[] sorted = new int[n];
    for (int j = 0; j < n; j++) {
      sorted[j] = (int) (packed[j] & mask);
    }
    for (int from = 0; from < n; ) {
      int to = from + 1;
      while (to < n && (packed[to] >> shift) == (packed[from] >> shift)) {
        to++;
      }
      if (to - from > 1) {
        sortRun(sorted, from, to, targets);
      }
      from = to;
    }
    return sorted;
  }

  private static void sortRun(int[] sorted, int from, int to, Target[] targets) {
    Integer[] run = new Integer[to - from];
    for (int j = from; j < to; j++) {
      run[j - from] = sorted[j];
    }
    Arrays.sort(run, (a, b) -> {
      int h = Long.compareUnsigned(targets[a].hash(), targets[b].hash());
      return h != 0 ? h : targets[a].toString().compareTo(targets[b].toString());
    });
    for (int j = from; j < to; j++) {
      sorted[j] = run[j - from];
    }
  }
}
