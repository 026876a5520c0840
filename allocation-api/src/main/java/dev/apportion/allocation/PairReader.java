package dev.apportion.allocation;

import java.util.Arrays;
import java.util.function.BiConsumer;

/**
 * Reads a label map in one {@code forEach} pass (no iterator, no entry objects): copies its names
 * and values, interleaved, into {@link #kv}, notes whether any pair is invalid (a null name or
 * value, an empty name), and, when asked, sums two independent order-independent hashes of the
 * pairs for {@link TargetInterner}; or, {@linkplain #verify verifying} names the interner expects,
 * stores nothing and only hashes the pairs and compares the names on the way. Reused by one
 * thread; allocates only to grow.
 *
 * <p>When {@linkplain #expect expecting} a {@link LabelShape} (the shape of the map the thread
 * read last), it first reads the map as that shape: each name is compared with the shape's name
 * at the same place and each value goes straight to its place in name order in {@link
 * #arranged}, a new array that already holds the shape's names. At the first pair that differs
 * (another name, a null, more pairs), the pairs read so far are copied back into {@link #kv} and
 * the rest is read as without a shape. A map of the expected shape is thus read in one pass into
 * the label array its target keeps, and its references are stored only into that new array, never
 * into the reader's long-lived {@link #kv}: while the collector marks the old generation (a heap
 * that holds a large refresh's input), every reference overwritten in an old array is recorded
 * for the marking, and with 1M maps that made reading them cost twice the floor (run V1).
 */
final class PairReader implements BiConsumer<String, String> {
  String[] kv = new String[32];
  int pairs;
  boolean invalid;
  /** Whether {@link #sum} and {@link #check} are computed. */
  boolean hashing;
  /** The sum of {@link TargetInterner#mix} of each pair's name hash code and value hash. */
  long sum;
  /** The sum of {@link TargetInterner#mix2} of the same, independent of {@link #sum}. */
  long check;

  /** The shape the map is read as, until a pair differs; null: none or no longer. */
  private LabelShape expect;
  /**
   * The names the map is expected to give, in order, when only {@linkplain #verify verifying}
   * them: nothing is then stored, only hashed and compared; null when not verifying.
   */
  private String[] verified;
  /** Whether a name differed from {@link #verified}'s at its place (or came past its end). */
  boolean namesDiffer;
  /** The label array in name order while {@link #expect} holds: names set, values as read. */
  String[] arranged;

  void start(int expected) {
    this.expect = null;
    this.arranged = null;
    this.verified = null;
    namesDiffer = false;
    pairs = 0;
    sum = 0;
    check = 0;
    invalid = false;
    if (expected << 1 > kv.length) {
      kv = new String[Math.max(expected, 16) << 1];
    }
  }

  /**
   * Drops the references to the last map's strings (and to the label array it was read into),
   * so that a reader kept by a thread pins nothing. A map read as its expected shape wrote nothing
   * into {@link #kv}, which is then left as it is.
   */
  void clear() {
    if (expect == null) {
      Arrays.fill(kv, 0, Math.min(kv.length, pairs << 1), null);
    }
    expect = null;
    arranged = null;
  }

  /**
   * Reads the next map as {@code shape} first (see the class comment); call after {@link #start}.
   *
   * @param shape the shape expected, with as many names as the map has pairs
   */
  void expect(LabelShape shape) {
    this.expect = shape;
    this.arranged = shape.template();
  }

  /**
   * Reads the next map only to hash it (whatever {@link #hashing} says) and to tell whether its
   * names are {@code names}, in that order ({@link #namesSameAsVerified}); nothing is stored in
   * {@link #kv}, whose stores into a long-lived array cost a G1 barrier each while the old
   * generation is marked (see the class comment). Call after {@link #start}.
   *
   * @param names the names expected, in the order the map gives them; valid label names
   */
  void verify(String[] names) {
    this.verified = names;
  }

  /** After a {@linkplain #verify verifying} read: whether the map gave exactly those names. */
  boolean namesSameAsVerified() {
    return verified != null && !namesDiffer && pairs == verified.length;
  }

