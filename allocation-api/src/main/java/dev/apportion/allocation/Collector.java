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
 * @since 0.1.0
 */
public final class Collector implements Comparable<Collector> {
  private final String name;
  private final String node;

  private Collector(String name, String node) {
    this.name = name;
    this.node = node;
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

  /** Orders by name, then by node (no node first). */
  @Override
  public int compareTo(Collector other) {
    int c = name.compareTo(other.name);
    if (c != 0) {
      return c;
    }
    if (Objects.equals(node, other.node)) {
      return 0;
    }
    if (node == null) {
      return -1;
    }
    return other.node == null ? 1 : node.compareTo(other.node);
  }

  /** Equal when name and node are equal. */
  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Collector other)) {
      return false;
    }
    return name.equals(other.name) && Objects.equals(node, other.node);
  }

  @Override
  public int hashCode() {
    return 31 * name.hashCode() + Objects.hashCode(node);
  }

  @Override
  public String toString() {
    return node == null ? name : name + "@" + node;
  }
}
