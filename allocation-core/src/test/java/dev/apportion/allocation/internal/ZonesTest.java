package dev.apportion.allocation.internal;

import static dev.apportion.allocation.internal.Fixtures.assertComplete;
import static dev.apportion.allocation.internal.Fixtures.assignment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Zones and partitions: per-node's zone-aware fallback and the opt-in zone-aware strategies, on a
 * small cluster of 3 zones x 6 nodes. Every assertion is a count.
 */
public class ZonesTest {
  static final int ZONES = 3;
  static final int NODES_PER_ZONE = 6;
  static final String POD_NODE = "__meta_kubernetes_pod_node_name";

  static String zone(int z) {
    return "zone-" + (char) ('a' + z);
  }

  static String node(int z, int n) {
    return zone(z) + "-node-" + n;
  }

  static Map<String, String> topology() {
    Map<String, String> m = new TreeMap<>();
    for (int z = 0; z < ZONES; z++) {
      for (int n = 0; n < NODES_PER_ZONE; n++) {
        m.put(node(z, n), zone(z));
      }
    }
    return m;
  }

  /** {@code perNode} targets on every node (node label only), plus {@code nodeless} with none. */
  static List<Target> targets(int perNode, int nodeless) {
    List<Target> out = new ArrayList<>();
    for (int z = 0; z < ZONES; z++) {
      for (int n = 0; n < NODES_PER_ZONE; n++) {
        for (int i = 0; i < perNode; i++) {
          out.add(Target.of("pods", node(z, n) + "-" + i + ":8080", Map.of(POD_NODE, node(z, n))));
        }
      }
    }
    for (int i = 0; i < nodeless; i++) {
      out.add(Target.of("external", "ext-" + i + ":443"));
    }
    return out;
  }

  /** One collector per node, except the nodes {@code skip} says. */
  static List<Collector> collectors(java.util.function.BiPredicate<Integer, Integer> skip) {
    List<Collector> out = new ArrayList<>();
    for (int z = 0; z < ZONES; z++) {
      for (int n = 0; n < NODES_PER_ZONE; n++) {
        if (!skip.test(z, n)) {
          out.add(Collector.of("agent-" + node(z, n), node(z, n), zone(z)));
        }
      }
    }
    return out;
  }

  public static Map<String, String> zoneOfCollector(Allocation a) {
    Map<String, String> m = new HashMap<>();
    for (Collector c : a.collectors()) {
      m.put(c.name(), c.zone().orElse(null));
    }
    return m;
  }

  /** Targets with a known zone placed on a collector of another zone. */
  static int crossZone(Allocation a, Map<String, String> topology) {
    Map<String, String> zoneOf = zoneOfCollector(a);
    int cross = 0;
    for (Target t : a.targets()) {
      String tz = t.node().map(topology::get).orElse(null);
      String c = a.collectorOf(t).orElse(null);
      if (tz != null && c != null && !tz.equals(zoneOf.get(c))) {
        cross++;
      }
    }
    return cross;
  }

  /** Targets of zones that have no collector. */
  static int inZonesWithoutCollector(Allocation a, Map<String, String> topology) {
    java.util.Set<String> served = new java.util.HashSet<>(zoneOfCollector(a).values());
    int n = 0;
    for (Target t : a.targets()) {
      String tz = t.node().map(topology::get).orElse(null);
      if (tz != null && !served.contains(tz)) {
        n++;
      }
    }
    return n;
  }

  // ---- per-node ---------------------------------------------------------------------------

