package dev.apportion.allocation;

import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;

/**
 * One scrape target: a job, an address and the labels service discovery gave it. Immutable and
 * thread-safe; everything derived (node, identity hash, labels hash) is computed once, at
 * construction.
 *
 * <h2>Identity</h2>
 * A target's identity is its job, its address and every label whose name does not start with
 * {@value #META_PREFIX}. The {@code __meta_*} labels are discovery metadata that may change while
 * the target stays the same (a pod's annotations, an endpoint's readiness), so two targets that
 * differ only in them are {@linkplain #equals equal}: an allocator keeps such a target on its
 * collector and carries its new labels (the one exception: under {@code per-node}, a change of
 * the labels {@link #node()} is read from moves the target to its new node's collector). Two
 * targets with the same job and address but other identity labels are two targets.
 *
 * <h2>The identity hash</h2>
 * {@link #hash()} is XXH64 (seed 0) over a canonical encoding of the identity, computed once here
 * and never again: placement reads this number, it never re-hashes strings. The encoding is
 * version byte {@code 1}, then job, address and each identity label's name and value in label
 * name order, each string as its UTF-8 length (unsigned LEB128) followed by its UTF-8 bytes (as
 * {@link String#getBytes(java.nio.charset.Charset) getBytes(UTF_8)} gives them, so an unpaired
 * surrogate is the byte {@code '?'}). The encoding is unambiguous (no two identities share it)
 * and, with XXH64's published specification, <b>stable across releases and JVMs</b>: every
 * replica that builds the same target computes the same hash.
 *
 * <h2>Node</h2>
 * {@link #node()} is the Kubernetes node the target lives on, resolved once from the first
 * non-empty of {@code __meta_kubernetes_pod_node_name}, {@code __meta_kubernetes_node_name},
 * {@code __meta_kubernetes_endpoint_node_name}, and then, when
 * {@code __meta_kubernetes_endpointslice_address_target_kind} is {@code Node}, the value of
 * {@code __meta_kubernetes_endpointslice_address_target_name}; then, when the endpoints role's
 * {@code __meta_kubernetes_endpoint_address_target_kind} is {@code Node}, the value of
 * {@code __meta_kubernetes_endpoint_address_target_name}; then
 * {@code __meta_kubernetes_endpointslice_endpoint_node_name}.
 *
 * <h2>Zone</h2>
 * {@link #zone()} is the zone its labels name, resolved once from the first non-blank of
 * {@code __meta_kubernetes_endpointslice_endpoint_zone} and
 * {@code __meta_kubernetes_node_label_topology_kubernetes_io_zone}. When the labels name none, an
 * allocator that partitions by zone falls back to its node's zone (docs/api.md gives the order).
 *
 * <h2>Scrape cost</h2>
 * {@link #cost()} is what scraping the target costs, in any unit the caller picks (the samples its
 * last scrape returned is the usual one); {@link #withCost} attaches it. It is <em>not</em>
 * identity: targets that differ only in cost are {@linkplain #equals equal} and
 * {@linkplain #sameLabels carry the same labels}, and an allocator carries a new cost the way it
 * carries new {@code __meta_*} labels, without treating the target as another one. A target
 * built by {@link #of} costs {@value #DEFAULT_COST}, so a caller who attaches no cost gets the
 * balance by target count.
 *
 * <h2>Memory and construction cost</h2>
 * A target holds its labels in one array, names and values interleaved in name order, and no
 * object per label; {@link #labels()} is a view over that array, made on its first call and
 * returned again after, and {@code Target.of(job, address, other.labels())} shares the other
 * target's array instead of copying it. Construction reads the map in one {@code forEach} pass and
 * copies the labels once. Each thread remembers the last few label <em>shapes</em> it saw (a map's
 * names in the order it iterates them): a map shaped like an earlier one (every pod of a job,
 * decoded alike) is placed in name order by a remembered permutation instead of a sort, its
 * metadata range and node and zone labels are not searched again, its names' encodings are copied
 * already encoded, and the target keeps the shape's instance of each name, so that a million
 * targets share each name instead of keeping a million copies. Other maps are sorted (unless they
 * come in name order already, as from a {@code TreeMap}). Construction encodes job, address and
 * labels once into a per-thread scratch buffer (no {@code byte[]} per string), and hashes the bytes
 * twice, with two seeds: the identity part gives {@link #hash()}, the whole encoding
 * {@link #labelsHash()}, an independent 64-bit value. Both are then read, never recomputed;
 * {@link #equals} and {@link #sameLabels} compare them first and allocate nothing. A collector
 * that builds the same targets refresh after refresh should use a {@link TargetInterner}, which
 * gives back the target it built last time for a label set that did not change.
 *
 * @since 0.1.0
 */
