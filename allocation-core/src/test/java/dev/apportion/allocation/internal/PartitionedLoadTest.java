package dev.apportion.allocation.internal;

import static dev.apportion.allocation.internal.Fixtures.assertComplete;
import static dev.apportion.allocation.internal.Fixtures.assignment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.partition.PartitionedPlacer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.BiPredicate;
import org.junit.jupiter.api.Test;

/**
 * Partitioned placement under load: the skew limit counting per-node's node-local targets, the
 * per-collector limit after a topology change and in the outside-partition count, and cost
 * changes reaching the partitions' placers.
 */
class PartitionedLoadTest {
  static final String POD_NODE = "__meta_kubernetes_pod_node_name";
  static final String SLICE_ZONE = "__meta_kubernetes_endpointslice_endpoint_zone";

  static String zone(int z) {
    return "z" + z;
  }

  static String node(int z, int n) {
    return zone(z) + "-n" + n;
  }

  /** 3 zones of 4 nodes. */
  static Map<String, String> topology() {
    Map<String, String> m = new TreeMap<>();
    for (int z = 0; z < 3; z++) {
      for (int n = 0; n < 4; n++) {
        m.put(node(z, n), zone(z));
      }
    }
    return m;
  }

  /** {@code perNode} targets on each of the 12 nodes. */
  static List<Target> nodeTargets(int perNode) {
    List<Target> out = new ArrayList<>();
    for (String node : topology().keySet()) {
      for (int i = 0; i < perNode; i++) {
        out.add(Target.of("pods", node + "-" + i + ":8080", Map.of(POD_NODE, node)));
      }
    }
    return out;
  }

  /** One collector per node, but where {@code skip} says. */
  static List<Collector> daemonSet(BiPredicate<Integer, Integer> skip) {
    List<Collector> out = new ArrayList<>();
    for (int z = 0; z < 3; z++) {
      for (int n = 0; n < 4; n++) {
        if (!skip.test(z, n)) {
          out.add(Collector.of("agent-" + node(z, n), node(z, n), zone(z)));
        }
      }
    }
    return out;
  }


  /** Targets on a collector of another zone than theirs (label, else node by the topology). */
  static int crossZone(Allocation a) {
    Map<String, String> zoneOf = ZonesTest.zoneOfCollector(a);
    Map<String, String> topo = topology();
    int cross = 0;
    for (Target t : a.targets()) {
      String tz = t.zone().orElseGet(() -> t.node().map(topo::get).orElse(null));
      String c = a.collectorOf(t).orElse(null);
      if (tz != null && c != null && !tz.equals(zoneOf.get(c))) {
        cross++;
      }
    }
    return cross;
  }

  /** The mean number of targets on the collectors of zone {@code z}. */
  static double zoneMean(Allocation a, String z) {
    int sum = 0;
    int n = 0;
    for (Collector c : a.collectors()) {
      if (z.equals(c.zone().orElse(null))) {
        sum += a.targetCount(c.name());
        n++;
      }
    }
    return (double) sum / n;
  }

  // ---- 1: per-node's skew limit counts the node-local targets --------------------------------

  @Test
  void perNodesSkewLimitCountsEachCollectorsNodeLocalTargets() {
    // The audit's repro: 12 nodes with 100 targets each; z0 keeps 2 of its 4 collectors. The
    // cluster mean is 1200 / 10 = 120, so at maxSkew 1.5 z0's two collectors may carry 360 in
    // all: 200 of their own nodes plus 160 of the pool of 200, so 40 must spill, no more.
    List<Target> ts = nodeTargets(100);
    List<Collector> cs = daemonSet((z, n) -> z == 0 && n >= 2);
    Allocator a = Allocators.builder(Allocators.PER_NODE).maxSkew(1.5).build();
    a.setNodeZones(topology());
    a.setTargets(ts);
    a.setCollectors(cs);
    assertComplete(a, ts);
    Allocation s = a.snapshot();
    int spilled = s.outsidePartition();
    assertTrue(spilled >= 40 && spilled <= 42, "spilled " + spilled + ", 40 needed");
    assertEquals(spilled, crossZone(s));
    double mean = (double) ts.size() / cs.size();
    assertTrue(zoneMean(s, zone(0)) <= 1.5 * mean + 1e-9, "z0 mean " + zoneMean(s, zone(0)));

    // A pure function of the sets: another order and history give the same placement.
    List<Target> shuffled = new ArrayList<>(ts);
    Collections.shuffle(shuffled, new Random(3));
    List<Collector> reversed = new ArrayList<>(cs);
    Collections.reverse(reversed);
    Allocator b = Allocators.builder(Allocators.PER_NODE).maxSkew(1.5).build();
    b.setCollectors(daemonSet((z, n) -> n == 0));
    b.setTargets(shuffled.subList(0, 700));
    b.setNodeZones(topology());
    b.setTargets(shuffled);
    b.setCollectors(reversed);
    assertEquals(assignment(s), assignment(b.snapshot()));

    // Without a skew limit nothing spills: z0's collectors carry 200 each.
    Allocator free = Allocators.builder(Allocators.PER_NODE).build();
    free.setNodeZones(topology());
    free.setTargets(ts);
    free.setCollectors(cs);
    assertEquals(0, free.snapshot().outsidePartition());
    assertEquals(200.0, zoneMean(free.snapshot(), zone(0)), 1e-9);
  }

