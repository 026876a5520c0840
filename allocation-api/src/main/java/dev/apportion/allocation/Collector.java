package dev.apportion.allocation;

import java.util.Objects;
import java.util.Optional;

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
  private final double capacity;

  private Collector(String name, String node) {
    this(name, node, DEFAULT_CAPACITY);
  }

  private Collector(String name, String node, double capacity) {
    this.name = name;
    this.node = node;
    this.capacity = capacity;
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
    Objects.requireNonNull(name, "collector name must not be null");
    if (name.isBlank()) {
      throw new IllegalArgumentException("collector name must not be blank: '" + name + "'");
    }
    return new Collector(name, node == null || node.isBlank() ? null : node);
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
   * This collector with another {@linkplain #capacity() capacity}. Allocates one small object.
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
    return capacity == this.capacity ? this : new Collector(name, node, capacity);
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

  /** Orders by name, then by node (no node first), then by capacity. */
  @Override
  public int compareTo(Collector other) {
    int c = name.compareTo(other.name);
    if (c != 0) {
      return c;
    }
    if (Objects.equals(node, other.node)) {
      return Double.compare(capacity, other.capacity);
    }
    if (node == null) {
      return -1;
    }
    return other.node == null ? 1 : node.compareTo(other.node);
  }

  /** Equal when name, node and capacity are equal. */
  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Collector other)) {
      return false;
    }
    return name.equals(other.name) && Objects.equals(node, other.node)
        && Double.compare(capacity, other.capacity) == 0;
  }

  @Override
  public int hashCode() {
    int h = 31 * name.hashCode() + Objects.hashCode(node);
    return capacity == DEFAULT_CAPACITY ? h : 31 * h + Double.hashCode(capacity);
  }

  @Override
  public String toString() {
    String s = node == null ? name : name + "@" + node;
    return capacity == DEFAULT_CAPACITY ? s : s + "x" + capacity;
  }
}