public final class Target {
  /** Labels whose name starts with this prefix are metadata, not identity. */
  public static final String META_PREFIX = "__meta_";
  /**
   * The least string above every string that starts with {@link #META_PREFIX} ({@code '_' + 1} is
   * {@code '`'}): the {@code __meta_*} labels are exactly those in {@code [META_PREFIX, META_END)}.
   */
  private static final String META_END = "__meta`";

  private static final String[] NODE_LABELS = {
    "__meta_kubernetes_pod_node_name",
    "__meta_kubernetes_node_name",
    "__meta_kubernetes_endpoint_node_name",
  };
  private static final String SLICE_KIND = "__meta_kubernetes_endpointslice_address_target_kind";
  private static final String SLICE_NAME = "__meta_kubernetes_endpointslice_address_target_name";
  private static final String ENDPOINT_KIND = "__meta_kubernetes_endpoint_address_target_kind";
  private static final String ENDPOINT_NAME = "__meta_kubernetes_endpoint_address_target_name";
  private static final String SLICE_ENDPOINT_NODE = "__meta_kubernetes_endpointslice_endpoint_node_name";
  private static final String[] ZONE_LABELS = {
    "__meta_kubernetes_endpointslice_endpoint_zone",
    "__meta_kubernetes_node_label_topology_kubernetes_io_zone",
  };

  private static final String[] NO_LABELS = {};
  /** The version byte that opens the identity encoding. */
  private static final int ENCODING_VERSION = 1;
  /**
   * {@link #labelsHash()} is XXH64, with this seed, of the identity encoding followed by the
   * metadata labels' encoding (any fixed seed other than 0 keeps it independent of the identity
   * hash).
   */
  private static final long LABELS_SEED = 0x9E3779B97F4A7C15L;
  /** The cost of a target no cost was attached to. */
  public static final long DEFAULT_COST = 1L;

  /**
   * The largest cost a target may carry, 2<sup>40</sup> (about 1.1 trillion, far beyond any
   * scrape's samples): totals are sums of {@code long}s, and at this bound eight million targets
   * still sum without overflow, so every total an allocator keeps is exact.
   *
   * @since 0.1.0
   */
  public static final long MAX_COST = 1L << 40;
  /** Up to this many labels, insertion sort; above, a merge sort. */
  private static final int INSERTION_SORT_MAX = 16;

  private final String job;
  private final String address;
  /** All labels as name, value, name, value... strictly ascending by name; never written. */
  final String[] kv;
  /** The {@code __meta_*} labels are the pairs {@code [metaFrom, metaTo)} of {@link #kv}. */
  private final int metaFrom;
  private final int metaTo;
  private final String node;
  private final String zone;
  private final long hash;
  private final long labelsHash;
  /**
   * The view {@link #labels()} returns, over {@link #kv}: made on the first call, not with the
   * target, so a target that is only placed (most of them) does not carry it. A race between two
   * first calls makes two equal views, one of which is kept; {@link LabelMap}'s fields are final,
   * so either is safely published.
   */
  private LabelMap labels;
  private final long cost;

  /** {@code base} with another cost: shares every field, hashes nothing. */
  private Target(Target base, long cost) {
    this.job = base.job;
    this.address = base.address;
    this.kv = base.kv;
    this.labels = base.labels;
    this.metaFrom = base.metaFrom;
    this.metaTo = base.metaTo;
    this.node = base.node;
    this.zone = base.zone;
    this.hash = base.hash;
    this.labelsHash = base.labelsHash;
    this.cost = cost;
  }

  /** {@code kv} must be strictly ascending by name, without nulls, and never written again. */
  private Target(String job, String address, String[] kv) {
    this(job, address, kv, null, Scratch.start());
  }

