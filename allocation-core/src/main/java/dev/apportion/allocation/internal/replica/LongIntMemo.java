package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.ring.HashRings;
import java.util.Arrays;

/**
 * A map from non-negative long keys to non-negative ints, open-addressed on primitive arrays:
 * what {@link ReplicaPlacement} remembers per change without boxing a key per lookup. Not
 * thread-safe.
 */
final class LongIntMemo {
  private static final long FREE = -1;
  private long[] keys = new long[64];
  private int[] values = new int[64];
  private int size;

  LongIntMemo() {
    Arrays.fill(keys, FREE);
  }

  /** The value of {@code key}, or -1 when it has none. */
  int get(long key) {
    int mask = keys.length - 1;
    for (int at = slot(key, mask); ; at = (at + 1) & mask) {
      long k = keys[at];
      if (k == key) {
        return values[at];
      }
      if (k == FREE) {
        return -1;
      }
    }
  }

  /** Sets the value of {@code key} (both non-negative). */
  void put(long key, int value) {
    if (2 * (size + 1) > keys.length) {
      grow();
    }
    int mask = keys.length - 1;
    for (int at = slot(key, mask); ; at = (at + 1) & mask) {
      if (keys[at] == key) {
        values[at] = value;
        return;
      }
      if (keys[at] == FREE) {
        keys[at] = key;
        values[at] = value;
        size++;
        return;
      }
    }
  }

  /** Forgets every key. */
  void clear() {
    if (size > 0) {
      Arrays.fill(keys, FREE);
      size = 0;
    }
  }

  private void grow() {
    long[] oldKeys = keys;
    int[] oldValues = values;
    keys = new long[oldKeys.length * 2];
    values = new int[oldKeys.length * 2];
    Arrays.fill(keys, FREE);
    size = 0;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] != FREE) {
        put(oldKeys[i], oldValues[i]);
      }
    }
  }

  private static int slot(long key, int mask) {
    return (int) HashRings.mix(key) & mask;
  }
}