  /**
   * Ends a read: whether the map was of the shape expected (its target's labels are then {@link
   * #arranged}). A map that gave fewer pairs than the shape has (its {@code size()} and its
   * {@code forEach} disagree: a map changed while read) is not: what it gave is then in {@link
   * #kv}, as without a shape.
   */
  boolean readAsExpected() {
    LabelShape shape = expect;
    if (shape == null) {
      return false;
    }
    if (pairs == shape.size()) {
      return true;
    }
    leaveShape(shape);
    return false;
  }

  /** The shape expected, if the map read was of it ({@link #readAsExpected}). */
  LabelShape expected() {
    return expect;
  }

  /**
   * Copies the pairs read as {@code shape} into {@link #kv}, in the map's order, and stops
   * expecting it.
   */
  private void leaveShape(LabelShape shape) {
    expect = null;
    for (int j = 0; j < pairs; j++) {
      kv[j << 1] = arranged[shape.valueIndex(j) - 1];
      kv[(j << 1) + 1] = arranged[shape.valueIndex(j)];
    }
    arranged = null;
  }

  @Override
  @SuppressWarnings("ReferenceEquality") // a name shared with the expected one: equal at once
  public void accept(String name, String value) {
    String[] names = verified;
    if (names != null) {
      if (name == null || value == null) {
        invalid = true;
        return;
      }
      int i = pairs;
      // An empty name differs from every expected one (they are valid names): the caller then
      // reads the map again, storing it, which tells it invalid.
      if (!namesDiffer && (i >= names.length || (names[i] != name && !names[i].equals(name)))) {
        namesDiffer = true;
      }
      pairs = i + 1;
      hash(name, value);
      return;
    }
    LabelShape shape = expect;
    if (shape != null) {
      int i = pairs;
      if (value != null && shape.nameAt(i, name)) {
        arranged[shape.valueIndex(i)] = value;
        pairs = i + 1;
        return;
      }
      // Not the shape: what was read goes where it goes without one, and so does the rest.
      leaveShape(shape);
    }
    if (name == null || value == null || name.isEmpty()) {
      invalid = true;
      return;
    }
    int p = pairs << 1;
    if (p == kv.length) {
      kv = Arrays.copyOf(kv, p << 1);
    }
    kv[p] = name;
    kv[p + 1] = value;
    pairs++;
    if (hashing) {
      hash(name, value);
    }
  }

  /**
   * Adds a pair to {@link #sum} and {@link #check}. A {@code HashMap} has cached its names' hash
   * codes (the interner compares the names themselves); the values are hashed here, four chars at
   * a time, every char counting.
   */
  private void hash(String name, String value) {
    long v = charsHash(value);
    long n = name.hashCode();
    sum += TargetInterner.mix(n * 0x9E3779B97F4A7C15L ^ v);
    check += TargetInterner.mix2(v + n * 0xC2B2AE3D27D4EB4FL);
  }

  /**
   * A 64-bit hash of {@code s}'s characters, mixed four characters at a time, where {@code
   * String.hashCode()} takes one at a time into 32 bits. Each step is a bijection of the state for
   * a given input word, so two strings of one length that differ in a single word never collide;
   * others collide with probability about 2<sup>-64</sup>. Read with {@code charAt}: for the short
   * values of label sets, measured faster on JDK 17 than a bulk copy into a buffer first ({@code
   * getChars}), whose fixed cost a value of a dozen characters does not repay.
   */
  static long charsHash(String s) {
    int n = s.length();
    long h = (n + 1) * 0xC2B2AE3D27D4EB4FL;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
      long w = s.charAt(i) | (long) s.charAt(i + 1) << 16 | (long) s.charAt(i + 2) << 32
          | (long) s.charAt(i + 3) << 48;
      h = (h ^ w) * 0xBF58476D1CE4E5B9L;
      h ^= h >>> 31;
    }
    long tail = 0;
    for (; i < n; i++) {
      tail = (tail << 16) | s.charAt(i);
    }
    h = (h ^ tail) * 0x94D049BB133111EBL;
    return h ^ (h >>> 29);
  }
}
