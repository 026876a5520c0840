package dev.apportion.allocation.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.internal.LogCapture;
import dev.apportion.allocation.Target;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** AllocatorMetrics after real allocator operations, read back from a SimpleMeterRegistry. */
class AllocatorMetricsTest {
  private final MeterRegistry registry = new SimpleMeterRegistry();

  private static List<Target> targets(int n) {
    List<Target> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(Target.of("job-" + (i % 3), "10.0." + (i / 250) + "." + (i % 250) + ":9100",
          Map.of()));
    }
    return out;
  }

  /** {@code perNode} targets on each of nodes {@code 0..nodes-1}. */
  private static List<Target> nodeTargets(int nodes, int perNode) {
    List<Target> out = new ArrayList<>();
    for (int n = 0; n < nodes; n++) {
      for (int i = 0; i < perNode; i++) {
        out.add(Target.of("pods", "10." + n + ".0." + i + ":8080",
            Map.of("__meta_kubernetes_pod_node_name", "node-" + n)));
      }
    }
    return out;
  }

  /** Collectors {@code from..to-1}, collector {@code i} on node {@code i}. */
  private static List<Collector> collectors(int from, int to) {
    List<Collector> out = new ArrayList<>();
    for (int i = from; i < to; i++) {
      out.add(Collector.of("collector-" + i, "node-" + i));
    }
    return out;
  }

  private double gauge(String name) {
    return registry.get(name).gauge().value();
  }

  /** The per-collector gauges, by the {@code collector} tag. */
  private Map<String, Double> perCollector(String prefix) {
    Map<String, Double> out = new TreeMap<>();
    for (Gauge g : registry.find(prefix + ".targets.per.collector").gauges()) {
      assertNull(out.put(g.getId().getTag("collector"), g.value()), "one gauge per collector");
    }
    return out;
  }

  /** Every gauge equals what the allocator's snapshot says now. */
  private void assertGaugesMatch(Allocator a) {
    Allocation s = a.snapshot();
    assertEquals(s.collectors().size(), gauge("allocator.collectors.allocatable"), "collectors");
    assertEquals(s.targets().size(), gauge("allocator.targets"), "targets");
    assertEquals(s.unassigned().size(), gauge("allocator.targets.unassigned"), "unassigned");
    Map<String, Double> expected = new TreeMap<>();
    for (Collector c : s.collectors()) {
      expected.put(c.name(), (double) s.targetCount(c.name()));
    }
    assertEquals(expected, perCollector("allocator"), "targets per collector");
    Map<String, Double> expectedCost = new TreeMap<>();
    for (Collector c : s.collectors()) {
      expectedCost.put(c.name(), (double) s.costOf(c.name()));
    }
    Map<String, Double> cost = new TreeMap<>();
    for (Gauge g : registry.find("allocator.cost.per.collector").gauges()) {
      assertNull(cost.put(g.getId().getTag("collector"), g.value()), "one gauge per collector");
    }
    assertEquals(expectedCost, cost, "cost per collector");
  }

  @Test
  void costPerCollectorFollowsCostsAndTheLimitsUnassignedAreCounted() {
    Allocator a = Allocators.builder("rendezvous").maxCostPerCollector(1000)
        .listener(AllocatorMetrics.of(registry))
        .build();
    List<Target> ts = new ArrayList<>();
    for (Target t : targets(60)) {
      ts.add(t.withCost(100));
    }
    a.setCollectors(collectors(0, 5));
    a.setTargets(ts);
    assertEquals(5000, registry.find("allocator.cost.per.collector").gauges().stream()
        .mapToDouble(Gauge::value).sum(), "50 of 60 targets of cost 100 fit in 5 x 1000");
    assertEquals(10, gauge("allocator.targets.unassigned"));
    assertGaugesMatch(a);
    List<Target> cheaper = new ArrayList<>();
    for (Target t : ts) {
      cheaper.add(t.withCost(50));
    }
    a.setTargets(cheaper);
    assertEquals(0, gauge("allocator.targets.unassigned"), "the waiting targets fit now");
    assertEquals(3000, registry.find("allocator.cost.per.collector").gauges().stream()
        .mapToDouble(Gauge::value).sum());
    assertGaugesMatch(a);
    a.setCollectors(collectors(0, 3));
    assertEquals(3, registry.find("allocator.cost.per.collector").gauges().size(),
        "removed with the collector");
    assertGaugesMatch(a);
  }

  @Test
  void gaugesTrackTheStateAfterEveryChange() {
    Allocator a = Allocators.builder("consistent-hashing")
        .listener(AllocatorMetrics.of(registry))
        .build();
    assertTrue(registry.getMeters().isEmpty(), "nothing is registered before the first call");

    a.setTargets(targets(100));
    assertEquals(0, gauge("allocator.collectors.allocatable"));
    assertEquals(100, gauge("allocator.targets"));
    assertEquals(100, gauge("allocator.targets.unassigned"), "no collectors yet");
    assertEquals(Map.of(), perCollector("allocator"));

    a.setCollectors(collectors(0, 4));
    assertEquals(4, gauge("allocator.collectors.allocatable"));
    assertEquals(0, gauge("allocator.targets.unassigned"));
    assertEquals(100, perCollector("allocator").values().stream().mapToDouble(d -> d).sum());
    assertGaugesMatch(a);

    a.setTargets(targets(160));
    assertEquals(160, gauge("allocator.targets"));
    assertEquals(160, perCollector("allocator").values().stream().mapToDouble(d -> d).sum());
    assertGaugesMatch(a);

    a.setTargets(targets(30));
    assertEquals(30, gauge("allocator.targets"));
    assertGaugesMatch(a);

    a.setCollectors(collectors(0, 7));
    assertEquals(7, perCollector("allocator").size());
    assertGaugesMatch(a);

    Gauge g = registry.get("allocator.targets").gauge();
    assertEquals("consistent-hashing", g.getId().getTag("strategy"));
  }

  @Test
  void theUnassignedGaugeReturnsToZeroWhenTargetsBecomePlaceable() {
    Allocator a = Allocators.builder("per-node").noFallback()
        .listener(AllocatorMetrics.of(registry))
        .build();
    a.setCollectors(collectors(0, 3));
    a.setTargets(nodeTargets(5, 10));
    assertEquals(20, gauge("allocator.targets.unassigned"), "nodes 3 and 4 have no collector");
    assertGaugesMatch(a);

    a.setCollectors(collectors(0, 4));
    assertEquals(10, gauge("allocator.targets.unassigned"), "recounted, not accumulated");

    a.setCollectors(collectors(0, 5));
    assertEquals(0, gauge("allocator.targets.unassigned"), "back to zero, not left at 10");
    assertGaugesMatch(a);

    a.setCollectors(collectors(1, 5));
    assertEquals(10, gauge("allocator.targets.unassigned"), "and up again");
    a.setTargets(nodeTargets(5, 10).subList(10, 50));
    assertEquals(0, gauge("allocator.targets.unassigned"), "the unplaceable targets went away");
    assertGaugesMatch(a);
  }

  @Test
  void aRemovedCollectorsGaugeIsRemoved() {
    Allocator a = Allocators.builder("rendezvous")
        .listener(AllocatorMetrics.of(registry))
        .build();
    a.setTargets(targets(200));
    a.setCollectors(collectors(0, 4));
    assertEquals(new TreeSet<>(List.of("collector-0", "collector-1", "collector-2",
        "collector-3")), perCollector("allocator").keySet());

    a.setCollectors(collectors(0, 3));
    assertNull(registry.find("allocator.targets.per.collector").tag("collector", "collector-3")
        .gauge(), "the gauge of a collector that left is gone, not stale");
    assertEquals(3, perCollector("allocator").size());
    assertGaugesMatch(a);

    a.setCollectors(collectors(2, 6));
    assertEquals(new TreeSet<>(List.of("collector-2", "collector-3", "collector-4",
        "collector-5")), perCollector("allocator").keySet());
    assertGaugesMatch(a);
  }

  @Test
  void anEmptyCollectorSetKeepsTheGaugesOfTheAssignmentThatStands() {
    Allocator a = Allocators.builder("consistent-hashing")
        .listener(AllocatorMetrics.of(registry))
        .build();
    a.setTargets(targets(50));
    a.setCollectors(collectors(0, 3));
    Map<String, Double> before = perCollector("allocator");
    a.setCollectors(List.of());
    assertEquals(before, perCollector("allocator"), "a blip changes nothing");
    assertEquals(3, gauge("allocator.collectors.allocatable"));
  }

  @Test
  void theTimerCountsOneSamplePerCall() {
    Allocator a = Allocators.builder("least-weighted")
        .listener(AllocatorMetrics.of(registry))
        .build();
    a.setTargets(targets(50));
    a.setTargets(targets(50));
    a.setCollectors(collectors(0, 3));
    a.setTargets(targets(80));
    a.setCollectors(collectors(0, 3));
    a.setCollectors(List.of());
    a.setCollectors(collectors(0, 2));
    assertEquals(3, registry.get("allocator.time.to.allocate").tag("method", "setTargets")
        .timer().count(), "setTargets, no-op calls included");
    assertEquals(4, registry.get("allocator.time.to.allocate").tag("method", "setCollectors")
        .timer().count(), "setCollectors, no-op and empty calls included");
    assertEquals(2, registry.find("allocator.time.to.allocate").timers().size());
  }

  @Test
  void theMovedCounterAddsUpReassignedTargetsNotNewOnes() {
    List<Integer> reassigned = new ArrayList<>();
    Allocator a = Allocators.builder("rendezvous")
        .listener(AllocatorMetrics.of(registry))
        .listener(c -> reassigned.add(c.reassigned()))
        .build();
    a.setCollectors(collectors(0, 10));
    a.setTargets(targets(1000));
    assertEquals(0, registry.get("allocator.targets.moved").counter().count(),
        "placing new targets is not a move");

    Map<Target, String> before = assignment(a.snapshot());
    a.setCollectors(collectors(0, 11));
    int moved = changed(before, assignment(a.snapshot()));
    assertTrue(moved > 0, "a new collector takes some targets");
    assertEquals(moved, registry.get("allocator.targets.moved").counter().count());

    before = assignment(a.snapshot());
    a.setCollectors(collectors(20, 31));
    int all = changed(before, assignment(a.snapshot()));
    assertEquals(1000, all, "replacing every collector moves every target");
    assertEquals(moved + all, registry.get("allocator.targets.moved").counter().count());
    assertEquals(moved + all, reassigned.stream().mapToInt(Integer::intValue).sum());

    a.setTargets(targets(500));
    assertEquals(moved + all, registry.get("allocator.targets.moved").counter().count(),
        "removing targets is not a move");
  }

  private static Map<Target, String> assignment(Allocation a) {
    Map<Target, String> out = new HashMap<>();
    for (Target t : a.targets()) {
      a.collectorOf(t).ifPresent(c -> out.put(t, c));
    }
    return out;
  }

  private static int changed(Map<Target, String> before, Map<Target, String> after) {
    int n = 0;
    for (Map.Entry<Target, String> e : before.entrySet()) {
      if (after.containsKey(e.getKey()) && !e.getValue().equals(after.get(e.getKey()))) {
        n++;
      }
    }
    return n;
  }

  @Test
  void withReplicasEveryReplicaIsCountedWhereItIsAndEveryReplicaMoveIsAMove() {
    Allocator a = Allocators.builder("rendezvous").replicas(2)
        .listener(AllocatorMetrics.of(registry)).build();
    a.setTargets(targets(300));
    a.setCollectors(collectors(0, 1));
    assertGaugesMatch(a);
    assertEquals(2, gauge("allocator.replicas"));
    assertEquals(300, gauge("allocator.targets.unassigned"), "one collector: one owner each");
    assertEquals(300, perCollector("allocator").get("collector-0"));
    a.setCollectors(collectors(0, 5));
    assertGaugesMatch(a);
    assertEquals(0, gauge("allocator.targets.unassigned"));
    double held = 0;
    for (double n : perCollector("allocator").values()) {
      held += n;
    }
    assertEquals(600, held, "every replica counted");
    Allocation before = a.snapshot();
    double movedBefore = registry.get("allocator.targets.moved").counter().count();
    a.setCollectors(collectors(1, 5));
    assertGaugesMatch(a);
    int replicasMoved = 0;
    for (Target t : before.targets()) {
      List<String> was = before.ownersOf(t);
      List<String> now = a.snapshot().ownersOf(t);
      for (int r = 0; r < 2; r++) {
        replicasMoved += was.get(r).equals(now.get(r)) ? 0 : 1;
      }
    }
    assertTrue(replicasMoved >= before.targetCount("collector-0"));
    assertEquals(replicasMoved,
        registry.get("allocator.targets.moved").counter().count() - movedBefore);
  }

  @Test
  void prefixAndExtraTagsApplyToEveryMeter() {
    Allocator a = Allocators.builder("consistent-hashing")
        .listener(AllocatorMetrics.builder(registry).prefix("apportion.pool")
            .tags(Tags.of("pool", "agents")).build())
        .build();
    a.setTargets(targets(10));
    a.setCollectors(collectors(0, 2));
    List<Meter> meters = registry.getMeters();
    assertEquals(12, meters.size(),
        "5 gauges, a counter, 2 timers, 2 collectors' targets and cost gauges");
    for (Meter m : meters) {
      assertTrue(m.getId().getName().startsWith("apportion.pool."), m.getId().toString());
      assertEquals("agents", m.getId().getTag("pool"), m.getId().toString());
      assertEquals("consistent-hashing", m.getId().getTag("strategy"), m.getId().toString());
    }
    assertEquals(10, registry.get("apportion.pool.targets").gauge().value());
  }

  @Test
  void theBuilderRejectsBadPrefixesAndItsOwnTagKeys() {
    AllocatorMetrics.Builder b = AllocatorMetrics.builder(registry);
    for (String bad : new String[] {"", ".allocator", "allocator."}) {
      assertThrows(IllegalArgumentException.class, () -> b.prefix(bad), bad);
    }
    for (String key : new String[] {"strategy", "collector", "method"}) {
      assertThrows(IllegalArgumentException.class, () -> b.tags(Tags.of(key, "x")), key);
    }
    assertThrows(NullPointerException.class, () -> AllocatorMetrics.of(null));
  }

  @Test
  void twoAllocatorsOnOneRegistryNeedADistinguishingTagAndAClashNeverFailsAWrite() {
    Allocator first = Allocators.builder("per-node")
        .listener(AllocatorMetrics.of(registry))
        .build();
    first.setTargets(targets(10));
    Allocator clash = Allocators.builder("per-node")
        .listener(AllocatorMetrics.of(registry))
        .build();
    try (LogCapture log = LogCapture.of(AllocatorMetrics.class)) {
      // A metrics problem never makes a write look failed.
      clash.setTargets(targets(20));
      clash.setTargets(targets(21));
      assertEquals(21, clash.snapshot().targets().size(), "the writes were applied");
      assertEquals(1, log.messages(Level.ERROR, "distinguishing tag").size(),
          "one error line, not one per write: " + log.messages(Level.ERROR));
    }
    assertEquals(10, gauge("allocator.targets"), "the first allocator's gauge is untouched");

    Allocator second = Allocators.builder("per-node")
        .listener(AllocatorMetrics.builder(registry).tags(Tags.of("pool", "b")).build())
        .build();
    second.setTargets(targets(20));
    assertEquals(20, registry.get("allocator.targets").tag("pool", "b").gauge().value());
    assertEquals(2, registry.find("allocator.targets").gauges().size());
  }

  @Test
  void oneInstanceSharedByTwoAllocatorsTurnsItselfOffWithoutFailingWrites() {
    AllocatorMetrics metrics = AllocatorMetrics.of(registry);
    Allocators.builder("rendezvous").listener(metrics).build().setTargets(targets(5));
    Allocator other = Allocators.builder("least-weighted").listener(metrics).build();
    try (LogCapture log = LogCapture.of(AllocatorMetrics.class)) {
      other.setTargets(targets(6));
      other.setTargets(targets(7));
      assertEquals(7, other.snapshot().targets().size(), "the writes were applied");
      assertEquals(1, log.messages(Level.ERROR,
          "register a new AllocatorMetrics with each allocator").size());
    }
    assertEquals(5, gauge("allocator.targets"), "the first allocator's gauge is untouched");
  }

  @Test
  void closeRemovesEveryMeterSoAReplacementCanRegister() {
    AllocatorMetrics old = AllocatorMetrics.of(registry);
    Allocator a = Allocators.builder("rendezvous").listener(old).build();
    a.setTargets(targets(30));
    a.setCollectors(collectors(0, 3));
    assertEquals(14, registry.getMeters().size(),
        "8 fixed meters and 3 collectors' targets and cost gauges");
    old.close();
    assertEquals(List.of(), registry.getMeters());
    a.setCollectors(collectors(0, 4));
    assertEquals(List.of(), registry.getMeters(), "a closed instance registers nothing");
    old.close();

    Allocator replacement = Allocators.builder("rendezvous")
        .listener(AllocatorMetrics.of(registry))
        .build();
    replacement.setTargets(targets(40));
    assertEquals(40, gauge("allocator.targets"));
  }

  @Test
  void everyMeterIsInTheDocumentationTable() throws IOException {
    Allocator a = Allocators.builder("consistent-hashing")
        .listener(AllocatorMetrics.of(registry))
        .build();
    a.setTargets(targets(10));
    a.setCollectors(collectors(0, 2));
    // Surefire runs in the module's directory.
    String doc = Files.readString(Path.of("..", "docs", "observability.md"),
        StandardCharsets.UTF_8);
    TreeSet<String> names = new TreeSet<>();
    for (Meter m : registry.getMeters()) {
      names.add(m.getId().getName());
    }
    assertEquals(9, names.size(), names.toString());
    for (String name : names) {
      assertTrue(doc.contains("`" + name + "`"), "docs/observability.md lists " + name);
    }
    assertNotNull(registry.find("allocator.time.to.allocate").tag("method", "setTargets").timer());
  }

  @Test
  void theOutsidePartitionGaugeCountsTargetsWhoseZoneHasNoCollector() {
    Allocator a = Allocators.builder("per-node").listener(AllocatorMetrics.of(registry)).build();
    a.setNodeZones(java.util.Map.of("n1", "z1", "n2", "z1", "n3", "z2"));
    List<dev.apportion.allocation.Target> ts = new java.util.ArrayList<>();
    for (int i = 0; i < 30; i++) {
      ts.add(dev.apportion.allocation.Target.of("j", "t" + i + ":1",
          java.util.Map.of("__meta_kubernetes_pod_node_name", "n" + (1 + i % 3))));
    }
    a.setTargets(ts);
    a.setCollectors(List.of(dev.apportion.allocation.Collector.of("c1", "n1", "z1")));
    assertEquals(10, gauge("allocator.targets.outside.partition"), "n3's targets: z2 has none");
    a.setCollectors(List.of(dev.apportion.allocation.Collector.of("c1", "n1", "z1"),
        dev.apportion.allocation.Collector.of("c3", "n3", "z2")));
    assertEquals(0, gauge("allocator.targets.outside.partition"));
  }
}
