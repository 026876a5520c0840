package dev.apportion.allocation.identity;

import java.util.Arrays;
import java.util.Map;

/**
 * A target's canonical form, computed once per target into a per-thread scratch: its labels as a
 * {@linkplain LabelArrays label array} in name order, the range of its {@code __meta_*} labels,
 * its node and zone, and the two hashes of its {@linkplain Encoder encoding}. {@code Target}
 * copies these into its final fields; nothing here refers to it.
 *
 * <h2>Reading a map</h2>
 * {@link #read} reads a label map in one {@code forEach} pass through the thread's {@link
 * PairReader}, first as the {@link LabelShape} the thread saw last (then every value goes straight
 * to its place in name order), else pair by pair into the reader; {@link #arrange} then puts the
 * pairs in name order through a remembered shape (a permutation) or by a sort, remembering a new
 * shape. A map whose {@code forEach} gives an invalid pair (or disagrees with its size) is copied
 * through its entry set instead, which validates it and throws the documented exception.
 *
 * <h2>Deriving</h2>
 * {@link #derive} finds the metadata range, the labels node and zone are read from and {@code
 * __address__} (or takes them from the shape), and writes version byte {@code 1}, job, address,
 * the identity labels and then the {@code __meta_*} labels into the thread's {@link Encoder}; the
 * identity part gives the identity hash (XXH64, seed 0), the whole the labels hash (another seed:
 * two targets whose identity hashes collide still differ there). The names of a shape are copied
 * already encoded.
 *
 * <p>One per thread ({@link #get()}). Not reentrant between {@link #read} or {@link #arrange} and
 * {@link #derive}: nothing may run there but this class's code (a map's {@code forEach} runs the
 * caller's code, which may build targets itself: {@link #read} takes a reader of its own then, and
 * sets what {@link #derive} reads only after the caller's code has run). Allocates only the label
 * array a target keeps, and to grow its buffers; a buffer grown past a few tens of kilobytes is
 * dropped after use.
 */
public final class Canonical {
  /** The version byte that opens the identity encoding. */
  private static final int ENCODING_VERSION = 1;
  /**
   * The labels hash is XXH64, with this seed, of the identity encoding followed by the metadata
   * labels' encoding (any fixed seed other than 0 keeps it independent of the identity hash).
   */
  private static final long LABELS_SEED = 0x9E3779B97F4A7C15L;
  /** A reader's array past this many entries is dropped after use. */
  private static final int RETAINED_MAX = 1 << 16;
  private static final ThreadLocal<Canonical> LOCAL = ThreadLocal.withInitial(Canonical::new);

  private final Encoder encoder = new Encoder();
  /** Where the {@link KubernetesLabels#SPECIAL} labels are, for a label array without a shape. */
  private final int[] special = new int[KubernetesLabels.SPECIAL.length];
  /** The label shapes this thread has seen. */
  private final LabelShape.Cache shapes = new LabelShape.Cache();
  /** The thread's reader; null while a read uses it. */
  private PairReader reader = new PairReader();

  /** The shape of the label array {@link #read} or {@link #arrange} returned last, or null. */
  private LabelShape shape;
  private int metaFrom;
  private int metaTo;
  private String node;
  private String zone;
  private long hash;
  private long labelsHash;

  private Canonical() {}

  /**
   * The calling thread's instance.
   *
   * @return it
   */
  public static Canonical get() {
    return LOCAL.get();
  }

  /**
   * The labels of {@code labels} as a valid label array, in name order. A {@link LabelMap} gives
   * its array (shared when the view covers it). Sets the {@linkplain #shape() shape}.
   *
   * @param labels a label map; not null
   * @return a label array the caller keeps and never writes
   * @throws NullPointerException if a name or a value is null
   * @throws IllegalArgumentException if a name is empty
   */
  public String[] read(Map<String, String> labels) {
    if (labels instanceof LabelMap m) {
      shape = null;
      return m.array();
    }
    PairReader r = takeReader();
    try {
      int size = labels.size();
      r.start(size);
      LabelShape last = shapes.last();
      if (last != null && last.size() == size) {
        r.expect(last);
      }
      labels.forEach(r);
      if (r.readAsExpected()) {
        shape = r.expected();
        return r.arranged;
      }
      if (r.invalid) {
        String[] kv = LabelArrays.copy(labels);
        shape = null;
        return kv;
      }
      return arrange(r.kv, r.pairs);
    } finally {
      // Also when the map's forEach throws: the thread keeps its reader.
      release(r);
    }
  }