  /**
   * {@code kv} must be strictly ascending by name, without nulls, and never written again; {@code
   * shape}, when not null, is the shape of its names (then its metadata range, the positions of
   * the labels node and zone are read from, and the names' encodings come from it).
   */
  private Target(String job, String address, String[] kv, LabelShape shape, Scratch s) {
    this.job = job;
    this.address = address;
    this.kv = kv;
    int pairs = kv.length >> 1;
    s.length = 0;
    int[] special;
    if (shape != null) {
      this.metaFrom = shape.metaFrom;
      this.metaTo = shape.metaTo;
      special = shape.special;
    } else {
      this.metaFrom = LabelMap.lowerBound(kv, 0, pairs, META_PREFIX);
      this.metaTo = LabelMap.lowerBound(kv, metaFrom, pairs, META_END);
      special = s.special;
      findSpecial(kv, metaFrom, metaTo, special);
    }
    this.node = resolveNode(kv, special);
    this.zone = firstNonBlank(kv, special, ZONE_FROM, SPECIAL.length);

    s.writeByte(ENCODING_VERSION);
    s.writeString(job);
    s.writeString(address);
    s.writePairs(kv, 0, metaFrom, shape);
    s.writePairs(kv, metaTo, pairs, shape);
    int identityLength = s.length;
    s.writePairs(kv, metaFrom, metaTo, shape);
    this.hash = XxHash64.hash(s.bytes, 0, identityLength, 0);
    // Over the whole encoding with its own seed, not seeded with `hash`: two distinct targets
    // whose identity hashes collide must still differ here, or an allocator could not tell them
    // apart without comparing strings.
    this.labelsHash = XxHash64.hash(s.bytes, 0, s.length, LABELS_SEED);
    s.finish();
    this.cost = DEFAULT_COST;
  }

  /**
   * A target.
   *
   * <p>Passing another target's {@link #labels()} (or a sub-map of them) reuses or slices its
   * label array without validating or sorting again: {@code Target.of(job, newAddress,
   * old.labels())} costs the two hashes and little else. A map that iterates in name order
   * already (a {@code TreeMap}, a {@code SortedMap} in natural order) is copied without sorting.
   *
   * @param job the scrape job's name; not null, not blank
   * @param address the address scraped (host:port or URL); not null, not blank
   * @param labels the target's labels, including any {@code __meta_*} discovery labels; not null,
   *     no null names or values. The map is copied (or, if it is another target's labels, shared:
   *     those never change).
   * @return the target
   * @throws NullPointerException if an argument, a label name or a label value is null
   * @throws IllegalArgumentException if {@code job} or {@code address} is blank, or a label name
   *     is empty (label values may be empty)
   */
  public static Target of(String job, String address, Map<String, String> labels) {
    checkJobAndAddress(job, address);
    Objects.requireNonNull(labels, "target labels must not be null");
    String[] kv;
    if (labels instanceof LabelMap m) {
      kv = m.coversArray() ? m.kv : Arrays.copyOfRange(m.kv, m.from << 1, m.to << 1);
      return new Target(job, address, kv);
    }
    Scratch s = Scratch.start();
    PairReader r = s.reader();
    try {
      int size = labels.size();
      r.start(size);
      LabelShape last = s.shapes.last();
      if (last != null && last.size() == size) {
        r.expect(last);
      }
      labels.forEach(r);
      if (r.readAsExpected()) {
        return new Target(job, address, r.arranged, r.expected(), s);
      }
      return r.invalid ? new Target(job, address, copy(labels)) : ofPairs(job, address, r.kv,
          r.pairs, s);
    } finally {
      // Also when the map's forEach throws: the thread keeps its reader.
      s.release(r);
    }
  }

  /**
   * A target of the first {@code pairs} pairs of {@code in}: valid pairs (names neither null nor
   * empty, values not null) in any order, read, not kept. The names are those of the thread's
   * {@link LabelShape} when one matches (one instance per distinct name, and no sort), else
   * sorted here and remembered as a new shape.
   */
  static Target ofPairs(String job, String address, String[] in, int pairs) {
    return ofPairs(job, address, in, pairs, Scratch.start());
  }

