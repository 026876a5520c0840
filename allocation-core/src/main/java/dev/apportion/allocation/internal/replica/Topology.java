package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRings;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The collectors as the replica placement sees them: dense ids in name order, each with its node,
 * its zone (its own, else its node's from the node topology), its capacity and its name's hash.
 * Nodes and zones are numbered too; -1 is "none", which never equals anything. Immutable.
 */
final class Topology {
  static final Topology EMPTY = new Topology(List.of(), Map.of());

  private final String[] names;
  private final Map<String, Integer> ids;
  private final int[] node;
  private final int[] zone;
  private final double[] capacity;
  private final long[] hash;
  private final double totalCapacity;
  private final Map<String, Integer> nodeIds = new HashMap<>();
  private final Map<String, Integer> zoneIds = new HashMap<>();
  /** The zone of each node with a collector, by node id. */
  private final Map<Integer, Integer> zoneOfNode = new HashMap<>();
  private final Map<String, String> zoneByNode;

  /**
   * @param sortedByName the collectors, in name order, unique names
   * @param zoneByNode the node topology last given (node name to zone)
   */
  Topology(List<Collector> sortedByName, Map<String, String> zoneByNode) {
    int n = sortedByName.size();
    this.names = new String[n];
    this.ids = new HashMap<>(n * 2);
    this.node = new int[n];
    this.zone = new int[n];
    this.capacity = new double[n];
    this.hash = new long[n];
    this.zoneByNode = Map.copyOf(zoneByNode);
    double total = 0;
    for (int c = 0; c < n; c++) {
      Collector x = sortedByName.get(c);
      names[c] = x.name();
      ids.put(x.name(), c);
      String nodeName = x.node().orElse(null);
      String zoneName = x.zone().orElse(nodeName == null ? null : blankToNull(zoneByNode.get(nodeName)));
      node[c] = nodeName == null ? -1 : nodeIds.computeIfAbsent(nodeName, k -> nodeIds.size());
      zone[c] = zoneName == null ? -1 : zoneIds.computeIfAbsent(zoneName, k -> zoneIds.size());
      if (node[c] >= 0 && zone[c] >= 0) {
        zoneOfNode.putIfAbsent(node[c], zone[c]);
      }
      capacity[c] = x.capacity();
      hash[c] = HashRings.memberHash(x.name());
      total += x.capacity();
    }
    this.totalCapacity = total;
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s;
  }

  int size() {
    return names.length;
  }

  String name(int c) {
    return names[c];
  }

  /** The collector's id, or -1 for a name not in this topology (or null). */
  int id(String name) {
    if (name == null) {
      return -1;
    }
    Integer c = ids.get(name);
    return c == null ? -1 : c;
  }

  int node(int c) {
    return node[c];
  }

  int zone(int c) {
    return zone[c];
  }



  double capacity(int c) {
    return capacity[c];
  }

  double totalCapacity() {
    return totalCapacity;
  }

  long hash(int c) {
    return hash[c];
  }

  /**
   * The zone of {@code target} as per-node prefers it for its further replicas: the target's own
   * zone label, else its node's zone in the node topology, else the zone of the collectors on its
   * node; -1 when none is known or no collector is in that zone.
   */
  int zoneOf(Target target) {
    String z = target.zone().orElse(null);
    String nodeName = target.node().orElse(null);
    if (z == null && nodeName != null) {
      z = blankToNull(zoneByNode.get(nodeName));
      if (z == null) {
        Integer n = nodeIds.get(nodeName);
        Integer fromCollectors = n == null ? null : zoneOfNode.get(n);
        return fromCollectors == null ? -1 : fromCollectors;
      }
    }
    Integer id = z == null ? null : zoneIds.get(z);
    return id == null ? -1 : id;
  }
}
