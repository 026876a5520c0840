package dev.apportion.allocation;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One scrape target: a job, an address and the labels service discovery gave it. Immutable and
 * thread-safe; everything derived (node, identity hash) is computed once, at construction.
 *
 * <h2>Identity</h2>
 * A target's identity is its job, its address and every label whose name does not start with
 * {@value #META_PREFIX}. The {@code __meta_*} labels are discovery metadata that may change while
 * the target stays the same (a pod's annotations, an endpoint's readiness), so two targets that
 * differ only in them are {@linkplain #equals equal}: an allocator keeps such a target on its
 * collector and carries its new labels (the one exception: under {@code per-node}, a change of
 * the labels {@link #node()} is read from moves the target to its new node's collector). Two targets with the same job and address but other
 * identity labels are two targets.
 *
 * <h2>The identity hash</h2>
 * {@link #hash()} is XXH64 (seed 0) over a canonical encoding of the identity, computed once here
 * and never again: placement reads this number, it never re-hashes strings. The encoding is
 * version byte {@code 1}, then job, address and each identity label's name and value in label
 * name order, each string as its UTF-8 length (unsigned LEB128) followed by its UTF-8 bytes. The
 * encoding is unambiguous (no two identities share it) and, with XXH64's published
 * specification, <b>stable across releases and JVMs</b>: every replica that builds the same target
 * computes the same hash.
 *
 * <h2>Node</h2>
 * {@link #node()} is the Kubernetes node the target lives on, resolved once from the first
 * non-empty of {@code __meta_kubernetes_pod_node_name}, {@code __meta_kubernetes_node_name},
 * {@code __meta_kubernetes_endpoint_node_name}, and then, when
 * {@code __meta_kubernetes_endpointslice_address_target_kind} is {@code Node}, the value of
 * {@code __meta_kubernetes_endpointslice_address_target_name}.
 *
 * @since 0.1.0
 */
public final class Target {
  /** Labels whose name starts with this prefix are metadata, not identity. */
  public static final String META_PREFIX = "__meta_";

  private static final String[] NODE_LABELS = {
    "__meta_kubernetes_pod_node_name",
    "__meta_kubernetes_node_name",
    "__meta_kubernetes_endpoint_node_name",
  };
  private static final String SLICE_KIND = "__meta_kubernetes_endpointslice_address_target_kind";
  private static final String SLICE_NAME = "__meta_kubernetes_endpointslice_address_target_name";

  private final String job;
  private final String address;
  private final SortedMap<String, String> labels;
  /** Identity labels as name, value, name, value... in name order. */
  private final String[] identityLabels;
  private final String node;
  private final long hash;

  private Target(String job, String address, SortedMap<String, String> labels) {
    this.job = job;
    this.address = address;
    this.labels = Collections.unmodifiableSortedMap(labels);
    this.identityLabels = identityLabels(labels);
    this.node = resolveNode(labels);
    this.hash = computeHash(job, address, identityLabels);
  }

  /**
   * A target.
   *
   * @param job the scrape job's name; not null, not blank
   * @param address the address scraped (host:port or URL); not null, not blank
   * @param labels the target's labels, including any {@code __meta_*} discovery labels; not null,
   *     no null names or values. The map is copied.
   * @return the target
   * @throws NullPointerException if an argument, a label name or a label value is null
   * @throws IllegalArgumentException if {@code job} or {@code address} is blank
   */
  public static Target of(String job, String address, Map<String, String> labels) {
    Objects.requireNonNull(job, "target job must not be null");
    Objects.requireNonNull(address, "target address must not be null");
    Objects.requireNonNull(labels, "target labels must not be null");
    if (job.isBlank()) {
      throw new IllegalArgumentException("target job must not be blank: '" + job + "'");
    }
    if (address.isBlank()) {
      throw new IllegalArgumentException("target address must not be blank: '" + address + "'");
    }
    TreeMap<String, String> copy = new TreeMap<>();
    for (Map.Entry<String, String> e : labels.entrySet()) {
      String name = Objects.requireNonNull(e.getKey(), "target label name must not be null");
      String value = Objects.requireNonNull(e.getValue(),
          () -> "target label '" + name + "' must not have a null value");
      copy.put(name, value);
    }
    return new Target(job, address, copy);
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
   * All labels, {@code __meta_*} included, sorted by name. Does not allocate.
   *
   * @return an unmodifiable view, sorted by label name
   */
  public SortedMap<String, String> labels() {
    return labels;
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
   * The 64-bit identity hash, computed once at construction (see the class documentation for the
   * encoding and the hash function). Stable across releases and JVMs.
   *
   * @return the hash
   */
  public long hash() {
    return hash;
  }

  /**
   * Whether this target carries exactly the same labels as {@code other}, {@code __meta_*}
   * included. Equal targets may differ here; allocators use it to carry new labels.
   *
   * @param other another target
   * @return true when job, address and all labels are equal
   */
  public boolean sameLabels(Target other) {
    return this == other || (equals(other) && labels.equals(other.labels));
  }

  /** Equal when job, address and every non-{@code __meta_} label are equal. */
  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Target)) {
      return false;
    }
    Target other = (Target) o;
    return hash == other.hash
        && job.equals(other.job)
        && address.equals(other.address)
        && Arrays.equals(identityLabels, other.identityLabels);
  }

  /** Derived from {@link #hash()}; consistent with {@link #equals}. */
  @Override
  public int hashCode() {
    return (int) (hash ^ (hash >>> 32));
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(job).append('/').append(address);
    if (identityLabels.length > 0) {
      sb.append('{');
      for (int i = 0; i < identityLabels.length; i += 2) {
        if (i > 0) {
          sb.append(',');
        }
        sb.append(identityLabels[i]).append("=\"").append(identityLabels[i + 1]).append('"');
      }
      sb.append('}');
    }
    return sb.toString();
  }

  private static String[] identityLabels(SortedMap<String, String> labels) {
    int n = 0;
    for (String name : labels.keySet()) {
      if (!name.startsWith(META_PREFIX)) {
        n++;
      }
    }
    String[] out = new String[2 * n];
    int i = 0;
    for (Map.Entry<String, String> e : labels.entrySet()) {
      if (!e.getKey().startsWith(META_PREFIX)) {
        out[i++] = e.getKey();
        out[i++] = e.getValue();
      }
    }
    return out;
  }

  private static String resolveNode(Map<String, String> labels) {
    for (String name : NODE_LABELS) {
      String value = labels.get(name);
      if (value != null && !value.isEmpty()) {
        return value;
      }
    }
    if ("Node".equals(labels.get(SLICE_KIND))) {
      String value = labels.get(SLICE_NAME);
      if (value != null && !value.isEmpty()) {
        return value;
      }
    }
    return null;
  }

  private static long computeHash(String job, String address, String[] identityLabels) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(64 + 16 * identityLabels.length);
    out.write(1);
    writeString(out, job);
    writeString(out, address);
    for (String s : identityLabels) {
      writeString(out, s);
    }
    byte[] bytes = out.toByteArray();
    return XxHash64.hash(bytes, bytes.length);
  }

  private static void writeString(ByteArrayOutputStream out, String s) {
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    int n = utf8.length;
    while ((n & ~0x7F) != 0) {
      out.write((n & 0x7F) | 0x80);
      n >>>= 7;
    }
    out.write(n);
    out.write(utf8, 0, utf8.length);
  }
}
