package dev.apportion.allocation.internal.engine;

/**
 * An open-addressing multimap from a 64-bit key (a target's identity hash) to int slots: the
 * engine's index of the targets it knows, for the targets it cannot recognise in turn.
 *
 * <p><b>Design.</b> Linear probing over one {@code long[]} of one-word cells: the high 32 bits
 * of a cell are its key's fingerprint (the top bits of the key after one more mixing step), the
 * low 32 bits its slot plus one (zero marks an empty cell), kept at most two thirds full. The
 * table does not store the key: {@link Keys#keyOf} gives the key of a slot (the engine keeps the
 * hash of every slot anyway), read only for a cell whose fingerprint matches, so a probe reads
 * one array and a hit one more word. The home cell of a key is its fingerprint scaled to the
 * capacity (which need not be a power of two, so a reserved table fits its load), so keys that
 * share low bits do not cluster, and a cell's home is known from the cell alone, which moving
 * cells needs. Deletion shifts later cells of the run back (Knuth's algorithm R), so there are no
 * tombstones and a long-running table never degrades.
 *
 * <p><b>Collisions.</b> Two distinct targets may share an identity hash. The table never assumes
 * a key names one slot: {@link #find} returns the first cell holding the key and
 * {@link #findNext} the following ones, and the caller decides which slot is its target. Equal
 * keys sit in one probe run, so a key that is absent costs one short run, and one that is present
 * is found in about one probe at this load.
 *
 * <p><b>Cost.</b> Find, insert and remove: O(1) expected, allocation-free except when insert
 * doubles the array. Memory: 8 bytes a cell, 12 to 24 bytes per entry (two thirds to one third
 * full).
 */
final class SlotTable {
  private static final int MIN_CELLS = 16;
  private static final long SLOT_BITS = 0xFFFFFFFFL;

  /** The key of each slot the table holds: the table stores only a fingerprint of it. */
  interface Keys {
    /**
     * The key a slot was inserted with; read while the slot is in the table.
     *
     * @param slot a slot the table holds
     * @return its key
     */
    long keyOf(int slot);
  }

  private final Keys keys;
  /** Cell {@code i}: the fingerprint (high 32 bits) and the slot plus one (zero: empty). */
  private long[] cells;
  /** The number of cells: any size (not a power of two), so the table can fit its load. */
  private int capacity;
  private int size;

  /**
   * An empty table.
   *
   * @param keys the key of each slot the table will hold
   */
  SlotTable(Keys keys) {
    this.keys = keys;
    cells = new long[MIN_CELLS];
    capacity = MIN_CELLS;
  }

  /** The number of entries. */
  int size() {
    return size;
  }

  /** The fingerprint of a key, in the high 32 bits of a cell. */
  private static long fingerprint(long key) {
    return (key * 0x9E3779B97F4A7C15L) & ~SLOT_BITS;
  }

  /** The home cell of a fingerprint (or of a cell, whose low bits it ignores). */
  private int home(long fingerprint) {
    // Lemire's multiply-shift range reduction of the top 32 bits: any capacity, no division.
    return (int) (((fingerprint >>> 32) * capacity) >>> 32);
  }

  /**
   * The first cell holding {@code key}, or -1 when none does.
   *
   * @param key a key
   * @return a cell, to pass to {@link #slotAt} and {@link #findNext}
   */
  int find(long key) {
    long f = fingerprint(key);
    return scan(key, f, home(f));
  }

  private int scan(long key, long f, int from) {
    long[] c = cells;
    int i = from;
    long cell;
    while ((cell = c[i]) != 0) {
      if ((cell & ~SLOT_BITS) == f && keys.keyOf((int) cell - 1) == key) {
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
   * {@code key}'s home cell: a load with no decision, to warm the cache.
   *
   * @param key a key
   * @return the word (meaningless)
   */
  long peek(long key) {
    return cells[home(fingerprint(key))];
  }

  /**
   * The next cell after {@code cell} holding {@code key}, or -1.
   *
   * @param key the key {@code cell} holds
   * @param cell a cell returned by {@link #find} or by this method
   * @return the next cell, or -1
   */
  int findNext(long key, int cell) {
    return scan(key, fingerprint(key), next(cell));
  }

  /**
   * The slot stored in {@code cell}.
   *
   * @param cell a cell from {@link #find} or {@link #findNext}
   * @return the slot
   */
  int slotAt(int cell) {
    return (int) cells[cell] - 1;
  }

  /**
   * Adds an entry; the same key may already be present with other slots. {@link Keys#keyOf}
   * must give {@code key} for {@code slot} from now until the entry is removed.
   *
   * @param key the key
   * @param slot the slot, &ge; 0 and below {@link Integer#MAX_VALUE}
   */
  void insert(long key, int slot) {
    if (3L * (size + 1) > 2L * capacity) {
      resize(capacity * 2);
    }
    put(cells, fingerprint(key) | (slot + 1L));
    size++;
  }

  private void put(long[] c, long cell) {
    int i = home(cell);
    while (c[i] != 0) {
      i = next(i);
    }
    c[i] = cell;
  }

  /**
   * Removes the entry ({@code key}, {@code slot}).
   *
   * @param key the key
   * @param slot the slot
   * @throws IllegalStateException if there is no such entry
   */
  void remove(long key, int slot) {
    long[] c = cells;
    long wanted = fingerprint(key) | (slot + 1L);
    int i = home(wanted);
    while (true) {
      if (c[i] == 0) {
        throw new IllegalStateException("no entry for slot " + slot);
      }
      if (c[i] == wanted) {
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
      if (c[j] == 0) {
        break;
      }
      int h = home(c[j]);
      boolean between = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (!between) {
        c[hole] = c[j];
        hole = j;
      }
    }
    c[hole] = 0;
    size--;
  }

  /** Makes room for {@code n} entries without growing on the way. */
  void reserve(int n) {
    long wanted = 3L * n / 2 + 1;
    if (wanted > capacity) {
      resize((int) Math.min(Integer.MAX_VALUE - 8, wanted));
    }
  }

  private void resize(int cellCount) {
    long[] old = cells;
    cells = new long[cellCount];
    capacity = cellCount;
    for (long cell : old) {
      if (cell != 0) {
        put(cells, cell);
      }
    }
  }

  @Override
  public String toString() {
    return "SlotTable[" + size + " of " + capacity + " cells]";
  }
}
