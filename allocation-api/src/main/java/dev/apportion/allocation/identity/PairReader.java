package dev.apportion.allocation.identity;

import java.util.Arrays;
import java.util.function.BiConsumer;

/**
 * Reads a label map in one {@code forEach} pass (no iterator, no entry objects): copies its names
 * and values, interleaved, into its label array, notes whether any pair is invalid (a null name or
 * value, an empty name), and, when asked, sums two independent order-independent hashes of the
 * pairs (the key and the check of {@code TargetInterner}); or, {@linkplain #verify verifying} the
 * names of a {@link LabelShape}, stores nothing and only hashes the pairs and compares the names on
 * the way. Reused by one thread; allocates only to grow.
 *
 * <p>When {@linkplain #expect expecting} a {@link LabelShape} (the shape of the map the thread
 * read last), it first reads the map as that shape: each name is compared with the shape's name
 * at the same place and each value goes straight to its place in name order in {@link
 * #arranged}, a new array that already holds the shape's names. At the first pair that differs
 * (another name, a null, more pairs), the pairs read so far are copied back into {@link #kv} and
 * the rest is read as without a shape. A map of the expected shape is thus read in one pass into
 * the label array its target keeps, and its references are stored only into that new array, never
 * into the reader's long-lived {@link #kv}: while the garbage collector marks the old generation
 * (a heap that holds a large refresh's input), every reference overwritten in an old array is
 * recorded for the marking, and with a million maps those records made reading them cost about
 * twice what reading them alone costs.
 */
public final class PairReader implements BiConsumer<String, String> {
  String[] kv = new String[32];
  int pairs;
  boolean invalid;
  /** Whether {@link #sum} and {@link #check} are computed. */
  boolean hashing;
  /** The sum of {@link Mixers#mix} of each pair's name hash code and value hash. */
  long sum;
  /** The sum of {@link Mixers#mix2} of the same, independent of {@link #sum}. */
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

  /** A reader with a small label array. */
  public PairReader() {}

  /**
   * The label array the last map was read into (unless it was read as its expected shape, or
   * only verified): names and values interleaved, in the map's order.
   *
   * @return the reader's own array; its first {@link #pairs()} pairs are the map's
   */
  public String[] pairArray() {
    return kv;
  }

  /**
   * How many pairs the last map gave (the valid ones, while none was invalid).
   *
   * @return the count
   */
  public int pairs() {
    return pairs;
  }

  /**
   * Whether the last map gave a null name or value, or an empty name.
   *
   * @return true when it did
   */
  public boolean invalid() {
    return invalid;
  }

  /**
   * Whether the next maps read storing their pairs are hashed too (a verifying read always is).
   *
   * @param on true to hash
   */
  public void hashing(boolean on) {
    hashing = on;
  }

  /**
   * The sum of {@link Mixers#mix} of each pair's hash, for the last map read hashing.
   *
   * @return the sum
   */
  public long sum() {
    return sum;
  }

  /**
   * The sum of {@link Mixers#mix2} of each pair's hash, independent of {@link #sum()}.
   *
   * @return the sum
   */
  public long check() {
    return check;
  }

  /**
   * Starts reading a map.
   *
   * @param expected the map's size, a hint for the array's capacity
   */
  public void start(int expected) {
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
   * names are {@code shape}'s, in that order ({@link #namesSameAsVerified}); nothing is stored in
   * the reader's array, whose stores into a long-lived array cost a G1 barrier each while the old
   * generation is marked (see the class comment). Call after {@link #start}.
   *
   * @param shape the shape whose names are expected, in the order the map gives them
   */
  public void verify(LabelShape shape) {
    this.verified = shape.names;
  }

  /**
   * After a {@linkplain #verify verifying} read: whether the map gave exactly the shape's names.
   *
   * @return true when it did, in the shape's order
   */
  public boolean namesSameAsVerified() {
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
    long v = Mixers.charsHash(value);
    long n = name.hashCode();
    sum += Mixers.mix(n * 0x9E3779B97F4A7C15L ^ v);
    check += Mixers.mix2(v + n * 0xC2B2AE3D27D4EB4FL);
  }
}