  private static Target ofPairs(String job, String address, String[] in, int pairs, Scratch s) {
    if (pairs == 0) {
      return new Target(job, address, NO_LABELS);
    }
    LabelShape shape = s.shapes.find(in, pairs);
    if (shape != null) {
      return new Target(job, address, shape.arrange(in), shape, s);
    }
    String[] kv = Arrays.copyOf(in, pairs << 1);
    int kept = pairs;
    if (!strictlyAscending(kv, pairs)) {
      sort(kv, pairs);
      kept = dropDuplicates(kv, pairs);
    }
    if (kept != pairs) {
      return new Target(job, address, Arrays.copyOf(kv, kept << 1));
    }
    int metaFrom = LabelMap.lowerBound(kv, 0, pairs, META_PREFIX);
    int metaTo = LabelMap.lowerBound(kv, metaFrom, pairs, META_END);
    int[] special = new int[SPECIAL.length];
    findSpecial(kv, metaFrom, metaTo, special);
    shape = LabelShape.of(in, kv, metaFrom, metaTo, special);
    s.shapes.add(shape);
    return new Target(job, address, kv, shape, s);
  }

  /** Throws what {@link #of} throws for a null or blank job or address. */
  static void checkJobAndAddress(String job, String address) {
    Objects.requireNonNull(job, "target job must not be null");
    Objects.requireNonNull(address, "target address must not be null");
    if (job.isBlank()) {
      throw new IllegalArgumentException("target job must not be blank: '" + job + "'");
    }
    if (address.isBlank()) {
      throw new IllegalArgumentException("target address must not be blank: '" + address + "'");
    }
  }

  /**
   * A target with no labels.
   *
   * @param job the scrape job's name; not null, not blank
   * @param address the address scraped; not null, not blank
   * @return the target
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code job} or {@code address} is blank
   */
  public static Target of(String job, String address) {
    return of(job, address, Map.of());
  }

  /**
   * This target with another {@linkplain #cost() cost}: same identity, labels, hashes and node.
   * Allocates one small object and hashes nothing (the label array and both hashes are shared),
   * so attaching a fresh cost on every discovery refresh is cheap. Returns {@code this} when the
   * cost is already {@code cost}.
   *
   * @param cost a number from 0 to {@value #MAX_COST}, in the caller's unit (e.g. samples per
   *     scrape)
   * @return the target with that cost
   * @throws IllegalArgumentException if {@code cost} is negative or above {@value #MAX_COST}
   * @since 0.1.0
   */
  public Target withCost(long cost) {
    if (cost < 0) {
      throw new IllegalArgumentException("target cost must not be negative: " + cost + " for "
          + this);
    }
    if (cost > MAX_COST) {
      throw new IllegalArgumentException("target cost must be at most " + MAX_COST + " (2^40): "
          + cost + " for " + this);
    }
    return cost == this.cost ? this : new Target(this, cost);
  }

  /**
   * What scraping this target costs, as attached by {@link #withCost}; {@value #DEFAULT_COST}
   * when none was. Not part of identity. Constant time, no allocation.
   *
   * @return a non-negative number
   * @since 0.1.0
   */
  public long cost() {
    return cost;
  }

  /**
   * The scrape job.
   *
   * @return the job's name
   */
  public String job() {
    return job;
  }

  /**
   * The address scraped.
   *
   * @return the address
   */
  public String address() {
    return address;
  }

  /**
   * All labels, {@code __meta_*} included, sorted by name. The first call makes one small view
   * object over the target's label array (no copy); later calls return it without allocating.
   * Lookups are binary searches; iteration, sub-maps and {@code equals} allocate nothing per label
   * beyond the entries an entry iterator returns. Thread-safe.
   *
   * @return an unmodifiable view, sorted by label name in natural {@code String} order (its
   *     {@link SortedMap#comparator() comparator()} is null)
   */
  public SortedMap<String, String> labels() {
    LabelMap view = labels;
    if (view == null) {
      view = new LabelMap(kv);
      labels = view;
    }
    return view;
  }

  /**
   * The Kubernetes node this target lives on, resolved once from its labels (see the class
   * documentation for the order).
   *
   * @return the node, or empty when no label names one
   */
  public Optional<String> node() {
    return Optional.ofNullable(node);
  }

  /**
   * The zone this target's labels name, resolved once (see the class documentation). Does not
   * allocate beyond the {@code Optional}.
   *
   * @return the zone, or empty when no label names one
   * @since 0.2.0
   */
  public Optional<String> zone() {
    return Optional.ofNullable(zone);
  }

