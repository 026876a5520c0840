package dev.apportion.allocation.identity;

import java.util.Arrays;

/**
 * The shape of a label set: its names, in the order a map gave them, and everything about them
 * that does not depend on the values. This is the one memo of "the same names as last time":
 * discovery hands over thousands of label sets with the same names in the same order (every pod
 * of a job, decoded alike), refresh after refresh.
 *
 * <ul>
 *   <li>Building a target, {@link Canonical} remembers the last shapes each thread saw and, when a
 *       map's names are those of a shape, skips all the work that depends on names only: the sort
 *       (a permutation instead), the search for the metadata range, for {@code __address__} and
 *       for the labels node and zone are read from, and the names' encoding for the hash (copied,
 *       already encoded). The target keeps the shape's name instances, so a million targets share
 *       thirteen names instead of keeping thirteen million.
 *   <li>Interning, {@code TargetInterner} records each call's shape and, on the next refresh,
 *       {@linkplain PairReader#verify verifies} the map at the same position against it: the
 *       names are compared with the shape's on the way, the values only hashed.
 * </ul>
 *
 * <p>Names are compared by reference first, then by their {@code String} hash codes (cached by
 * every {@code String}), then by {@code equals}. Immutable once built; safe to share between
 * threads.
 */
public final class LabelShape {
  /** The shape of no labels. */
  static final LabelShape EMPTY = empty();

  /** The names in the map's order: the instances every target of this shape keeps. */
  final String[] names;
  /** Their hash codes, compared before the names. */
  private final int[] hashes;
  /** For the map's {@code i}-th pair, its pair index in name order. */
  private final int[] position;
  /** The {@code __meta_*} labels are the pairs {@code [metaFrom, metaTo)} in name order. */
  final int metaFrom;
  final int metaTo;
  /** The pair index of each {@link KubernetesLabels#SPECIAL} label, -1 where absent. */
  final int[] special;
  /** The pair index of {@code __address__}, -1 where absent. */
  final int address;
  /** In name order, each name's {@linkplain Encoder canonical encoding}, concatenated. */
  final byte[] encoded;
  /** Pair {@code p}'s name is {@code encoded[offsets[p], offsets[p + 1])}. */
  final int[] offsets;
  /** The names in name order at even places, the values' places null: what a target copies. */
  private final String[] template;

  private LabelShape(String[] names, int[] position, int metaFrom, int metaTo, int[] special,
      int address, byte[] encoded, int[] offsets) {
    this.names = names;
    this.hashes = new int[names.length];
    for (int i = 0; i < names.length; i++) {
      hashes[i] = names[i].hashCode();
    }
    this.position = position;
    this.metaFrom = metaFrom;
    this.metaTo = metaTo;
    this.special = special;
    this.address = address;
    this.encoded = encoded;
    this.offsets = offsets;
    this.template = new String[names.length << 1];
    for (int i = 0; i < names.length; i++) {
      template[position[i] << 1] = names[i];
    }
  }

  /**
   * How many names.
   *
   * @return the count
   */
  public int size() {
    return names.length;
  }

  /** A new label array in name order with this shape's names and every value null. */
  String[] template() {
    return template.clone();
  }

  /**
   * Whether {@code name} is this shape's {@code i}-th name in the map's order ({@code false} past
   * the last, or for a null name).
   */
  // ReferenceEquality: the same instance is the common case and needs no comparison.
  @SuppressWarnings("ReferenceEquality")
  boolean nameAt(int i, String name) {
    if (i >= names.length || name == null) {
      return false;
    }
    String mine = names[i];
    return name == mine || (name.hashCode() == hashes[i] && name.equals(mine));
  }

  /** Where the map's {@code i}-th pair's value goes in a label array in name order. */
  int valueIndex(int i) {
    return (position[i] << 1) + 1;
  }

