package dev.apportion.allocation.internal.engine;

/**
 * Collector name to index, for a snapshot's reads: an open-addressing table of the names, their
 * hashes and indices in three arrays. Immutable once built. Built from the members' names and the
 * hashes they computed once ({@link Member#nameHash()}), so a collector change that rebuilds it
 * reads no name string (a map keyed by the names would read each name's cached hash from the
 * string, one cache miss a collector). A lookup reads the caller's name's hash, then the arrays,
 * and compares names only on a hash match; it allocates nothing.
 */
final class NameIndex {
  static final NameIndex EMPTY = new NameIndex(new String[1], new int[1], new int[1]);

  private final String[] keys;
  private final int[] hashes;
  private final int[] values;
  private final int mask;

  private NameIndex(String[] keys, int[] hashes, int[] values) {
    this.keys = keys;
    this.hashes = hashes;
    this.values = values;
    this.mask = keys.length - 1;
  }

  /**
   * The index of every member by name, at its {@link Member#index()}.
   *
   * @param members the members, distinct names
   * @return the index
   */
  static NameIndex of(Members members) {
    int n = members.size();
    // A power of two at least twice the count: linear probes stay short.
    int capacity = Integer.highestOneBit(Math.max(1, 2 * n - 1)) << 1;
    String[] keys = new String[capacity];
    int[] hashes = new int[capacity];
    int[] values = new int[capacity];
    int mask = capacity - 1;
    for (int k = 0; k < n; k++) {
      Member m = members.get(k);
      int h = m.nameHash();
      int i = spread(h) & mask;
      while (keys[i] != null) {
        i = (i + 1) & mask;
      }
      keys[i] = m.name();
      hashes[i] = h;
      values[i] = m.index();
    }
    return new NameIndex(keys, hashes, values);
  }

  /**
   * The index of the collector named {@code name}.
   *
   * @param name a collector name, or null
   * @return its index, or -1 when no collector has that name (or it is null)
   */
  int get(String name) {
    if (name == null) {
      return -1;
    }
    int h = name.hashCode();
    int i = spread(h) & mask;
    String k;
    while ((k = keys[i]) != null) {
      if (hashes[i] == h && k.equals(name)) {
        return values[i];
      }
      i = (i + 1) & mask;
    }
    return -1;
  }

  /** The hash's high bits folded into the low ones the mask keeps. */
  private static int spread(int h) {
    return h ^ (h >>> 16);
  }
}