  @Test
  void perNodesSpillFollowsNodeLocalTargetsThatComeAndGoWithoutThePoolChanging() {
    List<Target> ts = nodeTargets(100);
    List<Collector> cs = daemonSet((z, n) -> z == 0 && n >= 2);
    Allocator direct = Allocators.builder(Allocators.PER_NODE).maxSkew(1.5).build();
    direct.setNodeZones(topology());
    direct.setCollectors(cs);
    direct.setTargets(ts);

    // First without z0's node-local targets (z0 then keeps its whole pool), then with them:
    // only the node-local load changed, and the spill must follow it. Then a node-local target
    // moves to another node that has a collector, and back.
    List<Target> noLocal = new ArrayList<>();
    for (Target t : ts) {
      String node = t.node().orElseThrow();
      if (!node.equals(node(0, 0)) && !node.equals(node(0, 1))) {
        noLocal.add(t);
      }
    }
    Allocator winding = Allocators.builder(Allocators.PER_NODE).maxSkew(1.5).build();
    winding.setNodeZones(topology());
    winding.setCollectors(cs);
    winding.setTargets(noLocal);
    assertEquals(0, winding.snapshot().outsidePartition());
    winding.setTargets(ts);
    assertEquals(0, Fixtures.moved(assignment(direct.snapshot()), assignment(winding.snapshot())),
        "targets placed otherwise than from scratch");
    assertEquals(direct.snapshot().outsidePartition(), winding.snapshot().outsidePartition());

    List<Target> renoded = new ArrayList<>();
    for (Target t : ts) {
      renoded.add(t.node().orElseThrow().equals(node(0, 0))
          ? Target.of(t.job(), t.address(), Map.of(POD_NODE, node(1, 0))) : t);
    }
    winding.setTargets(renoded);
    Allocator renodedDirect = Allocators.builder(Allocators.PER_NODE).maxSkew(1.5).build();
    renodedDirect.setNodeZones(topology());
    renodedDirect.setCollectors(cs);
    renodedDirect.setTargets(renoded);
    assertEquals(0, Fixtures.moved(assignment(renodedDirect.snapshot()), assignment(winding.snapshot())),
        "targets placed otherwise than from scratch");
    winding.setTargets(ts);
    assertEquals(0, Fixtures.moved(assignment(direct.snapshot()), assignment(winding.snapshot())),
        "targets placed otherwise than from scratch");
  }

  @Test
  void perNodeSpillsNothingWhenTheNodeLocalLoadLeavesRoom() {
    // z0 keeps 3 of 4: it carries 400 on 3 collectors (133 each) against a mean of 1200 / 11 =
    // 109; at 1.5 it may carry floor(1.5 * 1200 * 3 / 11) = 490, so the pool of 100 stays.
    Allocator a = Allocators.builder(Allocators.PER_NODE).maxSkew(1.5).build();
    a.setNodeZones(topology());
    a.setTargets(nodeTargets(100));
    a.setCollectors(daemonSet((z, n) -> z == 0 && n == 3));
    assertEquals(0, a.snapshot().outsidePartition());
    assertEquals(0, crossZone(a.snapshot()));
  }

  // ---- 2: setNodeZones enforces the per-collector limit ---------------------------------------

