package dev.apportion.bench.sim;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.Collections;
import java.util.LinkedHashMap;
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
  private final int duplicates;

  /**
   * A cluster. Targets equal by identity (same job and identity labels, see {@link Target}) are
   * collapsed into one, as an allocator does: the first one's place in the list, the last one's
   * labels. {@link #duplicates()} says how many were collapsed.
   *
   * @param zones node to zone, for the nodes whose zone is known; copied
   * @param collectors the collectors; copied
   * @param targets the targets, duplicates allowed; copied
   */
  public Cluster(Map<String, String> zones, List<Collector> collectors, List<Target> targets) {
    this.zones = Collections.unmodifiableSortedMap(new TreeMap<>(zones));
    this.collectors = List.copyOf(collectors);
    LinkedHashMap<Target, Target> distinct = new LinkedHashMap<>(targets.size() * 4 / 3 + 1);
    for (Target t : targets) {
      distinct.put(t, t);
    }
    this.duplicates = targets.size() - distinct.size();
    this.targets = duplicates == 0 ? List.copyOf(targets) : List.copyOf(distinct.values());
  }

  private Cluster(SortedMap<String, String> zones, List<Collector> collectors,
      List<Target> targets, int duplicates) {
    this.zones = zones;
    this.collectors = List.copyOf(collectors);
    this.targets = List.copyOf(targets);
    this.duplicates = duplicates;
  }

  /**
   * This cluster with the same targets and collectors carrying other costs or capacities: the
   * zones and the count of collapsed duplicates stay.
   *
   * @param newCollectors the collectors, one for each of this cluster's, in any order
   * @param newTargets this cluster's targets (after collapsing), with costs attached
   * @return the cluster
   */
  public Cluster with(List<Collector> newCollectors, List<Target> newTargets) {
    return new Cluster(zones, newCollectors, newTargets, duplicates);
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
   * The targets, distinct by identity.
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

  /**
   * How many targets given to the constructor were duplicates of an earlier one (same job and
   * identity labels) and were collapsed into it.
   *
   * @return the count; 0 when every target was distinct
   */
  public int duplicates() {
    return duplicates;
  }

  @Override
  public String toString() {
    if (duplicates == 0) {
      return collectors.size() + " collectors, " + targets.size() + " targets ("
          + nodelessTargets() + " with no node)";
    }
    return collectors.size() + " collectors, " + (targets.size() + duplicates) + " targets ("
        + duplicates + (duplicates == 1 ? " duplicate" : " duplicates")
        + " collapsed: same job and identity labels; " + targets.size() + " simulated, "
        + nodelessTargets() + " with no node)";
  }
}
