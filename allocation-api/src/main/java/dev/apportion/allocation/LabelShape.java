package dev.apportion.allocation;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The shape of a label set: its names, in the order a map gave them, and everything about them
 * that does not depend on the values. Discovery hands over thousands of label sets with the same
 * names in the same order (every pod of a job, decoded alike), so {@link Target} remembers the
 * last shapes each thread saw and, when a map's names are those of a shape, skips all the work
 * that depends on names only: the sort (a permutation instead), the search for the metadata
 * range and for the labels {@link Target#node()} and {@link Target#zone()} are read from, and the
 * names' encoding for the hash (copied, already encoded). The target keeps the shape's name
 * instances, so a million targets share thirteen names instead of keeping thirteen million.
 *
 * <p>Immutable once built; a per-thread {@link Cache} holds a few.
 */
final class LabelShape {
  /** The names in the map's order: the instances every target of this shape keeps. */
  private final String[] names;
  /** Their hash codes, compared before the names. */
  private final int[] hashes;
  /** For the map's {@code i}-th pair, its pair index in name order. */
  private final int[] position;
  final int metaFrom;
  final int metaTo;
  /** The pair index of each {@link Target#SPECIAL} label, -1 where absent. */
  final int[] special;
  /** In name order, each name's unsigned LEB128 UTF-8 length and UTF-8 bytes, concatenated. */
  final byte[] encoded;
  /** Pair {@code p}'s name is {@code encoded[offsets[p], offsets[p + 1])}. */
  final int[] offsets;
  /** The names in name order at even places, the values' places null: what a target copies. */
  private final String[] template;

  private LabelShape(String[] names, int[] position, int metaFrom, int metaTo, int[] special,
      byte[] encoded, int[] offsets) {
    this.names = names;
    this.hashes = new int[names.length];
    for (int i = 0; i < names.length; i++) {
      hashes[i] = names[i].hashCode();
    }
    this.position = position;
    this.metaFrom = metaFrom;
    this.metaTo = metaTo;
    this.special = special;
    this.encoded = encoded;
    this.offsets = offsets;
    this.template = new String[names.length << 1];
    for (int i = 0; i < names.length; i++) {
      template[position[i] << 1] = names[i];
    }
  }

  /** How many names. */
  int size() {
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
   * {@code sorted}.
   */
  static LabelShape of(String[] in, String[] sorted, int metaFrom, int metaTo, int[] special) {
    int pairs = sorted.length >> 1;
    String[] names = new String[pairs];
    int[] position = new int[pairs];
    for (int i = 0; i < pairs; i++) {
      names[i] = in[i << 1];
      position[i] = LabelMap.indexOf(sorted, 0, pairs, names[i]);
    }
    byte[][] utf8 = new byte[pairs][];
    int total = 0;
    for (int p = 0; p < pairs; p++) {
      utf8[p] = sorted[p << 1].getBytes(StandardCharsets.UTF_8);
      total += lebSize(utf8[p].length) + utf8[p].length;
    }
    byte[] encoded = new byte[total];
    int[] offsets = new int[pairs + 1];
    int at = 0;
    for (int p = 0; p < pairs; p++) {
      offsets[p] = at;
      int n = utf8[p].length;
      while ((n & ~0x7F) != 0) {
        encoded[at++] = (byte) ((n & 0x7F) | 0x80);
        n >>>= 7;
      }
      encoded[at++] = (byte) n;
      System.arraycopy(utf8[p], 0, encoded, at, utf8[p].length);
      at += utf8[p].length;
    }
    offsets[pairs] = at;
    return new LabelShape(names, position, metaFrom, metaTo, special, encoded, offsets);
  }

  private static int lebSize(int n) {
    return n < (1 << 7) ? 1 : n < (1 << 14) ? 2 : n < (1 << 21) ? 3 : n < (1 << 28) ? 4 : 5;
  }

  /** Whether the first {@code pairs} names of {@code in} are this shape's, in its order. */
  // ReferenceEquality: the same instance is the common case and needs no comparison.
  @SuppressWarnings("ReferenceEquality")
  boolean matches(String[] in, int pairs) {
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

  /** The first name's hash code, which picks a shape's slot in a {@link Cache}. */
  int firstHash() {
    return hashes[0];
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
      slots[slot(shape.firstHash(), shape.names.length)] = shape;
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
