package dev.apportion.allocation;

import dev.apportion.allocation.identity.Canonical;
import dev.apportion.allocation.identity.LabelArrays;
import dev.apportion.allocation.identity.LabelMap;
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
 * <h2>Address</h2>
 * The address is given apart from the labels ({@code Target.of(job, address, labels)}), as a
 * discovery loop reads it from them. When the labels carry {@code __address__} as well, the
 * label must be the address itself: {@code Target.of("j", "a:1", Map.of("__address__", "b:2"))}
 * throws an {@link IllegalArgumentException} naming both, rather than keep a target whose
 * address and labels disagree (an {@code __address__} equal to the address is accepted, and is
 * what Prometheus discovery gives).
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
 * decoded alike) is placed in name order by a remembered permutation instead of a sort, and its
 * names are neither searched nor encoded again; the target keeps the shape's instance of each
 * name, so that a million targets share each name instead of keeping a million copies. Other maps
 * are sorted (unless they come in name order already, as from a {@code TreeMap}). The job, the
 * address and the labels are encoded once into a per-thread buffer (no {@code byte[]} per string)
 * and hashed twice, with two seeds: the identity part gives {@link #hash()}, the whole encoding
 * {@link #labelsHash()}, an independent 64-bit value. Both are then read, never recomputed;
 * {@link #equals} and {@link #sameLabels} compare them first and allocate nothing. A collector
 * that builds the same targets refresh after refresh should use a {@link TargetInterner}, which
 * gives back the target it built last time for a label set that did not change.
 *
 * @since 0.1.0
 */
public final class Target {
  /** Labels whose name starts with this prefix are metadata, not identity. */
  public static final String META_PREFIX = LabelArrays.META_PREFIX;
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

  /**
   * A target of {@code kv}, the label array {@code c} read or arranged last (strictly ascending by
   * name, without nulls, never written again): {@code c} derives the rest.
   */
  private Target(String job, String address, String[] kv, Canonical c) {
    c.derive(job, address, kv);
    this.job = job;
    this.address = address;
    this.kv = kv;
    this.metaFrom = c.metaFrom();
    this.metaTo = c.metaTo();
    this.node = c.node();
    this.zone = c.zone();
    this.hash = c.hash();
    this.labelsHash = c.labelsHash();
    this.cost = DEFAULT_COST;
  }

  /**
   * A target.
   *
   * <p>Passing another target's {@link #labels()} (or a sub-map of them) reuses or slices its
   * label array without validating or sorting again: {@code Target.of(job, address,
   * old.labels())} costs the two hashes and little else. A map that iterates in name order
   * already (a {@code TreeMap}, a {@code SortedMap} in natural order) is copied without sorting.
   *
   * @param job the scrape job's name; not null, not blank
   * @param address the address scraped (host:port or URL); not null, not blank
   * @param labels the target's labels, including any {@code __meta_*} discovery labels; not null,
   *     no null names or values; an {@code __address__} label, if any, equal to {@code address}.
   *     The map is copied (or, if it is another target's labels, shared: those never change).
   * @return the target
   * @throws NullPointerException if an argument, a label name or a label value is null
   * @throws IllegalArgumentException if {@code job} or {@code address} is blank, a label name is
   *     empty (label values may be empty), or the labels' {@code __address__} is not {@code
   *     address}
   */
  public static Target of(String job, String address, Map<String, String> labels) {
    checkJobAndAddress(job, address);
    Objects.requireNonNull(labels, "target labels must not be null");
    Canonical c = Canonical.get();
    return new Target(job, address, c.read(labels), c);
  }

  /**
   * A target of the first {@code pairs} pairs of {@code in}: valid pairs (names neither null nor
   * empty, values not null) in any order, read, not kept. {@code c} is the calling thread's
   * {@link Canonical}; its {@link Canonical#shape() shape()} is then the shape of the target's
   * names (null if it has none).
   */
  static Target ofPairs(String job, String address, String[] in, int pairs, Canonical c) {
    return new Target(job, address, c.arrange(in, pairs), c);
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
}
