package dev.apportion.allocation;

import java.util.Collections;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One collector replica: a process that scrapes the targets an {@link Allocator} gives it.
 * Immutable and thread-safe.
 *
 * <h2>Identity</h2>
 * <ul>
 *   <li>An allocator knows a collector by its <b>name</b> (for a Kubernetes pod, the pod name).
 *       Names are unique within one {@link Allocator#setCollectors} call; placement hashes
 *       depend on the name alone, never on the node.
 *   <li>{@link #equals} and {@link #hashCode} cover the name <em>and</em> the node: they are plain
 *       value semantics, so that a set of collectors in which one collector moved to another node
 *       is a different set.
 *   <li>A collector whose name is already known but whose node differs is the same replica on a
 *       new node. Kubernetes never does this to a pod ({@code spec.nodeName} is immutable), but
 *       an embedding program may (a reused name, a hand-written list), so allocators do not rely
 *       on it: the {@code per-node} strategy re-places the node-local targets of both the old and
 *       the new node; strategies that ignore nodes keep every target where it was and only record
 *       the new node.
 * </ul>
 *
 * <p>A null or empty node means "no node": {@link #node()} is then empty.
 *
 * <h2>Zone and partition labels</h2>
 * A collector may carry a zone ({@link #of(String, String, String)}; for Kubernetes, its node's
 * {@code topology.kubernetes.io/zone}) and labels ({@link #withLabels(Map)}). Allocators use them
 * only when partitioning is on: {@code per-node}'s fallback stays in the target's zone by default,
 * and the other strategies partition when asked to ({@link Allocators.Builder#partitionBy}). The
 * zone and the labels are part of {@link #equals}; placement hashes still depend on the name alone.
 *
 * <h2>Capacity</h2>
 * {@link #capacity()} is a positive weight, {@value #DEFAULT_CAPACITY} unless set with
 * {@link #withCapacity} (a 4-CPU replica beside 1-CPU ones: 4). Strategies give a collector a
 * share of the targets' cost proportional to its capacity. It is not identity (placement hashes
 * the name alone), but it is part of {@link #equals}: a set in which one collector's capacity
 * changed is a different set, and an allocator given it re-balances.
 *
 * @since 0.1.0
 */
public final class Collector implements Comparable<Collector> {
  /** The capacity of a collector none was given to. */
  public static final double DEFAULT_CAPACITY = 1.0;

  private final String name;
  private final String node;
  private final String zone;
  /** Unmodifiable, natural order; empty for most collectors. */
  private final SortedMap<String, String> labels;
  private final double capacity;

  private Collector(String name, String node, String zone, SortedMap<String, String> labels) {
    this(name, node, zone, labels, DEFAULT_CAPACITY);
  }

  private Collector(String name, String node, String zone, SortedMap<String, String> labels,
      double capacity) {
    this.capacity = capacity;
    this.name = name;
    this.node = node;
    this.zone = zone;
    this.labels = labels;
  }

  /**
   * A collector with no node.
   *
   * @param name the collector's unique name; not null, not blank
   * @return the collector
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is blank
   */
  public static Collector of(String name) {
    return of(name, null);
  }

  /**
   * A collector running on {@code node}.
   *
   * @param name the collector's unique name; not null, not blank
   * @param node the node it runs on; null, empty or blank (whitespace only) for "no node": a
   *     blank node is normalized to none, never kept as a node
   * @return the collector
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is blank
   */
  public static Collector of(String name, String node) {
    return of(name, node, null);
  }

  /**
   * A collector running on {@code node} in {@code zone}. Does not block; allocates the value.
   *
   * @param name the collector's unique name; not null, not blank
   * @param node the node it runs on; null, empty or blank for "no node"
   * @param zone the zone it runs in (for Kubernetes, the node's {@code
   *     topology.kubernetes.io/zone} label); null, empty or blank for "no zone"
   * @return the collector
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is blank
   */
  public static Collector of(String name, String node, String zone) {
    Objects.requireNonNull(name, "collector name must not be null");
    if (name.isBlank()) {
      throw new IllegalArgumentException("collector name must not be blank: '" + name + "'");
    }
    return new Collector(name, blankToNull(node), blankToNull(zone), Collections.emptySortedMap());
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s;
  }

  /**
   * This collector with {@code labels} instead of its labels: what a strategy partitioned by a
   * label ({@link Allocators.Builder#partitionBy}) reads. Copies the map; allocates.
   *
   * @param labels label names and values; not null, no null name or value, no empty name
   * @return a new collector with the same name, node and zone
   * @throws NullPointerException if {@code labels}, a name or a value is null
   * @throws IllegalArgumentException if a label name is empty
   */
  public Collector withLabels(Map<String, String> labels) {
    Objects.requireNonNull(labels, "labels must not be null");
    TreeMap<String, String> copy = new TreeMap<>();
    for (Map.Entry<String, String> e : labels.entrySet()) {
      String k = Objects.requireNonNull(e.getKey(), "label name must not be null");
      String v = Objects.requireNonNull(e.getValue(), "value of label '" + k + "' must not be null");
      if (k.isEmpty()) {
        throw new IllegalArgumentException("label name must not be empty");
      }
      copy.put(k, v);
    }
    return new Collector(name, node, zone, Collections.unmodifiableSortedMap(copy), capacity);
  }

  /**
   * The collector's name, its identity inside an allocator.
   *
   * @return the name; never null or blank
   */
  public String name() {
    return name;
  }

  /**
   * The node this collector runs on.
   *
   * @return the node, or empty when the collector has none
   */
  public Optional<String> node() {
    return Optional.ofNullable(node);
  }

  /**
   * The zone this collector runs in.
   *
   * @return the zone, or empty when the collector has none
   */
  public Optional<String> zone() {
    return Optional.ofNullable(zone);
  }

  /**
   * The collector's labels (see {@link #withLabels}). Does not allocate.
   *
   * @return an unmodifiable map in name order; empty unless labels were given
   */
  public SortedMap<String, String> labels() {
    return labels;
  }

  /**
   * This collector with another {@linkplain #capacity() capacity}; its zone and labels kept.
   * Allocates one small object.
   *
   * @param capacity a finite number &gt; 0, in any unit shared by the collectors of one
   *     allocator (CPUs, memory, a plain ratio)
   * @return the collector with that capacity; {@code this} when it already has it
   * @throws IllegalArgumentException if {@code capacity} is not a finite number &gt; 0
   * @since 0.1.0
   */
  public Collector withCapacity(double capacity) {
    if (!(capacity > 0.0) || Double.isInfinite(capacity)) {
      throw new IllegalArgumentException("collector capacity must be a finite number > 0: "
          + capacity + " for " + name);
    }
    return capacity == this.capacity ? this : new Collector(name, node, zone, labels, capacity);
  }

  /**
   * The collector's capacity: its weight in cost- and capacity-aware placement.
   *
   * @return a finite number &gt; 0; {@value #DEFAULT_CAPACITY} unless set
   * @since 0.1.0
   */
  public double capacity() {
    return capacity;
  }

  /** Orders by name, then by node, then by zone (none first), then by labels, then capacity. */
  @Override
  public int compareTo(Collector other) {
    int c = name.compareTo(other.name);
    if (c == 0) {
      c = compareNullsFirst(node, other.node);
    }
    if (c == 0) {
      c = compareNullsFirst(zone, other.zone);
    }
    if (c == 0) {
      c = compareLabels(labels, other.labels);
    }
    if (c == 0) {
      c = Double.compare(capacity, other.capacity);
    }
    return c;
  }

  private static int compareNullsFirst(String a, String b) {
    if (Objects.equals(a, b)) {
      return 0;
    }
    if (a == null) {
      return -1;
    }
    return b == null ? 1 : a.compareTo(b);
  }

  private static int compareLabels(SortedMap<String, String> a, SortedMap<String, String> b) {
    Iterator<Map.Entry<String, String>> i = a.entrySet().iterator();
    Iterator<Map.Entry<String, String>> j = b.entrySet().iterator();
    while (i.hasNext() && j.hasNext()) {
      Map.Entry<String, String> x = i.next();
      Map.Entry<String, String> y = j.next();
      int c = x.getKey().compareTo(y.getKey());
      if (c == 0) {
        c = x.getValue().compareTo(y.getValue());
      }
      if (c != 0) {
        return c;
      }
    }
    return Boolean.compare(i.hasNext(), j.hasNext());
  }

  /** Equal when name, node, zone, labels and capacity are equal. */
  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Collector other)) {
      return false;
    }
    return name.equals(other.name) && Objects.equals(node, other.node)
        && Objects.equals(zone, other.zone) && labels.equals(other.labels)
        && Double.compare(capacity, other.capacity) == 0;
  }

  @Override
  public int hashCode() {
    int h = Objects.hash(name, node, zone, labels);
    return capacity == DEFAULT_CAPACITY ? h : 31 * h + Double.hashCode(capacity);
  }

  @Override
  public String toString() {
    String s = node == null ? name : name + "@" + node;
    if (zone != null) {
      s += "/" + zone;
    }
    s = labels.isEmpty() ? s : s + labels;
    return capacity == DEFAULT_CAPACITY ? s : s + "x" + capacity;
  }
}
