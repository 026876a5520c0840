package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRings;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The collectors as the replica placement sees them: each with an id, its node, its zone (its
 * own, else its node's from the node topology), its capacity and its name's hash. Immutable to
 * its readers.
 *
 * <p><b>Ids are stable.</b> A name keeps its id from one topology to the {@link #next} one, even
 * through an absence, so that the owners recorded for one set of collectors can be read against
 * the next without renumbering every target, and a collector that stays is taken over from the
 * topology before without looking at its node and zone again. Ids therefore have gaps: {@link
 * #limit} bounds them and {@link #live} lists those present. When departed names would leave more
 * than half the ids unused, the next topology numbers the collectors afresh, in name order, and
 * takes a new {@link #generation}: ids of different generations are not comparable. Nodes and
 * zones are numbered the same way within a generation (-1 is "none", which never equals
 * anything).
 */
final class Topology {
  static final Topology EMPTY = new Topology();

  private final int generation;
  /** Name to id for every name given an id in this generation; never modified once shared. */
  private final Map<String, Integer> registry;
  /** Node and zone names to their numbers in this generation; only the writer reads them. */
  private final Map<String, Integer> nodeIds;
  private final Map<String, Integer> zoneIds;
  private final Map<String, String> zoneByNode;
  private final int[] live;
  private final Collector[] collectors;
  private final int[] node;
  private final int[] zone;
  private final double[] capacity;
  private final long[] hash;
  private final double totalCapacity;
  private final int spreadClasses;
  /** By node number: the zone of the first collector in name order on it; built when needed. */
  private int[] zoneOfNode;
  /** Whether {@link #zonesSettled} holds for replicas {@link #settledFor}; computed when needed. */
  private boolean settled;
  private int settledFor = -1;
  /** By zone number: whether a collector is in it; built when needed. */
  private boolean[] zonesWithCollectors;

  private Topology() {
    this.generation = 0;
    this.registry = Map.of();
    this.nodeIds = new HashMap<>();
    this.zoneIds = new HashMap<>();
    this.zoneByNode = Map.of();
    this.live = new int[0];
    this.collectors = new Collector[0];
    this.node = new int[0];
    this.zone = new int[0];
    this.capacity = new double[0];
    this.hash = new long[0];
    this.totalCapacity = 0;
    this.spreadClasses = 0;
  }

  private Topology(Topology before, Collection<Collector> given, Map<String, String> zoneByNode,
      Map<String, Integer> registry, boolean fresh) {
    this.generation = fresh ? before.generation + 1 : before.generation;
    this.registry = registry;
    this.nodeIds = fresh ? new HashMap<>() : before.nodeIds;
    this.zoneIds = fresh ? new HashMap<>() : before.zoneIds;
    this.zoneByNode = zoneByNode;
    int limit = registry.size();
    this.live = new int[given.size()];
    this.collectors = new Collector[limit];
    this.node = new int[limit];
    this.zone = new int[limit];
    this.capacity = new double[limit];
    this.hash = new long[limit];
    boolean reuse = !fresh && zoneByNode == before.zoneByNode;
    double total = 0;
    int j = 0;
    for (Collector x : given) {
      int c = registry.get(x.name());
      live[j++] = c;
      collectors[c] = x;
      capacity[c] = x.capacity();
      total += x.capacity();
      Collector was = reuse && c < before.collectors.length ? before.collectors[c] : null;
      if (was != null && sameNodeAndZone(was, x)) {
        node[c] = before.node[c];
        zone[c] = before.zone[c];
        hash[c] = before.hash[c];
      } else {
        String nodeName = x.node().orElse(null);
        String zoneName = x.zone().orElse(nodeName == null ? null
            : blankToNull(zoneByNode.get(nodeName)));
        node[c] = nodeName == null ? -1 : number(nodeIds, nodeName);
        zone[c] = zoneName == null ? -1 : number(zoneIds, zoneName);
        hash[c] = HashRings.memberHash(x.name());
      }
    }
    this.totalCapacity = total;
    this.spreadClasses = countSpreadClasses();
  }

  /** Whether two collectors name the same node and zone (the same object does, at once). */
  @SuppressWarnings("ReferenceEquality")
  private static boolean sameNodeAndZone(Collector a, Collector b) {
    return a == b || (a.node().equals(b.node()) && a.zone().equals(b.zone()));
  }

  private static int number(Map<String, Integer> ids, String name) {
    return ids.computeIfAbsent(name, n -> ids.size());
  }

  /**
   * The topology of {@code given} after this one: names known here keep their ids, new names
   * take the next ones; numbered afresh (a new generation, in name order) when departed names
   * would leave more than half the ids unused.
   *
   * @param given the collectors, unique names, in any order (placement never depends on it)
   * @param zoneByNode the node topology last given (node name to zone)
   */
  Topology next(Collection<Collector> given, Map<String, String> zoneByNode) {
    List<String> fresh = new ArrayList<>();
    for (Collector c : given) {
      if (!registry.containsKey(c.name())) {
        fresh.add(c.name());
      }
    }
    if (this == EMPTY || registry.size() + fresh.size() > 2 * given.size() + 64) {
      List<String> names = new ArrayList<>(given.size());
      for (Collector c : given) {
        names.add(c.name());
      }
      names.sort(Comparator.naturalOrder());
      Map<String, Integer> ids = new HashMap<>(names.size() * 2);
      for (String name : names) {
        ids.put(name, ids.size());
      }
      return new Topology(this, given, zoneByNode, Collections.unmodifiableMap(ids), true);
    }
    Map<String, Integer> ids = registry;
    if (!fresh.isEmpty()) {
      // A copy: earlier topologies, which readers may hold, keep theirs unchanged.
      Map<String, Integer> grown = new HashMap<>(registry);
      fresh.sort(Comparator.naturalOrder());
      for (String name : fresh) {
        grown.put(name, grown.size());
      }
      ids = Collections.unmodifiableMap(grown);
    }
    return new Topology(this, given, zoneByNode, ids, false);
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s;
  }

  /** Ids of this topology are comparable with those of another of the same generation. */
  int generation() {
    return generation;
  }

  /** One above the largest id. */
  int limit() {
    return collectors.length;
  }

  /** The ids of the collectors present. Do not modify. */
  int[] live() {
    return live;
  }

  /** How many collectors are present. */
  int size() {
    return live.length;
  }

  /** Whether collector {@code c} is present. */
  boolean present(int c) {
    return c >= 0 && c < collectors.length && collectors[c] != null;
  }

  /** The name of collector {@code c}, or null when it is not present. */
  String name(int c) {
    Collector x = collectors[c];
    return x == null ? null : x.name();
  }

  /** The collector's id, or -1 for a name not in this topology (or null). */
  int id(String name) {
    if (name == null) {
      return -1;
    }
    Integer c = registry.get(name);
    return c == null || collectors[c] == null ? -1 : c;
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

  /** Whether collector {@code c} is present in both with the same node, zone and capacity. */
  boolean sameCollector(int c, Topology other) {
    return present(c) && other.present(c) && other.generation == generation
        && node[c] == other.node[c] && zone[c] == other.zone[c]
        && capacity[c] == other.capacity[c];
  }

  /**
   * How many groups the collectors fall into when two sharing a node or a zone are grouped: two
   * collectors of different groups never share one. With at least k groups every target's k-th
   * replica has a collector on another node and in another zone than its earlier ones, whoever
   * they are.
   */
  int spreadClasses() {
    return spreadClasses;
  }

  private int countSpreadClasses() {
    int count = live.length;
    int[] parent = new int[count];
    for (int j = 0; j < count; j++) {
      parent[j] = j;
    }
    int[] firstOfNode = new int[nodeIds.size()];
    int[] firstOfZone = new int[zoneIds.size()];
    Arrays.fill(firstOfNode, -1);
    Arrays.fill(firstOfZone, -1);
    int classes = count;
    for (int j = 0; j < count; j++) {
      int c = live[j];
      if (node[c] >= 0) {
        classes -= union(parent, j, firstOfNode, node[c]);
      }
      if (zone[c] >= 0) {
        classes -= union(parent, j, firstOfZone, zone[c]);
      }
    }
    return classes;
  }

  /** Joins {@code j} to the first of its group {@code g}; 1 when that merged two classes. */
  private static int union(int[] parent, int j, int[] first, int g) {
    if (first[g] < 0) {
      first[g] = j;
      return 0;
    }
    int a = root(parent, j);
    int b = root(parent, first[g]);
    if (a == b) {
      return 0;
    }
    parent[a] = b;
    return 1;
  }

  private static int root(int[] parent, int j) {
    while (parent[j] != j) {
      parent[j] = parent[parent[j]];
      j = parent[j];
    }
    return j;
  }

  /**
   * Whether per-node's further replicas see the same zones and best tiers in {@code next} as in
   * this topology, whoever their earlier owners: each target's zone is the same (every collector's
   * node is in the node topology, so no target's zone comes from a collector, and the same zones
   * have collectors), and every zone with collectors spans at least {@code k} nodes, as do all the
   * collectors (a collector without a node counts as a node of its own).
   */
  boolean sameTargetZones(Topology next, int k) {
    if (next.generation != generation || !zonesSettled(k) || !next.zonesSettled(k)) {
      return false;
    }
    int zones = Math.max(zoneIds.size(), next.zoneIds.size());
    for (int z = 0; z < zones; z++) {
      if (zoneHasCollector(z) != next.zoneHasCollector(z)) {
        return false;
      }
    }
    return true;
  }

  private boolean zonesSettled(int k) {
    if (settledFor != k) {
      settled = countZonesSettled(k);
      settledFor = k;
    }
    return settled;
  }

  private boolean countZonesSettled(int k) {
    Map<Integer, Set<Integer>> nodesByZone = new HashMap<>();
    Set<Integer> allNodes = new HashSet<>();
    for (int c : live) {
      String nodeName = collectors[c].node().orElse(null);
      if (nodeName != null && blankToNull(zoneByNode.get(nodeName)) == null) {
        return false;
      }
      // A collector without a node is a node of its own: numbered below -1.
      int n = node[c] >= 0 ? node[c] : -2 - c;
      allNodes.add(n);
      if (zone[c] >= 0) {
        nodesByZone.computeIfAbsent(zone[c], z -> new HashSet<>()).add(n);
      }
    }
    if (allNodes.size() < k) {
      return false;
    }
    for (Set<Integer> nodes : nodesByZone.values()) {
      if (nodes.size() < k) {
        return false;
      }
    }
    return true;
  }

  /**
   * The zone of {@code target} as per-node prefers it for its further replicas: the target's own
   * zone label, else its node's zone in the node topology, else the zone of the first collector
   * (in name order) on its node; -1 when none is known or no collector is in that zone. Writer
   * only (it builds a table on first use).
   */
  int zoneOf(Target target) {
    String z = target.zone().orElse(null);
    String nodeName = target.node().orElse(null);
    if (z == null && nodeName != null) {
      z = blankToNull(zoneByNode.get(nodeName));
      if (z == null) {
        Integer n = nodeIds.get(nodeName);
        return n == null || n >= zoneOfNode().length ? -1 : zoneOfNode()[n];
      }
    }
    Integer id = z == null ? null : zoneIds.get(z);
    return id == null || !zoneHasCollector(id) ? -1 : id;
  }

  private int[] zoneOfNode() {
    if (zoneOfNode == null) {
      int[] zones = new int[nodeIds.size()];
      String[] firstName = new String[zones.length];
      Arrays.fill(zones, -1);
      for (int c : live) {
        int n = node[c];
        if (n >= 0 && zone[c] >= 0
            && (firstName[n] == null || name(c).compareTo(firstName[n]) < 0)) {
          firstName[n] = name(c);
          zones[n] = zone[c];
        }
      }
      zoneOfNode = zones;
    }
    return zoneOfNode;
  }

  private boolean zoneHasCollector(int z) {
    if (zonesWithCollectors == null) {
      boolean[] with = new boolean[zoneIds.size()];
      for (int c : live) {
        if (zone[c] >= 0) {
          with[zone[c]] = true;
        }
      }
      zonesWithCollectors = with;
    }
    return z < zonesWithCollectors.length && zonesWithCollectors[z];
  }
}