  @Test
  void aTopologyChangeKeepsThePerCollectorLimit() {
    Allocator a = Allocators.builder(Allocators.PER_NODE).fallback(Allocators.RENDEZVOUS)
        .maxTargetsPerCollector(3).build();
    List<Target> ts = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      ts.add(Target.of("pods", "x-" + i + ":1", Map.of(POD_NODE, "no-collector")));
    }
    a.setTargets(ts);
    a.setCollectors(List.of(Collector.of("a1", "node-a", "a"), Collector.of("b1", "node-b", "b"),
        Collector.of("b2", "node-c", "b")));
    a.setNodeZones(Map.of("no-collector", "b"));
    assertComplete(a, ts);
    // The node moves to zone a, which has one collector: it may take 3 of the 4.
    a.setNodeZones(Map.of("no-collector", "a"));
    assertComplete(a, ts);
    Allocation s = a.snapshot();
    for (Collector c : s.collectors()) {
      assertTrue(s.targetCount(c.name()) <= 3, c.name() + " holds " + s.targetCount(c.name()));
    }
    assertEquals(3, s.targetCount("a1"));
    assertEquals(1, s.outsidePartition(), "the one the limit sent to zone b is counted");
  }

  // ---- 3: cost changes reach the partitions' placers -----------------------------------------

  /** The most cost on one collector of {@code zone} over that zone's mean cost per collector. */
  static double zoneCostPeakOverMean(Allocation a, String zone) {
    long peak = 0;
    long sum = 0;
    int n = 0;
    for (Collector c : a.collectors()) {
      if (zone.equals(c.zone().orElse(null))) {
        long v = a.costOf(c.name());
        peak = Math.max(peak, v);
        sum += v;
        n++;
      }
    }
    return peak / ((double) sum / n);
  }

  /** The targets of {@code ts} held by {@code collector} five times as costly. */
  static List<Target> fiveTimes(List<Target> ts, Allocation a, String collector) {
    List<Target> out = new ArrayList<>();
    for (Target t : ts) {
      out.add(collector.equals(a.collectorOf(t).orElse(null)) ? t.withCost(5) : t);
    }
    return out;
  }

  @Test
  void aCostChangeRebalancesZoneAwareConsistentHashingLikeThePlainOne() {
    List<Target> ts = new ArrayList<>();
    for (int z = 0; z < 3; z++) {
      for (int i = 0; i < 300; i++) {
        ts.add(Target.of("svc", zone(z) + "-" + i + ":9100", Map.of(SLICE_ZONE, zone(z))));
      }
    }
    List<Collector> cs = new ArrayList<>();
    for (int z = 0; z < 3; z++) {
      for (int i = 0; i < 4; i++) {
        cs.add(Collector.of("otel-" + zone(z) + "-" + i, null, zone(z)));
      }
    }
    Allocator zoned = Allocators.builder(Allocators.CONSISTENT_HASHING).zoneAware().build();
    zoned.setTargets(ts);
    zoned.setCollectors(cs);
    String hot = "otel-z0-0";
    List<Target> costly = fiveTimes(ts, zoned.snapshot(), hot);
    zoned.setTargets(costly);
    double zonedPeak = zoneCostPeakOverMean(zoned.snapshot(), zone(0));

    // The oracle: plain consistent-hashing over zone z0 alone, with the same change.
    List<Target> z0 = ts.subList(0, 300);
    List<Collector> z0Collectors = cs.subList(0, 4);
    Allocator plain = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    plain.setTargets(z0);
    plain.setCollectors(z0Collectors);
    plain.setTargets(fiveTimes(z0, plain.snapshot(), hot));
    double plainPeak = zoneCostPeakOverMean(plain.snapshot(), zone(0));
    // Ignoring the change would leave the hot collector at 5 x 75 against a zone mean of 150.
    assertTrue(zonedPeak <= plainPeak + 0.15 && zonedPeak < 2,
        "zone-aware " + zonedPeak + " against plain " + plainPeak);
    assertEquals(0, zoned.snapshot().outsidePartition());
    assertComplete(zoned, costly);
  }

  @Test
  void aCostChangeRebalancesPerNodesFallbackPool() {
    // 400 targets on 4 nodes of z0 that have no collector; z0's 4 collectors run on other nodes.
    List<Target> ts = new ArrayList<>();
    Map<String, String> topo = new TreeMap<>(topology());
    for (int n = 0; n < 4; n++) {
      topo.put("bare-" + n, zone(0));
      for (int i = 0; i < 100; i++) {
        ts.add(Target.of("pods", "bare-" + n + "-" + i + ":1", Map.of(POD_NODE, "bare-" + n)));
      }
    }
    Allocator a = Allocators.builder(Allocators.PER_NODE).build();
    a.setNodeZones(topo);
    a.setTargets(ts);
    a.setCollectors(daemonSet((z, n) -> z == 2));
    List<Target> costly = fiveTimes(ts, a.snapshot(), "agent-" + node(0, 0));
    a.setTargets(costly);
    assertComplete(a, costly);
    assertEquals(0, crossZone(a.snapshot()));
    double peak = zoneCostPeakOverMean(a.snapshot(), zone(0));
    // Ignoring the change would leave agent-z0-n0 at 5 x 100 against a zone mean of 200.
    assertTrue(peak < 1.6, "z0 cost peak/mean " + peak);
  }

  // ---- 4: targets the per-collector limit moves out of their zone are counted ----------------

  @Test
  void targetsTheLimitMovesToAnotherZoneAreCountedOutsideTheirPartition() {
    Allocator a = Allocators.builder(Allocators.RENDEZVOUS).zoneAware()
        .maxTargetsPerCollector(4).build();
    List<Target> ts = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      ts.add(Target.of("svc", "a-" + i + ":1", Map.of(SLICE_ZONE, "a")));
    }
    a.setTargets(ts);
    a.setCollectors(List.of(Collector.of("a1", null, "a"), Collector.of("b1", null, "b"),
        Collector.of("b2", null, "b"), Collector.of("c1", null, "c")));
    assertComplete(a, ts);
    assertEquals(6, crossZone(a.snapshot()));
    assertEquals(6, a.snapshot().outsidePartition());
    // A write that changes nothing keeps the count; one that adds room in zone a lowers it.
    a.setTargets(ts);
    assertEquals(6, a.snapshot().outsidePartition());
    a.setCollectors(List.of(Collector.of("a1", null, "a"), Collector.of("a2", null, "a"),
        Collector.of("b1", null, "b"), Collector.of("b2", null, "b"), Collector.of("c1", null,
            "c")));
    assertEquals(2, crossZone(a.snapshot()));
    assertEquals(2, a.snapshot().outsidePartition());
  }

  @Test
  void perNodeCountsNodeLocalTargetsTheLimitMovesToAnotherZone() {
    Allocator a = Allocators.builder(Allocators.PER_NODE).maxTargetsPerCollector(40).build();
    a.setNodeZones(topology());
    List<Target> ts = new ArrayList<>(nodeTargets(10));
    for (int i = 0; i < 60; i++) {
      ts.add(Target.of("pods", "busy-" + i + ":1", Map.of(POD_NODE, node(0, 0))));
    }
    a.setTargets(ts);
    a.setCollectors(daemonSet((z, n) -> false));
    assertComplete(a, ts);
    Allocation s = a.snapshot();
    assertEquals(40, s.targetCount("agent-" + node(0, 0)));
    int cross = crossZone(s);
    assertTrue(cross > 0, "the limit's least-loaded rule ignores zones: some leave z0");
    assertEquals(cross, s.outsidePartition());
  }

  // ---- 6: the cross-zone warning, once per episode ------------------------------------------

  @Test
  void crossZoneScrapesAreLoggedOncePerEpisode() {
    try (LogCapture log = LogCapture.of(PartitionedPlacer.class)) {
      Allocator a = Allocators.builder(Allocators.PER_NODE).build();
      a.setNodeZones(topology());
      a.setTargets(nodeTargets(10));
      a.setCollectors(daemonSet((z, n) -> false));
      assertEquals(List.of(), log.messages(Level.WARN));
      // Zone z2 loses every collector: one warning, however many writes the episode lasts.
      a.setCollectors(daemonSet((z, n) -> z == 2));
      a.setTargets(nodeTargets(11));
      a.setCollectors(daemonSet((z, n) -> z == 2 || (z == 0 && n == 0)));
      List<String> warned = log.messages(Level.WARN, "placed outside their");
      assertEquals(1, warned.size(), "" + log.messages(Level.WARN));
      assertTrue(warned.get(0).contains("40 target(s)") && warned.get(0).contains("[z2]"),
          warned.get(0));
      assertEquals(0, log.messages(Level.INFO).size());
      // A collector returns to z2: the episode ends with one info line.
      a.setCollectors(daemonSet((z, n) -> z == 2 && n > 0));
      assertEquals(0, a.snapshot().outsidePartition());
      assertEquals(1, log.messages(Level.INFO, "in its partition again").size());
      // A second episode warns again.
      a.setCollectors(daemonSet((z, n) -> z == 2));
      assertEquals(2, log.messages(Level.WARN, "placed outside their").size());
    }
  }
}
