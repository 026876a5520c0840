package dev.apportion.allocation.internal.engine;

import java.util.Arrays;

/**
 * The owner each slot journaled in the current operation had before it: the engine's journal of
 * owners, for the publisher, in memory proportional to the operation instead of a word for every
 * target held between operations.
 *
 * <p><b>Design.</b> An open-addressing map (linear probing, at most half full) from slot to owner
 * while the operation touches few slots; once it touches more than a 32nd of the slots, an
 * array by slot, allocated for that operation and dropped at its end. {@link #clear} keeps a map
 * of at most {@link #KEPT_CELLS} cells for the next operation, so a steady state of small changes
 * allocates nothing, and an operation that touched many slots leaves garbage in proportion to
 * them.
 *
 * <p>Writer-thread only, like {@link Slots}.
 */
final class PriorOwners {
  private static final int MIN_CELLS = 64;
  /**
   * Cells kept past an operation (64 KB in two arrays); a larger map is dropped. With 100k slots
   * the map never grows past it (it holds at most a 32nd of the slots, at most half full).
   */
  static final int KEPT_CELLS = 1 << 13;
  /** Returned for a slot not recorded. */
  static final int ABSENT = Integer.MIN_VALUE;

  /** By cell: the slot plus one (zero: empty). */
  private int[] keys = new int[MIN_CELLS];
  private int[] owners = new int[MIN_CELLS];
  private int size;
  /** By slot, once the operation touched many slots; {@link #ABSENT} where not recorded. */
  private int[] bySlot;

  /**
   * Records the owner a slot had before the operation (replacing an earlier record of it).
   *
   * @param slot the slot
   * @param owner its owner before the operation
   * @param slots the number of slots the engine has room for (bounds every slot)
   */
  void put(int slot, int owner, int slots) {
    if (bySlot == null && size + 1 > Math.max(MIN_CELLS, slots >>> 5)) {
      toArray(slots);
    }
    if (bySlot != null) {
      if (slot >= bySlot.length) {
        grow(Math.max(slots, slot + 1));
      }
      if (bySlot[slot] == ABSENT) {
        size++;
      }
      bySlot[slot] = owner;
      return;
    }
    if (2 * (size + 1) > keys.length) {
      rehash(keys.length * 2);
    }
    if (insert(keys, owners, slot, owner)) {
      size++;
    }
  }

  /**
   * The owner recorded for a slot, or {@link #ABSENT}.
   *
   * @param slot the slot
   * @return its owner before the operation, or {@link #ABSENT}
   */
  int get(int slot) {
    int[] d = bySlot;
    if (d != null) {
      return slot < d.length ? d[slot] : ABSENT;
    }
    int[] k = keys;
    int mask = k.length - 1;
    for (int i = home(slot, mask); ; i = (i + 1) & mask) {
      int key = k[i];
      if (key == slot + 1) {
        return owners[i];
      }
      if (key == 0) {
        return ABSENT;
      }
    }
  }

  /** The number of slots recorded. */
  int size() {
    return size;
  }

  /** Forgets every record: the end of an operation. */
  void clear() {
    if (bySlot != null) {
      // The next operation may touch thousands too (a first change after a full placement):
      // a map of an 8th of the slots' cells, at most the kept size, instead of growing from the
      // smallest step by step: at most a byte a slot.
      int cells = Math.min(KEPT_CELLS,
          Math.max(MIN_CELLS, Integer.highestOneBit(bySlot.length >>> 3)));
      if (keys.length < cells) {
        keys = new int[cells];
        owners = new int[cells];
      }
      bySlot = null;
    } else if (keys.length > KEPT_CELLS) {
      keys = new int[KEPT_CELLS];
      owners = new int[KEPT_CELLS];
    } else if (size > 0) {
      Arrays.fill(keys, 0);
    }
    size = 0;
  }

  /**
   * Makes room for slots below {@code slots} (the engine's arrays grew within the operation).
   *
   * @param slots the new number of slots
   */
  void grow(int slots) {
    if (bySlot != null && slots > bySlot.length) {
      int old = bySlot.length;
      bySlot = Arrays.copyOf(bySlot, slots);
      Arrays.fill(bySlot, old, slots, ABSENT);
    }
  }

  private void toArray(int slots) {
    int[] d = new int[slots];
    Arrays.fill(d, ABSENT);
    int[] k = keys;
    for (int i = 0; i < k.length; i++) {
      if (k[i] != 0) {
        int s = k[i] - 1;
        if (s >= d.length) {
          int old = d.length;
          d = Arrays.copyOf(d, s + 1);
          Arrays.fill(d, old, d.length, ABSENT);
        }
        d[s] = owners[i];
      }
    }
    bySlot = d;
    // The map is empty from now on: clear() keeps it small for the next operation.
    if (k.length > KEPT_CELLS) {
      keys = new int[KEPT_CELLS];
      owners = new int[KEPT_CELLS];
    } else {
      Arrays.fill(k, 0);
    }
  }

  private void rehash(int cells) {
    int[] oldKeys = keys;
    int[] oldOwners = owners;
    keys = new int[cells];
    owners = new int[cells];
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] != 0) {
        insert(keys, owners, oldKeys[i] - 1, oldOwners[i]);
      }
    }
  }

  /** Puts the pair; true when the slot was not in the map. */
  private static boolean insert(int[] k, int[] o, int slot, int owner) {
    int mask = k.length - 1;
    int i = home(slot, mask);
    int key;
    while ((key = k[i]) != 0) {
      if (key == slot + 1) {
        o[i] = owner;
        return false;
      }
      i = (i + 1) & mask;
    }
    k[i] = slot + 1;
    o[i] = owner;
    return true;
  }

  private static int home(int slot, int mask) {
    return ((slot * 0x9E3779B9) >>> 16 ^ slot * 0x9E3779B9) & mask;
  }

  @Override
  public String toString() {
    return "PriorOwners[" + size + (bySlot != null ? " by slot" : " in a map") + "]";
  }
}
