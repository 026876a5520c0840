package dev.apportion.bench.sim;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A cluster to simulate: its nodes and their zones, its collectors and its targets. Immutable.
 *
 * <p>A node's zone may be unknown (a real target list names nodes but not always their zones):
 * cross-zone figures then count only the scrapes whose two zones are known.
 */
public final class Cluster {
  private final SortedMap<String, String> zones;
  private final List<Collector> collectors;
  private final List<Target> targets;

  /**
   * A cluster.
   *
   * @param zones node to zone, for the nodes whose zone is known; copied
   * @param collectors the collectors; copied
   * @param targets the targets; copied
   */
  public Cluster(Map<String, String> zones, List<Collector> collectors, List<Target> targets) {
    this.zones = Collections.unmodifiableSortedMap(new TreeMap<>(zones));
    this.collectors = List.copyOf(collectors);
    this.targets = List.copyOf(targets);
  }

  /**
   * Node to zone, for the nodes whose zone is known.
   *
   * @return an unmodifiable map, sorted by node
   */
  public SortedMap<String, String> zones() {
    return zones;
  }

  /**
   * The zone of {@code node}.
   *
   * @param node a node, or null
   * @return its zone, or empty when unknown
   */
  public Optional<String> zoneOf(String node) {
    return node == null ? Optional.empty() : Optional.ofNullable(zones.get(node));
  }

  /**
   * The collectors.
   *
   * @return an unmodifiable list
   */
  public List<Collector> collectors() {
    return collectors;
  }

  /**
   * The targets.
   *
   * @return an unmodifiable list
   */
  public List<Target> targets() {
    return targets;
  }

  /**
   * How many targets name no node.
   *
   * @return the count
   */
  public int nodelessTargets() {
    int n = 0;
    for (Target t : targets) {
      if (t.node().isEmpty()) {
        n++;
      }
    }
    return n;
  }

  @Override
  public String toString() {
    return collectors.size() + " collectors, " + targets.size() + " targets ("
        + nodelessTargets() + " with no node)";
  }
}
