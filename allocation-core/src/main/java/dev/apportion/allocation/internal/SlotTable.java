package dev.apportion.allocation.internal;

/**
 * An open-addressing multimap from a 64-bit key (a target's identity hash) to int slots: the
 * engine's index of the targets it knows, for the targets it cannot recognise in turn.
 *
 * <p><b>Design.</b> Linear probing over one {@code long[]} of two-word cells (key, slot plus one;
 * zero in the second word marks an empty cell), kept at most two thirds full. The home cell of a
 * key is its top bits after one more mixing step, scaled to the capacity (which need not be a
 * power of two, so a reserved table fits its load), so keys that share low bits do not cluster.
 * Deletion shifts later cells of the run back (Knuth's algorithm R), so there are no tombstones
 * and a long-running table never degrades.
 *
 * <p><b>Collisions.</b> Two distinct targets may share an identity hash. The table never assumes
 * a key names one slot: {@link #find} returns the first cell holding the key and
 * {@link #findNext} the following ones, and the caller decides which slot is its target. Equal
 * keys sit in one probe run, so a key that is absent costs one short run, and one that is present
 * is found in about one probe at this load.
 *
 * <p><b>Cost.</b> Find, insert and remove: O(1) expected, allocation-free except when insert
 * doubles the array. Memory: 16 bytes a cell, 24 to 48 bytes per entry (two thirds to one third
 * full).
 */
final class SlotTable {
  private static final int MIN_CELLS = 16;

  /**
   * Cell {@code i} is {@code cells[2i]} key, {@code cells[2i+1]} the slot plus one (zero: an
   * empty cell).
   */
  private long[] cells;
  /** The number of cells: any size (not a power of two), so the table can fit its load. */
  private int capacity;
  private int size;

  SlotTable() {
    cells = new long[2 * MIN_CELLS];
    capacity = MIN_CELLS;
  }

  /** The number of entries. */
  int size() {
    return size;
  }

  private int home(long key) {
    long z = key * 0x9E3779B97F4A7C15L;
    // Lemire's multiply-shift range reduction of the top 32 bits: any capacity, no division.
    return (int) (((z >>> 32) * capacity) >>> 32);
  }

  /**
   * The first cell holding {@code key}, or -1 when none does.
   *
   * @param key a key
   * @return a cell, to pass to {@link #slotAt} and {@link #findNext}
   */
  int find(long key) {
    int i = home(key);
    long[] c = cells;
    while (c[2 * i + 1] != 0) {
      if (c[2 * i] == key) {
        return i;
      }
      i = next(i);
    }
    return -1;
  }

  private int next(int cell) {
    int n = cell + 1;
    return n == capacity ? 0 : n;
  }

  /**
   * The first word of {@code key}'s home cell: a load with no decision, to warm the cache.
   *
   * @param key a key
   * @return the word (meaningless)
   */
  long peek(long key) {
    return cells[2 * home(key)];
  }

  /**
   * The next cell after {@code cell} holding {@code key}, or -1.
   *
   * @param key the key {@code cell} holds
   * @param cell a cell returned by {@link #find} or by this method
   * @return the next cell, or -1
   */
  int findNext(long key, int cell) {
    int i = next(cell);
    long[] c = cells;
    while (c[2 * i + 1] != 0) {
      if (c[2 * i] == key) {
        return i;
      }
      i = next(i);
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
    return (int) cells[2 * cell + 1] - 1;
  }

  /**
   * Adds an entry; the same key may already be present with other slots.
   *
   * @param key the key
   * @param slot the slot, &ge; 0
   */
  void insert(long key, int slot) {
    if (3L * (size + 1) > 2L * capacity) {
      resize(capacity * 2);
    }
    put(cells, key, slot + 1L);
    size++;
  }

  private void put(long[] c, long key, long meta) {
    int i = home(key);
    while (c[2 * i + 1] != 0) {
      i = next(i);
    }
    c[2 * i] = key;
    c[2 * i + 1] = meta;
  }

  /**
   * Removes the entry {@code (key, slot)}.
   *
   * @param key the key
   * @param slot the slot
   * @throws IllegalStateException if there is no such entry
   */
  void remove(long key, int slot) {
    long[] c = cells;
    int i = home(key);
    while (true) {
      if (c[2 * i + 1] == 0) {
        throw new IllegalStateException("no entry for slot " + slot);
      }
      if (c[2 * i] == key && (int) c[2 * i + 1] == slot + 1) {
        break;
      }
      i = next(i);
    }
    // Knuth's algorithm R: move back every later cell of the run whose home is not between the
    // hole and it (cyclically), so every remaining key stays reachable from its home.
    int hole = i;
    int j = i;
    while (true) {
      j = next(j);
      if (c[2 * j + 1] == 0) {
        break;
      }
      int h = home(c[2 * j]);
      boolean between = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (!between) {
        c[2 * hole] = c[2 * j];
        c[2 * hole + 1] = c[2 * j + 1];
        hole = j;
      }
    }
    c[2 * hole] = 0;
    c[2 * hole + 1] = 0;
    size--;
  }

  /** Makes room for {@code n} entries without growing on the way. */
  void reserve(int n) {
    long wanted = 3L * n / 2 + 1;
    if (wanted > capacity) {
      resize((int) Math.min(Integer.MAX_VALUE / 2, wanted));
    }
  }

  private void resize(int cellCount) {
    long[] old = cells;
    cells = new long[2 * cellCount];
    capacity = cellCount;
    for (int i = 0; i < old.length; i += 2) {
      if (old[i + 1] != 0) {
        put(cells, old[i], old[i + 1]);
      }
    }
  }

  @Override
  public String toString() {
    return "SlotTable[" + size + " of " + capacity + " cells]";
  }
}