  /**
   * The 64-bit identity hash, computed once at construction (see the class documentation for the
   * encoding and the hash function). Stable across releases and JVMs.
   *
   * @return the hash
   */
  public long hash() {
    return hash;
  }

  /**
   * A 64-bit hash of the job, the address and <em>all</em> labels, {@code __meta_*} included,
   * computed once at construction. It exists so that an allocator can tell "same identity, same
   * labels" by comparing two numbers: two {@linkplain #equals equal} targets with equal labels
   * hashes carry the same labels, except with probability about 2<sup>-64</sup>
   * ({@link #sameLabels} is the exact test, and starts with this comparison).
   *
   * <p><b>Warning:</b> unlike {@link #hash()}, this value is <b>not</b> stable across releases:
   * its encoding or function may change in any version. Never persist it or send it to another
   * process; compare it only with values computed by the same running library.
   *
   * @return the labels hash
   */
  public long labelsHash() {
    return labelsHash;
  }

  /**
   * Whether this target carries exactly the same labels as {@code other}, {@code __meta_*}
   * included. Equal targets may differ here; allocators use it to carry new labels. Compares
   * {@link #hash()} and {@link #labelsHash()} first, so targets that differ usually answer in
   * two comparisons; allocates nothing.
   *
   * @param other another target
   * @return true when job, address and all labels are equal (the {@linkplain #cost() cost} is not
   *     compared)
   */
  // ReferenceEquality: this == other is a fast path before the field-by-field comparison.
  @SuppressWarnings("ReferenceEquality")
  public boolean sameLabels(Target other) {
    return this == other
        || (hash == other.hash
            && labelsHash == other.labelsHash
            && job.equals(other.job)
            && address.equals(other.address)
            && (kv == other.kv || Arrays.equals(kv, other.kv)));
  }