  /**
   * The shape of {@code in}'s names, given the same pairs sorted, without repeated names, as
   * {@code sorted}, and where its metadata range, its {@link KubernetesLabels#SPECIAL} labels and
   * its {@code __address__} are in {@code sorted}.
   */
  static LabelShape of(String[] in, String[] sorted, int metaFrom, int metaTo, int[] special,
      int address) {
    int pairs = sorted.length >> 1;
    String[] names = new String[pairs];
    int[] position = new int[pairs];
    for (int i = 0; i < pairs; i++) {
      names[i] = in[i << 1];
      position[i] = LabelArrays.indexOf(sorted, 0, pairs, names[i]);
    }
    Encoder e = new Encoder();
    int[] offsets = new int[pairs + 1];
    for (int p = 0; p < pairs; p++) {
      offsets[p] = e.length();
      e.writeString(sorted[p << 1]);
    }
    offsets[pairs] = e.length();
    return new LabelShape(names, position, metaFrom, metaTo, special, address,
        Arrays.copyOf(e.bytes(), e.length()), offsets);
  }

  private static LabelShape empty() {
    int[] special = new int[KubernetesLabels.SPECIAL.length];
    KubernetesLabels.find(LabelArrays.NO_LABELS, 0, 0, special);
    return of(LabelArrays.NO_LABELS, LabelArrays.NO_LABELS, 0, 0, special, -1);
  }

  /**
   * Whether the first {@code pairs} names of {@code in}, a label array in a map's order, are this
   * shape's, in its order. Allocation-free.
   *
   * @param in names and values interleaved
   * @param pairs how many pairs of {@code in} are compared
   * @return true when they are this shape's names
   */
  // ReferenceEquality: the same instance is the common case and needs no comparison.
  @SuppressWarnings("ReferenceEquality")
  public boolean matches(String[] in, int pairs) {
    String[] n = names;
    if (pairs != n.length) {
      return false;
    }
    for (int i = 0; i < pairs; i++) {
      String name = in[i << 1];
      String mine = n[i];
      if (name != mine && (name.hashCode() != hashes[i] || !name.equals(mine))) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether {@code other} has the same names as this shape, in the same order.
   *
   * @param other another shape
   * @return true when it has
   */
  public boolean sameNames(LabelShape other) {
    return Arrays.equals(names, other.names);
  }

  /** A new label array in name order: this shape's names with {@code in}'s values. */
  String[] arrange(String[] in) {
    String[] n = names;
    int[] pos = position;
    String[] kv = new String[n.length << 1];
    for (int i = 0; i < n.length; i++) {
      int p = pos[i] << 1;
      kv[p] = n[i];
      kv[p + 1] = in[(i << 1) + 1];
    }
    return kv;
  }

  /**
   * The shapes one thread saw last: the most recent first, then a few direct-mapped by the first
   * name's hash and the pair count. A miss costs a shape built from a sort done anyway.
   */
  static final class Cache {
    private static final int SLOTS = 16;
    private final LabelShape[] slots = new LabelShape[SLOTS];
    private LabelShape last;

    /** The shape found or added last, or null. */
    LabelShape last() {
      return last;
    }

    /** The shape of the first {@code pairs} names of {@code in} (at least one), or null. */
    LabelShape find(String[] in, int pairs) {
      LabelShape s = last;
      if (s != null && s.matches(in, pairs)) {
        return s;
      }
      s = slots[slot(in[0].hashCode(), pairs)];
      if (s != null && s.matches(in, pairs)) {
        last = s;
        return s;
      }
      return null;
    }

    void add(LabelShape shape) {
      slots[slot(shape.hashes[0], shape.names.length)] = shape;
      last = shape;
    }

    private static int slot(int firstHash, int pairs) {
      return (((firstHash + pairs) * 0x9E3779B9) >>> 28) & (SLOTS - 1);
    }
  }

  @Override
  public String toString() {
    return "LabelShape" + Arrays.toString(names);
  }
}
