package dev.apportion.allocation.internal.engine;

import java.util.Arrays;

/**
 * An open-addressing multimap from a 64-bit key (a target's identity hash) to int slots, the
 * engine's index of the targets it knows.
 *
 * <p><b>Design.</b> Linear probing over two parallel arrays, {@code long[] keys} and
 * {@code int[] slots} (a slot is stored plus one, so zero marks an empty cell), kept at most half
 * full; the home cell of a key is its top bits after one more mixing step, so keys that share low
 * bits do not cluster. Deletion shifts later cells of the run back (Knuth's algorithm R), so
 * there are no tombstones and a long-running table never degrades.
 *
 * <p><b>Collisions.</b> Two distinct targets may share an identity hash. The table never assumes
 * a key names one slot: {@link #find} returns the first cell holding the key and
 * {@link #findNext} the following ones, and the caller decides which slot is its target. Equal
 * keys sit in one probe run, so a key that is absent costs one short run, and one that is present
 * is found in about one probe at this load.
 *
 * <p><b>Cost.</b> Find, insert and remove: O(1) expected, allocation-free except when insert
 * doubles the arrays. Memory: 24 bytes per entry at the worst load (12 bytes a cell, half full).
 */
final class SlotTable {
  private static final int MIN_CAPACITY = 16;

  private long[] keys;
  private int[] slots;
  private int mask;
  private int size;

  SlotTable() {
    keys = new long[MIN_CAPACITY];
    slots = new int[MIN_CAPACITY];
    mask = MIN_CAPACITY - 1;
  }

  /** The number of entries. */
  int size() {
    return size;
  }

  private int home(long key) {
    long z = key * 0x9E3779B97F4A7C15L;
    return (int) (z >>> 40) & mask;
  }

  /**
   * The first cell holding {@code key}, or -1 when none does.
   *
   * @param key a key
   * @return a cell, to pass to {@link #slotAt} and {@link #findNext}
   */
  int find(long key) {
    int i = home(key);
    while (slots[i] != 0) {
      if (keys[i] == key) {
        return i;
      }
      i = (i + 1) & mask;
    }
    return -1;
  }

  /**
   * The next cell after {@code cell} holding {@code key}, or -1.
   *
   * @param key the key {@code cell} holds
   * @param cell a cell returned by {@link #find} or by this method
   * @return the next cell, or -1
   */
  int findNext(long key, int cell) {
    int i = (cell + 1) & mask;
    while (slots[i] != 0) {
      if (keys[i] == key) {
        return i;
      }
      i = (i + 1) & mask;
    }
    return -1;
  }

  /**
   * The slot stored in {@code cell}.
   *
   * @param cell a cell from {@link #find} or {@link #findNext}
   * @return the slot
   */
  int slotAt(int cell) {
    return slots[cell] - 1;
  }

  /**
   * Adds an entry; the same key may already be present with other slots.
   *
   * @param key the key
   * @param slot the slot, &ge; 0
   */
  void insert(long key, int slot) {
    if (2 * (size + 1) > keys.length) {
      grow();
    }
    int i = home(key);
    while (slots[i] != 0) {
      i = (i + 1) & mask;
    }
    keys[i] = key;
    slots[i] = slot + 1;
    size++;
  }

  /**
   * Removes the entry {@code (key, slot)}.
   *
   * @param key the key
   * @param slot the slot
   * @throws IllegalStateException if there is no such entry
   */
  void remove(long key, int slot) {
    int i = home(key);
    while (true) {
      if (slots[i] == 0) {
        throw new IllegalStateException("no entry for slot " + slot);
      }
      if (keys[i] == key && slots[i] == slot + 1) {
        break;
      }
      i = (i + 1) & mask;
    }
    // Knuth's algorithm R: move back every later cell of the run whose home is not between the
    // hole and it (cyclically), so every remaining key stays reachable from its home.
    int hole = i;
    int j = i;
    while (true) {
      j = (j + 1) & mask;
      if (slots[j] == 0) {
        break;
      }
      int h = home(keys[j]);
      boolean between = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (!between) {
        keys[hole] = keys[j];
        slots[hole] = slots[j];
        hole = j;
      }
    }
    slots[hole] = 0;
    keys[hole] = 0;
    size--;
  }

  /** Forgets every entry, keeping the capacity. */
  void clear() {
    Arrays.fill(slots, 0);
    size = 0;
  }

  private void grow() {
    long[] oldKeys = keys;
    int[] oldSlots = slots;
    keys = new long[oldKeys.length * 2];
    slots = new int[oldSlots.length * 2];
    mask = keys.length - 1;
    for (int c = 0; c < oldKeys.length; c++) {
      if (oldSlots[c] != 0) {
        int i = home(oldKeys[c]);
        while (slots[i] != 0) {
          i = (i + 1) & mask;
        }
        keys[i] = oldKeys[c];
        slots[i] = oldSlots[c];
      }
    }
  }
}