  /**
   * Equal when job, address and every non-{@code __meta_} label are equal. Compares the identity
   * hashes first; allocates nothing.
   */
  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Target other)) {
      return false;
    }
    return hash == other.hash
        && job.equals(other.job)
        && address.equals(other.address)
        && (kv == other.kv || identityLabelsEqual(other));
  }

  private boolean identityLabelsEqual(Target other) {
    String[] a = kv;
    String[] b = other.kv;
    return Arrays.equals(a, 0, metaFrom << 1, b, 0, other.metaFrom << 1)
        && Arrays.equals(a, metaTo << 1, a.length, b, other.metaTo << 1, b.length);
  }

  /** Derived from {@link #hash()}; consistent with {@link #equals}. */
  @Override
  public int hashCode() {
    return (int) (hash ^ (hash >>> 32));
  }

  /** {@code job/address}, then the identity labels as {@code {name="value",...}} if any. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(job).append('/').append(address);
    int pairs = kv.length >> 1;
    if (metaTo - metaFrom < pairs) {
      sb.append('{');
      appendLabels(sb, 0, metaFrom, true);
      appendLabels(sb, metaTo, pairs, metaFrom == 0);
      sb.append('}');
    }
    return sb.toString();
  }

  private void appendLabels(StringBuilder sb, int from, int to, boolean first) {
    for (int i = from; i < to; i++) {
      if (i > from || !first) {
        sb.append(',');
      }
      sb.append(kv[i << 1]).append("=\"").append(kv[(i << 1) + 1]).append('"');
    }
  }

  // ---- construction -----------------------------------------------------------------------------

  /** The labels as a valid label array (see {@link #kv}), validated. */
  private static String[] copy(Map<String, String> labels) {
    if (labels.isEmpty()) {
      return NO_LABELS;
    }
    // size() is a hint only: a concurrent map may change while it is iterated.
    String[] kv = new String[Math.max(labels.size(), 1) << 1];
    int n = 0;
    for (Map.Entry<String, String> e : labels.entrySet()) {
      String name = e.getKey();
      if (name == null) {
        throw new NullPointerException("target label name must not be null");
      }
      String value = e.getValue();
      if (value == null) {
        throw new NullPointerException("target label '" + name + "' must not have a null value");
      }
      if (name.isEmpty()) {
        // Prometheus label names match [a-zA-Z_][a-zA-Z0-9_]*: an empty one is a caller's bug.
        throw new IllegalArgumentException("target label name must not be empty (its value is '"
            + value + "')");
      }
      if (n << 1 == kv.length) {
        kv = Arrays.copyOf(kv, kv.length << 1);
      }
      kv[n << 1] = name;
      kv[(n << 1) + 1] = value;
      n++;
    }
    if (!strictlyAscending(kv, n)) {
      sort(kv, n);
      n = dropDuplicates(kv, n);
    }
    if (n == 0) {
      return NO_LABELS;
    }
    return n << 1 == kv.length ? kv : Arrays.copyOf(kv, n << 1);
  }

  private static boolean strictlyAscending(String[] kv, int pairs) {
    for (int i = 1; i < pairs; i++) {
      if (kv[(i - 1) << 1].compareTo(kv[i << 1]) >= 0) {
        return false;
      }
    }
    return true;
  }

  /** Sorts the first {@code pairs} pairs by name; stable, so equal names keep their order. */
  private static void sort(String[] kv, int pairs) {
    if (pairs <= INSERTION_SORT_MAX) {
      insertionSort(kv, 0, pairs);
    } else {
      mergeSort(kv, new String[pairs << 1], 0, pairs);
    }
  }

  /**
   * Binary insertion sort: label names often share long prefixes ({@code __meta_kubernetes_...}),
   * so comparisons cost more than moves, and this makes about {@code n log n} of them.
   */
  private static void insertionSort(String[] kv, int from, int to) {
    for (int i = from + 1; i < to; i++) {
      String name = kv[i << 1];
      // The first pair in [from, i) whose name is above `name`: after any equal ones (stable).
      int lo = from;
      int hi = i;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (kv[mid << 1].compareTo(name) <= 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      if (lo == i) {
        continue;
      }
      String value = kv[(i << 1) + 1];
      System.arraycopy(kv, lo << 1, kv, (lo + 1) << 1, (i - lo) << 1);
      kv[lo << 1] = name;
      kv[(lo << 1) + 1] = value;
    }
  }

  private static void mergeSort(String[] kv, String[] tmp, int from, int to) {
    if (to - from <= INSERTION_SORT_MAX) {
      insertionSort(kv, from, to);
      return;
    }
    int mid = (from + to) >>> 1;
    mergeSort(kv, tmp, from, mid);
    mergeSort(kv, tmp, mid, to);
    if (kv[(mid - 1) << 1].compareTo(kv[mid << 1]) <= 0) {
      return;
    }
    // Merge the left half (moved to tmp) with the right half (in place) into kv[from, to).
    System.arraycopy(kv, from << 1, tmp, from << 1, (mid - from) << 1);
    int i = from;
    int j = mid;
    int k = from;
    while (i < mid && j < to) {
      if (kv[j << 1].compareTo(tmp[i << 1]) < 0) {
        kv[k << 1] = kv[j << 1];
        kv[(k << 1) + 1] = kv[(j << 1) + 1];
        j++;
      } else {
        kv[k << 1] = tmp[i << 1];
        kv[(k << 1) + 1] = tmp[(i << 1) + 1];
        i++;
      }
      k++;
    }
    System.arraycopy(tmp, i << 1, kv, k << 1, (mid - i) << 1);
  }

  /**
   * Keeps the last of each run of equal names (as {@code Map.put} would), for maps whose entry
   * set repeats a name (a broken or concurrently modified map). Returns the pairs kept.
   */
  private static int dropDuplicates(String[] kv, int pairs) {
    int w = 0;
    for (int r = 0; r < pairs; r++) {
      if (w > 0 && kv[(w - 1) << 1].equals(kv[r << 1])) {
        w--;
      }
      kv[w << 1] = kv[r << 1];
      kv[(w << 1) + 1] = kv[(r << 1) + 1];
      w++;
    }
    return w;
  }

  /**
   * The labels {@link #node()} and {@link #zone()} are read from: the node labels in order of
   * precedence ({@code 0..2}), then the endpointslice kind and name ({@code 3, 4}), the endpoints
   * kind and name ({@code 5, 6}), the endpointslice endpoint node ({@code 7}), and the zone labels
   * from {@link #ZONE_FROM} on.
   */
  static final String[] SPECIAL = {
    NODE_LABELS[0], NODE_LABELS[1], NODE_LABELS[2],
    SLICE_KIND, SLICE_NAME, ENDPOINT_KIND, ENDPOINT_NAME, SLICE_ENDPOINT_NODE,
    ZONE_LABELS[0], ZONE_LABELS[1],
  };
  private static final int ZONE_FROM = 8;

  /** Writes the pair index of each {@link #SPECIAL} label into {@code at}, -1 where absent. */
  static void findSpecial(String[] kv, int metaFrom, int metaTo, int[] at) {
    for (int k = 0; k < SPECIAL.length; k++) {
      at[k] = metaFrom == metaTo ? -1 : LabelMap.indexOf(kv, metaFrom, metaTo, SPECIAL[k]);
    }
  }

  private static String resolveNode(String[] kv, int[] at) {
    String value = firstNonBlank(kv, at, 0, 3);
    if (value == null) {
      value = namedNode(kv, at[3], at[4]);
    }
    if (value == null) {
      value = namedNode(kv, at[5], at[6]);
    }
    if (value == null) {
      value = nonBlank(valueAt(kv, at[7]));
    }
    return value;
  }

  private static String firstNonBlank(String[] kv, int[] at, int from, int to) {
    for (int k = from; k < to; k++) {
      String value = nonBlank(valueAt(kv, at[k]));
      if (value != null) {
        return value;
      }
    }
    return null;
  }

  /** The value of pair {@code name} when pair {@code kind}'s value is {@code Node}; else null. */
  private static String namedNode(String[] kv, int kind, int name) {
    return "Node".equals(valueAt(kv, kind)) ? nonBlank(valueAt(kv, name)) : null;
  }

  private static String nonBlank(String s) {
    return s == null || s.isBlank() ? null : s;
  }

  private static String valueAt(String[] kv, int pair) {
    return pair < 0 ? null : kv[(pair << 1) + 1];
  }

  /**
   * A per-thread buffer the hash encodings are written into, so that hashing a target allocates
   * nothing once the buffer has grown to the thread's largest target (buffers above {@link
   * #RETAINED_MAX} bytes are dropped after use, so one huge target does not pin its memory).
   * Strings are written as their unsigned LEB128 UTF-8 length and their UTF-8 bytes, exactly as
   * {@code String.getBytes(UTF_8)} encodes them: ASCII one byte per char, surrogate pairs four
   * bytes, an unpaired surrogate {@code '?'}.
   *
   * <p>Not reentrant: nothing between {@link #start()} and {@link #finish()} may start another
   * encoding on the same thread (only {@code String} methods run there).
   *
   * <p>allocation-core's {@code dev.apportion.allocation.ownership.TargetKey#writeString} writes
   * the same string encoding for its {@code onlyLabels} key. It is a second copy on purpose: this
   * writer is private to the api module, and sharing it across the module boundary would mean
   * exporting encoding internals from the public api. Both are pinned by golden values; keep
   * them in step.
   */
  private static final class Scratch {
    private static final int INITIAL = 256;
    private static final int RETAINED_MAX = 1 << 16;
    private static final ThreadLocal<Scratch> LOCAL = ThreadLocal.withInitial(Scratch::new);

    byte[] bytes = new byte[INITIAL];
    int length;
    /** The positions of the {@link #SPECIAL} labels, for a target built without a shape. */
    final int[] special = new int[SPECIAL.length];
    /** The label shapes this thread has seen. */
    final LabelShape.Cache shapes = new LabelShape.Cache();
    private PairReader reader = new PairReader();

    static Scratch start() {
      Scratch s = LOCAL.get();
      s.length = 0;
      return s;
    }

    /**
     * The thread's pair reader, or a new one if it is in use: a map's {@code forEach} runs the
     * caller's code, which may build a target itself.
     */
    PairReader reader() {
      PairReader r = reader;
      if (r == null) {
        return new PairReader();
      }
      reader = null;
      return r;
    }

    void release(PairReader r) {
      if (r.kv.length > RETAINED_MAX) {
        r.kv = new String[32];
      }
      r.clear();
      reader = r;
    }

    void finish() {
      if (bytes.length > RETAINED_MAX) {
        bytes = new byte[INITIAL];
      }
    }

    private void ensure(long capacity) {
      if (capacity > bytes.length) {
        if (capacity > Integer.MAX_VALUE - 8) {
          throw new IllegalArgumentException("target too large to hash: " + capacity + " bytes");
        }
        bytes = Arrays.copyOf(bytes, (int) Math.max(capacity, Math.min(
            (long) bytes.length << 1, Integer.MAX_VALUE - 8)));
      }
    }

    void writeByte(int b) {
      ensure(length + 1L);
      bytes[length++] = (byte) b;
    }

    /** Writes pairs {@code [from, to)}, their names from {@code shape}'s encodings if given. */
    void writePairs(String[] kv, int from, int to, LabelShape shape) {
      if (shape == null) {
        for (int i = from << 1, end = to << 1; i < end; i++) {
          writeString(kv[i]);
        }
        return;
      }
      byte[] names = shape.encoded;
      int[] offsets = shape.offsets;
      for (int p = from; p < to; p++) {
        int start = offsets[p];
        int n = offsets[p + 1] - start;
        ensure((long) length + n);
        System.arraycopy(names, start, bytes, length, n);
        length += n;
        writeString(kv[(p << 1) + 1]);
      }
    }

    /**
     * Writes {@code s} in one pass when it is ASCII: the chars are copied behind room for the
     * length of an ASCII string; at the first other char the rest's UTF-8 length is counted and
     * the ASCII prefix moved if the length takes another number of bytes.
     */
    void writeString(String s) {
      int chars = s.length();
      int prefix = lebSize(chars);
      ensure((long) length + prefix + chars);
      byte[] b = bytes;
      int start = length + prefix;
      int i = 0;
      // A plain loop over charAt: measured faster here (JDK 17) than copying the chars out with
      // getChars and checking and narrowing them in two array loops.
      for (; i < chars; i++) {
        char c = s.charAt(i);
        if (c >= 0x80) {
          break;
        }
        b[start + i] = (byte) c;
      }
      if (i == chars) {
        writeLeb(b, length, chars);
        length = start + chars;
        return;
      }
      long utf8 = i + utf8Length(s, i);
      ensure(length + 5L + utf8);
      int utf8Prefix = lebSize((int) utf8);
      b = bytes;
      if (utf8Prefix != prefix) {
        System.arraycopy(b, start, b, length + utf8Prefix, i);
        start = length + utf8Prefix;
      }
      writeLeb(b, length, (int) utf8);
      int p = start + i;
      while (i < chars) {
        char c = s.charAt(i++);
        if (c < 0x80) {
          b[p++] = (byte) c;
        } else if (c < 0x800) {
          b[p++] = (byte) (0xC0 | (c >> 6));
          b[p++] = (byte) (0x80 | (c & 0x3F));
        } else if (Character.isSurrogate(c)) {
          if (Character.isHighSurrogate(c) && i < chars
              && Character.isLowSurrogate(s.charAt(i))) {
            int cp = Character.toCodePoint(c, s.charAt(i++));
            b[p++] = (byte) (0xF0 | (cp >> 18));
            b[p++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
            b[p++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
            b[p++] = (byte) (0x80 | (cp & 0x3F));
          } else {
            b[p++] = '?';
          }
        } else {
          b[p++] = (byte) (0xE0 | (c >> 12));
          b[p++] = (byte) (0x80 | ((c >> 6) & 0x3F));
          b[p++] = (byte) (0x80 | (c & 0x3F));
        }
      }
      length = p;
    }

    /** The UTF-8 length of {@code s} from char {@code from} on, as {@code getBytes} counts it. */
    private static long utf8Length(String s, int from) {
      long n = 0;
      int chars = s.length();
      for (int i = from; i < chars; i++) {
        char c = s.charAt(i);
        if (c < 0x80) {
          n++;
        } else if (c < 0x800) {
          n += 2;
        } else if (Character.isSurrogate(c)) {
          if (Character.isHighSurrogate(c) && i + 1 < chars
              && Character.isLowSurrogate(s.charAt(i + 1))) {
            i++;
            n += 4;
          } else {
            n++;
          }
        } else {
          n += 3;
        }
      }
      return n;
    }

    private static int lebSize(int n) {
      return n < (1 << 7) ? 1 : n < (1 << 14) ? 2 : n < (1 << 21) ? 3 : n < (1 << 28) ? 4 : 5;
    }

    private static void writeLeb(byte[] b, int at, int n) {
      while ((n & ~0x7F) != 0) {
        b[at++] = (byte) ((n & 0x7F) | 0x80);
        n >>>= 7;
      }
      b[at] = (byte) n;
    }
  }
}