  @Test
  void perNodesFallbackStaysInTheZoneWheneverTheZoneHasACollector() {
    Allocator a = Allocators.builder(Allocators.PER_NODE).build();
    List<Target> ts = targets(10, 30);
    a.setTargets(ts);
    // Half of every zone's nodes have no collector (pods restarting, tainted nodes).
    a.setCollectors(collectors((z, n) -> n % 2 == 1));
    a.setNodeZones(topology());
    assertComplete(a, ts);
    assertEquals(0, crossZone(a.snapshot(), topology()));
    assertEquals(0, a.snapshot().outsidePartition());
    // The fallback is balanced within each zone: 3 collectors share each zone's 30 pool targets.
    for (Collector c : a.snapshot().collectors()) {
      int load = a.snapshot().targetCount(c.name());
      assertTrue(load >= 10 + 10 && load <= 10 + 10 + 11 + 10, c + " holds " + load);
    }
  }

  /**
   * Targets the per-collector limit moves out of their zone are counted in
   * {@code outsidePartition()}, node-local ones included, also when they sat in per-node's pool
   * (cluster-wide, their zone had no collector) before their node's collector came: the count
   * does not read the fallback's state of a target that left its view.
   */
  @Test
  void nodeLocalTargetsTheLimitMovesOutOfTheirZoneAreCounted() {
    Allocator a = Allocators.builder(Allocators.PER_NODE).maxTargetsPerCollector(10).build();
    List<Target> ts = targets(10, 0);
    a.setTargets(ts);
    a.setNodeZones(topology());
    // zone-c has no collector: its 60 targets are in the pool, cluster-wide, and counted.
    a.setCollectors(collectors((z, n) -> z == 2).stream()
        .map(c -> c.withCapacity(2)).toList());
    assertEquals(NODES_PER_ZONE * 10, a.snapshot().outsidePartition());
    assertEquals(NODES_PER_ZONE * 10, crossZone(a.snapshot(), topology()));
    // zone-c's collectors come, each with room for 5 of its node's 10 targets: the limit moves
    // the other 5 of each to the other zones' collectors, which have room for 10 more each.
    List<Collector> all = new ArrayList<>();
    for (Collector c : collectors((z, n) -> false)) {
      all.add(c.withCapacity(c.zone().orElseThrow().equals(zone(2)) ? 0.5 : 2));
    }
    a.setCollectors(all);
    assertComplete(a, ts);
    assertEquals(NODES_PER_ZONE * 5, crossZone(a.snapshot(), topology()));
    assertEquals(NODES_PER_ZONE * 5, a.snapshot().outsidePartition());
  }

  @Test
  void withoutZoneAwarenessTheSameFallbackCrossesZones() {
    Allocator a = Allocators.builder(Allocators.PER_NODE).noPartitioning().build();
    a.setTargets(targets(10, 30));
    a.setCollectors(collectors((z, n) -> n % 2 == 1));
    a.setNodeZones(topology());
    // The control: the test above would notice a fallback that ignores zones.
    assertTrue(crossZone(a.snapshot(), topology()) > 30, "" + crossZone(a.snapshot(), topology()));
    assertEquals(0, a.snapshot().outsidePartition(), "not partitioned: nothing counted");
  }

  @Test
  void onlyAZoneWithNoCollectorGoesClusterWideAndIsCounted() {
    Allocator a = Allocators.builder(Allocators.PER_NODE).build();
    List<Target> ts = targets(10, 30);
    a.setTargets(ts);
    a.setNodeZones(topology());
    a.setCollectors(collectors((z, n) -> z == 2 || n == 0));
    assertComplete(a, ts);
    Allocation s = a.snapshot();
    assertEquals(NODES_PER_ZONE * 10, inZonesWithoutCollector(s, topology()));
    assertEquals(NODES_PER_ZONE * 10, crossZone(s, topology()), "zone-c's targets, no more");
    assertEquals(NODES_PER_ZONE * 10, s.outsidePartition());
    // A collector returns to zone-c: its zone's targets come home, the count goes back to 0.
    a.setCollectors(collectors((z, n) -> n == 0 || (z == 2 && n != 3)));
    assertEquals(0, crossZone(a.snapshot(), topology()));
    assertEquals(0, a.snapshot().outsidePartition());
  }

