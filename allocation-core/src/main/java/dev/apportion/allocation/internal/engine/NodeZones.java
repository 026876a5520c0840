package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Where the engine resolves a target's zone when its labels name none: the node-to-zone topology
 * the caller supplied ({@code Allocator.setNodeZones}), then the zone of the collectors on the
 * node now (the smallest name that carries one), then the zone a collector seen earlier on that
 * node carried (nodes do not change zone; this keeps a node whose collector just left in its zone).
 * docs/api.md, "Zone resolution order", states the same order.
 *
 * <p>Writer-thread only (the engine's lock). Lookups are hash-map gets keyed by strings whose hash
 * the JVM caches; nothing here decides an order, so the maps' iteration order never matters.
 */
public final class NodeZones {
  private Map<String, String> supplied = Map.of();
  private Map<String, String> current = Map.of();
  private final Map<String, String> remembered = new HashMap<>();
  /** Bumped whenever the zone some node resolves to may have changed. */
  private long version;
  /** Whether some partition key reads zones; when none does, learning is skipped. */
  private boolean used;
  /**
   * Whether some node has a zone (supplied or learned; {@link #remembered} holds every zone
   * learned): when none has, a target without a zone label has none, found without three
   * lookups of its node.
   */
  private boolean anyNodeZone;

  /**
   * Marks these zones as read by a partition key. Called when the key is made, before the
   * engine's first collector change, so that every collector's zone is learned (and remembered).
   */
  public void use() {
    used = true;
  }

  /**
   * Replaces the supplied topology.
   *
   * @param zoneByNode node to zone, already copied and validated; blank zones are dropped
   * @return whether it differs from the one before
   */
  public boolean supply(Map<String, String> zoneByNode) {
    Map<String, String> next = new HashMap<>();
    for (Map.Entry<String, String> e : zoneByNode.entrySet()) {
      if (!e.getValue().isBlank() && !e.getKey().isBlank()) {
        next.put(e.getKey(), e.getValue());
      }
    }
    if (next.equals(supplied)) {
      return false;
    }
    supplied = next;
    anyNodeZone = !supplied.isEmpty() || !remembered.isEmpty();
    version++;
    return true;
  }

  /**
   * Learns the zones of the current members' nodes.
   *
   * @param members the current members, name order
   */
  void learn(Members members) {
    learn(members, false);
  }

  /**
   * Learns the zones of the current members' nodes, knowing whether they are the last call's
   * members less some (then, when none of those had a zone, nothing changes and nothing is read).
   *
   * @param members the current members, name order
   * @param onlyRemovals whether {@code members} are the last call's, some removed, none changed
   */
  void learn(Members members, boolean onlyRemovals) {
    if (!used || (onlyRemovals && current.isEmpty())) {
      // Nothing reads zones (a strategy without zone partitions), or no member had a zone on
      // its node and those that stay have not changed: the map of nodes is the same, empty.
      return;
    }
    Map<String, String> next = new HashMap<>();
    for (Member m : members.array()) {
      String zone = m.zone();
      String node = zone == null ? null : m.node();
      if (node != null) {
        next.putIfAbsent(node, zone);
      }
    }
    // The nodes whose entry changes, and what they resolved to before: the version moves only
    // when one of them resolves to another zone (a collector leaving a node it shares, or whose
    // zone is remembered, changes nothing).
    List<String> touched = new ArrayList<>();
    for (Map.Entry<String, String> e : next.entrySet()) {
      if (!e.getValue().equals(current.get(e.getKey()))) {
        touched.add(e.getKey());
      }
    }
    for (String node : current.keySet()) {
      if (!next.containsKey(node)) {
        touched.add(node);
      }
    }
    String[] before = new String[touched.size()];
    for (int i = 0; i < before.length; i++) {
      before[i] = zoneOfNode(touched.get(i));
    }
    remembered.putAll(next);
    current = next;
    anyNodeZone = !supplied.isEmpty() || !remembered.isEmpty();
    for (int i = 0; i < before.length; i++) {
      if (!Objects.equals(before[i], zoneOfNode(touched.get(i)))) {
        version++;
        break;
      }
    }
  }

  /**
   * A number that changes whenever some node may resolve to another zone than before
   * ({@link #supply} of another topology, {@link #learn} of collectors that change a node's
   * zone); equal numbers mean every target resolves as it did.
   *
   * @return the version
   */
  public long version() {
    return version;
  }

  /**
   * The zone of a node, or null.
   *
   * @param node a node, or null
   * @return its zone
   */
  public String zoneOfNode(String node) {
    if (node == null || !anyNodeZone) {
      return null;
    }
    String z = supplied.get(node);
    if (z == null) {
      z = current.get(node);
    }
    return z != null ? z : remembered.get(node);
  }

  /**
   * A target's zone: its labels', else its node's.
   *
   * @param t the target
   * @return the zone, or null
   */
  public String zoneOf(Target t) {
    String z = t.zone().orElse(null);
    return z != null || !anyNodeZone ? z : zoneOfNode(t.node().orElse(null));
  }
}