  /**
   * The first {@code pairs} pairs of {@code in} (valid pairs, in any order; read, not kept) as a
   * label array in name order: with a remembered shape's names when one matches (one instance
   * per distinct name, and no sort), else sorted here (a repeated name keeps its last value) and
   * remembered as a new shape. Sets the {@linkplain #shape() shape}.
   *
   * @param in names and values interleaved
   * @param pairs how many pairs of {@code in} to take
   * @return a new label array the caller keeps and never writes
   */
  public String[] arrange(String[] in, int pairs) {
    if (pairs == 0) {
      shape = LabelShape.EMPTY;
      return LabelArrays.NO_LABELS;
    }
    LabelShape s = shapes.find(in, pairs);
    if (s != null) {
      shape = s;
      return s.arrange(in);
    }
    String[] kv = Arrays.copyOf(in, pairs << 1);
    int kept = LabelArrays.sortedDistinct(kv, pairs);
    if (kept != pairs) {
      shape = null;
      return Arrays.copyOf(kv, kept << 1);
    }
    int from = LabelArrays.lowerBound(kv, 0, pairs, LabelArrays.META_PREFIX);
    int to = LabelArrays.lowerBound(kv, from, pairs, LabelArrays.META_END);
    int[] at = new int[KubernetesLabels.SPECIAL.length];
    KubernetesLabels.find(kv, from, to, at);
    s = LabelShape.of(in, kv, from, to, at, LabelArrays.indexOf(kv, 0, from, LabelArrays.ADDRESS));
    shapes.add(s);
    shape = s;
    return kv;
  }

  /**
   * The shape of the label array {@link #read} or {@link #arrange} returned last.
   *
   * @return the shape, or null when it was built without one
   */
  public LabelShape shape() {
    return shape;
  }

  /**
   * Derives the canonical form of a target of {@code job}, {@code address} and {@code kv}, the
   * label array {@link #read} or {@link #arrange} returned last on this thread; the accessors
   * then return it. Allocation-free once the buffer has grown.
   *
   * @param job the job, validated
   * @param address the address, validated
   * @param kv the label array
   * @throws IllegalArgumentException if {@code kv} has an {@code __address__} label other than
   *     {@code address}
   */
  public void derive(String job, String address, String[] kv) {
    LabelShape s = shape;
    int pairs = kv.length >> 1;
    int[] at;
    int addressAt;
    if (s != null) {
      metaFrom = s.metaFrom;
      metaTo = s.metaTo;
      at = s.special;
      addressAt = s.address;
    } else {
      metaFrom = LabelArrays.lowerBound(kv, 0, pairs, LabelArrays.META_PREFIX);
      metaTo = LabelArrays.lowerBound(kv, metaFrom, pairs, LabelArrays.META_END);
      at = special;
      KubernetesLabels.find(kv, metaFrom, metaTo, at);
      addressAt = LabelArrays.indexOf(kv, 0, metaFrom, LabelArrays.ADDRESS);
    }
    if (addressAt >= 0 && !address.equals(kv[(addressAt << 1) + 1])) {
      throw new IllegalArgumentException("target address '" + address
          + "' disagrees with its __address__ label '" + kv[(addressAt << 1) + 1]
          + "': give the same address, or leave __address__ out of the labels");
    }
    node = KubernetesLabels.node(kv, at);
    zone = KubernetesLabels.zone(kv, at);

    Encoder e = encoder;
    e.reset();
    e.writeByte(ENCODING_VERSION);
    e.writeString(job);
    e.writeString(address);
    e.writePairs(kv, 0, metaFrom, s);
    e.writePairs(kv, metaTo, pairs, s);
    int identityLength = e.length();
    e.writePairs(kv, metaFrom, metaTo, s);
    hash = e.hash(0, identityLength, 0);
    labelsHash = e.hash(0, e.length(), LABELS_SEED);
    e.trim();
  }

  /**
   * After {@link #derive}: the first {@code __meta_*} pair.
   *
   * @return the pair index
   */
  public int metaFrom() {
    return metaFrom;
  }

  /**
   * After {@link #derive}: past the last {@code __meta_*} pair.
   *
   * @return the pair index
   */
  public int metaTo() {
    return metaTo;
  }

  /**
   * After {@link #derive}: the node.
   *
   * @return the node, or null
   */
  public String node() {
    return node;
  }

  /**
   * After {@link #derive}: the zone.
   *
   * @return the zone, or null
   */
  public String zone() {
    return zone;
  }

  /**
   * After {@link #derive}: the identity hash, stable across releases and JVMs.
   *
   * @return the hash
   */
  public long hash() {
    return hash;
  }

  /**
   * After {@link #derive}: the labels hash, of this running library only.
   *
   * @return the hash
   */
  public long labelsHash() {
    return labelsHash;
  }

  /**
   * The thread's pair reader, or a new one if it is in use: a map's {@code forEach} runs the
   * caller's code, which may build a target itself.
   */
  private PairReader takeReader() {
    PairReader r = reader;
    if (r == null) {
      return new PairReader();
    }
    reader = null;
    return r;
  }

  private void release(PairReader r) {
    if (r.kv.length > RETAINED_MAX) {
      r.kv = new String[32];
    }
    r.clear();
    reader = r;
  }
}