  @Test
  void aNodeWhoseCollectorLeftKeepsTheZoneItsCollectorHad() {
    // No topology: the zones are learned from the collectors, and remembered.
    Allocator a = Allocators.builder(Allocators.PER_NODE).build();
    a.setTargets(targets(10, 0));
    a.setCollectors(collectors((z, n) -> false));
    a.setCollectors(collectors((z, n) -> n == 1));
    assertEquals(0, crossZone(a.snapshot(), topology()));
    assertEquals(0, a.snapshot().outsidePartition());
  }

  @Test
  void aCollectorThatGivesANodeItsZoneBringsThatNodesTargetsIntoTheZone() {
    // No topology: the targets of a node with no collector have no zone, until a collector on
    // that node says it. The collector change must re-read those targets' zones (the placer
    // keeps every target's zone between collector changes) and place them as a fresh allocator
    // given the same sets does.
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).zoneAware().build();
    List<Target> targets = targets(10, 5);
    a.setTargets(targets);
    a.setCollectors(collectors((z, n) -> n == 0));
    a.setCollectors(collectors((z, n) -> n == 0 && z != 0));
    assertEquals(0, crossZone(a.snapshot(), topology()) - inOtherZonesNode0(a.snapshot()));
    Allocator fresh = Allocators.builder(Allocators.CONSISTENT_HASHING).zoneAware().build();
    fresh.setCollectors(collectors((z, n) -> n == 0 && z != 0));
    fresh.setTargets(targets);
    for (Target t : targets) {
      assertEquals(fresh.snapshot().collectorOf(t), a.snapshot().collectorOf(t), t.toString());
    }
    // zone-a's node 0 has a collector now: its 10 targets are in zone-a.
    String agent = "agent-" + node(0, 0);
    int onIt = 0;
    for (Target t : targets) {
      String c = a.snapshot().collectorOf(t).orElseThrow();
      if (node(0, 0).equals(t.node().orElse(null))) {
        assertEquals(zone(0), zoneOfCollector(a.snapshot()).get(c), t.toString());
      }
      if (c.equals(agent)) {
        onIt++;
      }
    }
    assertTrue(onIt > 0, "the new collector holds targets");
  }

  /** Targets on the nodes 0 of zones b and c, which have no collector and so no zone. */
  private static int inOtherZonesNode0(Allocation a) {
    Map<String, String> zoneOf = zoneOfCollector(a);
    int n = 0;
    for (Target t : a.targets()) {
      String node = t.node().orElse(null);
      String c = a.collectorOf(t).orElse(null);
      if (c != null && (node(1, 0).equals(node) || node(2, 0).equals(node))
          && !topology().get(node).equals(zoneOf.get(c))) {
        n++;
      }
    }
    return n;
  }

  @Test
  void aTargetsZoneLabelWinsOverItsNodesZone() {
    Allocator a = Allocators.builder(Allocators.PER_NODE).build();
    Target t = Target.of("svc", "10.1.1.1:80", Map.of(POD_NODE, "gone-node",
        "__meta_kubernetes_endpointslice_endpoint_zone", zone(1)));
    a.setNodeZones(Map.of("gone-node", zone(0)));
    a.setTargets(List.of(t));
    a.setCollectors(collectors((z, n) -> false));
    String c = a.snapshot().collectorOf(t).orElseThrow();
    assertEquals(zone(1), zoneOfCollector(a.snapshot()).get(c));
  }

  @Test
  void aTopologyChangeMovesOnlyTheTargetsWhoseZoneChanged() {
    // A rendezvous fallback, whose movement is exactly the minimum (consistent-hashing's bounded
    // load may also shift a few targets within the zone the others left).
    Allocator a = Allocators.builder(Allocators.PER_NODE).fallback(Allocators.RENDEZVOUS).build();
    List<Target> ts = new ArrayList<>(targets(0, 0));
    for (int i = 0; i < 40; i++) {
      ts.add(Target.of("pods", "x-" + i + ":1", Map.of(POD_NODE, "unknown-" + (i % 2))));
    }
    a.setTargets(ts);
    a.setCollectors(collectors((z, n) -> false));
    Map<String, String> topo = new TreeMap<>(topology());
    topo.put("unknown-0", zone(2));
    topo.put("unknown-1", zone(2));
    a.setNodeZones(topo);
    Map<Target, String> before = assignment(a.snapshot());
    for (String c : before.values()) {
      assertEquals(zone(2), zoneOfCollector(a.snapshot()).get(c));
    }
    topo.put("unknown-1", zone(0));
    a.setNodeZones(topo);
    Map<Target, String> after = assignment(a.snapshot());
    int moved = Fixtures.moved(before, after);
    assertEquals(20, moved, "unknown-1's 20 targets, and only they");
    a.setNodeZones(topo);
    assertEquals(after, assignment(a.snapshot()), "an unchanged topology moves nothing");
  }

  // ---- the zone-aware strategies ------------------------------------------------------------

  static List<Target> zonedTargets(int perZone) {
    List<Target> out = new ArrayList<>();
    for (int z = 0; z < ZONES; z++) {
      for (int i = 0; i < perZone; i++) {
        out.add(Target.of("svc", zone(z) + "-" + i + ":9100",
            Map.of("__meta_kubernetes_endpointslice_endpoint_zone", zone(z))));
      }
    }
    return out;
  }

  static List<Collector> replicas(int[] perZone) {
    List<Collector> out = new ArrayList<>();
    for (int z = 0; z < ZONES; z++) {
      for (int i = 0; i < perZone[z]; i++) {
        out.add(Collector.of("otel-" + zone(z) + "-" + i, null, zone(z)));
      }
    }
    return out;
  }

  static int crossZoneByLabel(Allocation a) {
    Map<String, String> zoneOf = zoneOfCollector(a);
    int cross = 0;
    for (Target t : a.targets()) {
      String c = a.collectorOf(t).orElse(null);
      if (c != null && !t.zone().orElseThrow().equals(zoneOf.get(c))) {
        cross++;
      }
    }
    return cross;
  }

  /** The busiest collector of {@code z} over the cluster-wide mean. */
  static double zonePeakOverMean(Allocation a, int z) {
    int peak = 0;
    for (Collector c : a.collectors()) {
      if (c.zone().orElseThrow().equals(zone(z))) {
        peak = Math.max(peak, a.targetCount(c.name()));
      }
    }
    return peak / ((double) a.targets().size() / a.collectors().size());
  }

  @ParameterizedTest
  @ValueSource(strings = {Allocators.CONSISTENT_HASHING, Allocators.RENDEZVOUS,
      Allocators.LEAST_WEIGHTED})
  void offByDefaultTheStrategiesIgnoreZones(String strategy) {
    Allocator a = Allocators.builder(strategy).build();
    a.setTargets(zonedTargets(300));
    a.setCollectors(replicas(new int[] {4, 4, 4}));
    assertTrue(crossZoneByLabel(a.snapshot()) > 300, strategy);
    assertEquals(0, a.snapshot().outsidePartition());
    // And exactly today's placement: zones on the collectors change nothing.
    Allocator plain = Allocators.builder(strategy).build();
    plain.setTargets(zonedTargets(300));
    List<Collector> noZones = new ArrayList<>();
    for (Collector c : replicas(new int[] {4, 4, 4})) {
      noZones.add(Collector.of(c.name()));
    }
    plain.setCollectors(noZones);
    assertEquals(assignment(plain.snapshot()), assignment(a.snapshot()));
  }

  @ParameterizedTest
  @ValueSource(strings = {Allocators.CONSISTENT_HASHING, Allocators.RENDEZVOUS,
      Allocators.LEAST_WEIGHTED})
  void aZoneLosingHalfItsCollectorsStaysInItsZoneWithinTheSkewLimit(String strategy) {
    Allocator a = Allocators.builder(strategy).zoneAware().maxSkew(2).build();
    List<Target> ts = zonedTargets(1000);
    a.setTargets(ts);
    a.setCollectors(replicas(new int[] {10, 10, 10}));
    assertEquals(0, crossZoneByLabel(a.snapshot()));
    a.setCollectors(replicas(new int[] {5, 10, 10}));
    assertComplete(a, ts);
    assertEquals(0, crossZoneByLabel(a.snapshot()), strategy);
    assertEquals(0, a.snapshot().outsidePartition());
    double peak = zonePeakOverMean(a.snapshot(), 0);
    // zone-a's mean is 1000/5 = 200 against the cluster's 3000/25 = 120: 1.67.
    assertTrue(peak >= 1.66 && peak <= 2.0, strategy + " zone-a peak/mean " + peak);
  }

  @Test
  void pastTheSkewLimitAZoneSpillsOverToTheOthers() {
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).zoneAware().maxSkew(1.25)
        .build();
    List<Target> ts = zonedTargets(1000);
    a.setTargets(ts);
    a.setCollectors(replicas(new int[] {5, 10, 10}));
    assertComplete(a, ts);
    // zone-a may keep floor(1.25 * 3000 * 5 / 25) = 750; the other 250 spill to zones b and c.
    assertEquals(250, crossZoneByLabel(a.snapshot()));
    assertEquals(250, a.snapshot().outsidePartition());
    int zoneA = 0;
    for (Collector c : a.snapshot().collectors()) {
      if (c.zone().orElseThrow().equals(zone(0))) {
        zoneA += a.snapshot().targetCount(c.name());
      }
    }
    assertEquals(750, zoneA, "spilled targets go to collectors of the zones under the limit");
  }

  @ParameterizedTest
  @ValueSource(strings = {Allocators.CONSISTENT_HASHING, Allocators.RENDEZVOUS})
  void zoneAwarePlacementIsAFunctionOfTheSetsNotOfOrderOrHistory(String strategy) {
    List<Target> ts = zonedTargets(400);
    List<Collector> cs = replicas(new int[] {3, 4, 5});
    Allocator direct = Allocators.builder(strategy).zoneAware().maxSkew(1.5).build();
    direct.setTargets(ts);
    direct.setCollectors(cs);

    List<Target> shuffled = new ArrayList<>(ts);
    Collections.shuffle(shuffled, new Random(7));
    List<Collector> reversed = new ArrayList<>(cs);
    Collections.reverse(reversed);
    Allocator winding = Allocators.builder(strategy).zoneAware().maxSkew(1.5).build();
    winding.setCollectors(replicas(new int[] {1, 1, 0}));
    winding.setTargets(shuffled.subList(0, 500));
    winding.setCollectors(reversed);
    winding.setTargets(shuffled);
    assertEquals(assignment(direct.snapshot()), assignment(winding.snapshot()));
  }

  @Test
  void zoneAwareRendezvousMovesOnlyTheRemovedCollectorsTargets() {
    Allocator a = Allocators.builder(Allocators.RENDEZVOUS).zoneAware().build();
    a.setTargets(zonedTargets(500));
    List<Collector> cs = replicas(new int[] {5, 5, 5});
    a.setCollectors(cs);
    Map<Target, String> before = assignment(a.snapshot());
    String gone = cs.get(2).name();
    int held = a.snapshot().targetCount(gone);
    List<Collector> less = new ArrayList<>(cs);
    less.remove(2);
    a.setCollectors(less);
    Map<Target, String> after = assignment(a.snapshot());
    int moved = 0;
    for (Map.Entry<Target, String> e : before.entrySet()) {
      if (!e.getValue().equals(after.get(e.getKey()))) {
        moved++;
        assertEquals(gone, e.getValue());
      }
    }
    assertEquals(held, moved);
    assertEquals(0, crossZoneByLabel(a.snapshot()));
  }

  @Test
  void anyLabelCanBeThePartitionKey() {
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).partitionBy("pool").build();
    List<Target> ts = new ArrayList<>();
    for (int i = 0; i < 600; i++) {
      ts.add(Target.of("j", "t" + i + ":1", Map.of("pool", i % 3 == 0 ? "spot" : "on-demand")));
    }
    a.setTargets(ts);
    List<Collector> cs = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      cs.add(Collector.of("c" + i).withLabels(Map.of("pool", i < 2 ? "spot" : "on-demand")));
    }
    a.setCollectors(cs);
    assertComplete(a, ts);
    Map<String, String> poolOf = new HashMap<>();
    for (Collector c : cs) {
      poolOf.put(c.name(), c.labels().get("pool"));
    }
    for (Target t : ts) {
      assertEquals(t.labels().get("pool"), poolOf.get(a.snapshot().collectorOf(t).orElseThrow()));
    }
    assertEquals(0, a.snapshot().outsidePartition());
  }

  @Test
  void aRelabelThatChangesTheZoneMovesTheTarget() {
    Allocator a = Allocators.builder(Allocators.RENDEZVOUS).zoneAware().build();
    a.setCollectors(replicas(new int[] {2, 2, 2}));
    Target t = Target.of("svc", "a:1",
        Map.of("__meta_kubernetes_endpointslice_endpoint_zone", zone(0)));
    a.setTargets(List.of(t));
    assertEquals(zone(0), zoneOfCollector(a.snapshot()).get(a.snapshot().collectorOf(t).get()));
    Target moved = Target.of("svc", "a:1",
        Map.of("__meta_kubernetes_endpointslice_endpoint_zone", zone(2)));
    a.setTargets(List.of(moved));
    assertEquals(zone(2), zoneOfCollector(a.snapshot()).get(a.snapshot().collectorOf(t).get()));
  }

  @Test
  void misconfigurationsAreRejectedWithAClearMessage() {
    IllegalArgumentException skew = assertThrows(IllegalArgumentException.class,
        () -> Allocators.builder(Allocators.RENDEZVOUS).maxSkew(2).build());
    assertTrue(skew.getMessage().contains("zoneAware()"), skew.getMessage());
    IllegalArgumentException noFallback = assertThrows(IllegalArgumentException.class,
        () -> Allocators.builder(Allocators.PER_NODE).noFallback().zoneAware().build());
    assertTrue(noFallback.getMessage().contains("fallback"), noFallback.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> Allocators.builder(Allocators.PER_NODE).noPartitioning().maxSkew(2).build());
    assertThrows(NullPointerException.class,
        () -> Allocators.builder(Allocators.PER_NODE).build().setNodeZones(null));
    Map<String, String> bad = new HashMap<>();
    bad.put("n", null);
    assertThrows(NullPointerException.class,
        () -> Allocators.builder(Allocators.PER_NODE).build().setNodeZones(bad));
  }

  @Test
  void aCollectorWithoutAZoneIsInItsNodesZoneFromTheTopology() {
    Allocator a = Allocators.builder(Allocators.PER_NODE).build();
    a.setNodeZones(topology());
    List<Target> ts = targets(10, 0);
    a.setTargets(ts);
    List<Collector> noZones = new ArrayList<>();
    for (Collector c : collectors((z, n) -> n % 2 == 1)) {
      noZones.add(Collector.of(c.name(), c.node().orElseThrow()));
    }
    a.setCollectors(noZones);
    assertComplete(a, ts);
    Map<String, String> nodeOf = new HashMap<>();
    for (Collector c : noZones) {
      nodeOf.put(c.name(), c.node().orElseThrow());
    }
    for (Target t : ts) {
      String c = a.snapshot().collectorOf(t).orElseThrow();
      assertEquals(topology().get(t.node().orElseThrow()), topology().get(nodeOf.get(c)));
    }
    assertEquals(0, a.snapshot().outsidePartition());
  }
}
