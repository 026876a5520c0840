package dev.apportion.allocation.internal;

import static dev.apportion.allocation.internal.Fixtures.assertComplete;
import static dev.apportion.allocation.internal.Fixtures.assignment;
import static dev.apportion.allocation.internal.Fixtures.collectors;
import static dev.apportion.allocation.internal.Fixtures.node;
import static dev.apportion.allocation.internal.Fixtures.nodeTargets;
import static dev.apportion.allocation.internal.Fixtures.targets;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PerNodeTest extends AllocatorContractTest {
  @Override
  Allocators.Builder builder() {
    return Allocators.builder("per-node");
  }

  private static String collectorNode(Allocation a, String collector) {
    for (Collector c : a.collectors()) {
      if (c.name().equals(collector)) {
        return c.node().orElse(null);
      }
    }
    throw new AssertionError("no collector " + collector);
  }

  private static int crossNode(Allocation a) {
    int cross = 0;
    for (Target t : a.targets()) {
      String c = a.collectorOf(t).orElse(null);
      if (c != null && t.node().isPresent()
          && !t.node().get().equals(collectorNode(a, c))) {
        cross++;
      }
    }
    return cross;
  }

  @Test
  void fiftyNodesWithOneCollectorEachScrapeOnlyTheirOwnNode() {
    Allocator a = builder().build();
    List<Target> ts = nodeTargets(50, 20);
    a.setTargets(ts);
    a.setCollectors(collectors(50));
    assertComplete(a, ts);
    assertEquals(0, crossNode(a.snapshot()));
    for (Collector c : a.snapshot().collectors()) {
      assertEquals(20, a.snapshot().targetCount(c.name()));
    }
  }

  @Test
  void removingOneNodesCollectorMovesOnlyThatNodesTargetsToTheFallback() {
    Allocator a = builder().build();
    List<Target> ts = nodeTargets(50, 20);
    a.setTargets(ts);
    a.setCollectors(collectors(50));
    Map<Target, String> before = assignment(a.snapshot());
    List<Collector> less = new ArrayList<>(collectors(50));
    less.remove(17);
    a.setCollectors(less);
    assertComplete(a, ts);
    assertTrue(a.snapshot().unassigned().isEmpty(), "the fallback places them");
    Map<Target, String> after = assignment(a.snapshot());
    int moved = 0;
    for (Target t : ts) {
      if (!before.get(t).equals(after.get(t))) {
        assertEquals(node(17), t.node().orElseThrow(), "only node-17's targets move");
        moved++;
      }
    }
    assertEquals(20, moved);
    assertEquals(20, crossNode(a.snapshot()), "node-17's targets are now scraped remotely");
  }

  @Test
  void twoCollectorsOnOneNodeTheSmallerNameWinsInEitherOrder() {
    List<Target> ts = nodeTargets(2, 10);
    Collector older = Collector.of("agent-b", node(0));
    Collector surge = Collector.of("agent-a", node(0));
    Collector other = Collector.of("agent-z", node(1));
    for (List<Collector> order : List.of(List.of(older, surge, other),
        List.of(other, surge, older))) {
      Allocator a = builder().build();
      a.setTargets(ts);
      a.setCollectors(order);
      assertEquals(10, a.snapshot().targetCount("agent-a"));
      assertEquals(0, a.snapshot().targetCount("agent-b"));
      assertEquals(10, a.snapshot().targetCount("agent-z"));
    }
    // A surge rollout: the old pod first, then the new one arrives, then the old one leaves.
    Allocator a = builder().build();
    a.setTargets(ts);
    a.setCollectors(List.of(older, other));
    assertEquals(10, a.snapshot().targetCount("agent-b"));
    a.setCollectors(List.of(older, surge, other));
    assertEquals(10, a.snapshot().targetCount("agent-a"));
    a.setCollectors(List.of(surge, other));
    assertEquals(10, a.snapshot().targetCount("agent-a"));
    assertEquals(0, crossNode(a.snapshot()));
  }

  @Test
  void aCollectorReportedOnAnotherNodeRePlacesBothNodes() {
    Allocator a = builder().build();
    List<Target> ts = nodeTargets(3, 10);
    a.setTargets(ts);
    a.setCollectors(List.of(Collector.of("c0", node(0)), Collector.of("c1", node(1))));
    // node-2 has no collector: its 10 targets are on the fallback, so they cross nodes.
    assertEquals(10, crossNode(a.snapshot()));
    a.setCollectors(List.of(Collector.of("c0", node(2)), Collector.of("c1", node(1))));
    assertComplete(a, ts);
    Allocation s = a.snapshot();
    for (Target t : ts) {
      String n = t.node().orElseThrow();
      String c = s.collectorOf(t).orElseThrow();
      if (n.equals(node(2))) {
        assertEquals("c0", c, "c0's new node's targets are now local");
      } else if (n.equals(node(1))) {
        assertEquals("c1", c);
      }
    }
    assertEquals(10, crossNode(s), "node-0 lost its collector: its 10 targets go to the fallback");
    assertEquals(node(2), collectorNode(s, "c0"));
  }

  @Test
  void targetsWithoutANodeOrWithoutALocalCollectorGoToTheFallback() {
    Allocator a = builder().build();
    List<Target> ts = new ArrayList<>(nodeTargets(4, 5));
    ts.addAll(targets(30, 2));
    a.setTargets(ts);
    a.setCollectors(List.of(Collector.of("c0", node(0)), Collector.of("c1", node(1))));
    assertComplete(a, ts);
    assertTrue(a.snapshot().unassigned().isEmpty(), "nothing silently dropped");
    assertEquals(4 * 5 + 30,
        a.snapshot().targetCount("c0") + a.snapshot().targetCount("c1"));
    assertEquals(0, crossNode(a.snapshot()) - 2 * 5, "only node-2's and node-3's targets cross");
  }

  @Test
  void withNoFallbackUnplaceableTargetsAreUnassignedAndBecomePlaceable() {
    for (Allocators.Builder b : List.of(builder().noFallback(), builder().fallback(""))) {
      Allocator a = b.build();
      List<Target> ts = new ArrayList<>(nodeTargets(3, 5));
      ts.addAll(targets(7, 1));
      a.setTargets(ts);
      a.setCollectors(List.of(Collector.of("c0", node(0))));
      assertComplete(a, ts);
      assertEquals(5, a.snapshot().targetCount("c0"));
      assertEquals(10 + 7, a.snapshot().unassigned().size());
      a.setCollectors(List.of(Collector.of("c0", node(0)), Collector.of("c1", node(1))));
      assertComplete(a, ts);
      assertEquals(5 + 7, a.snapshot().unassigned().size(), "node-1's targets are now placed");
      a.setCollectors(List.of(Collector.of("c1", node(1))));
      assertComplete(a, ts);
      assertEquals(10 + 7, a.snapshot().unassigned().size(), "node-0's targets lost theirs");
    }
  }

  @Test
  void fallbackIsConfigurable() {
    for (String f : List.of("consistent-hashing", "rendezvous", "least-weighted")) {
      Allocator a = builder().fallback(f).build();
      List<Target> ts = new ArrayList<>(nodeTargets(3, 5));
      ts.addAll(targets(60, 2));
      a.setTargets(ts);
      a.setCollectors(collectors(2));
      assertComplete(a, ts);
      assertTrue(a.snapshot().unassigned().isEmpty(), f);
      a.setCollectors(collectors(3));
      assertComplete(a, ts);
      assertEquals(0, crossNode(a.snapshot()), f);
    }
    assertThrows(IllegalArgumentException.class, () -> builder().fallback("per-node"));
    assertThrows(IllegalArgumentException.class, () -> builder().fallback("no-such"));
  }

  @Test
  void aMetaOnlyChangeOfNodeRePlacesTheTarget() {
    Allocator a = builder().build();
    a.setCollectors(List.of(Collector.of("c0", node(0)), Collector.of("c1", node(1))));
    Target onZero = Target.of("pods", "10.1.0.0:9090",
        Map.of("__meta_kubernetes_pod_node_name", node(0), "pod", "app-0"));
    Target onOne = Target.of("pods", "10.1.0.0:9090",
        Map.of("__meta_kubernetes_pod_node_name", node(1), "pod", "app-0"));
    Target nowhere = Target.of("pods", "10.1.0.0:9090",
        Map.of("__meta_kubernetes_pod_node_name", "node-gone", "pod", "app-0"));
    a.setTargets(List.of(onZero));
    assertEquals("c0", a.snapshot().collectorOf(onZero).orElseThrow());
    a.setTargets(List.of(onOne));
    assertEquals("c1", a.snapshot().collectorOf(onOne).orElseThrow(), "follows its new node");
    assertEquals(node(1), a.targetsFor("c1", "pods").get(0).node().orElseThrow());
    a.setTargets(List.of(nowhere));
    assertComplete(a, List.of(nowhere));
    // node-1's collector changes: the target no longer lives there, so it must not follow.
    a.setCollectors(List.of(Collector.of("c0", node(0)), Collector.of("c2", node(1))));
    Allocator fresh = builder().build();
    fresh.setCollectors(List.of(Collector.of("c0", node(0)), Collector.of("c2", node(1))));
    fresh.setTargets(List.of(nowhere));
    assertEquals(fresh.snapshot().collectorOf(nowhere), a.snapshot().collectorOf(nowhere));
    // And the node index holds the latest node when the target leaves.
    a.setTargets(List.of());
    a.setCollectors(List.of(Collector.of("c3", "node-gone")));
    assertComplete(a, List.of());
    a.setTargets(List.of(nowhere));
    assertEquals("c3", a.snapshot().collectorOf(nowhere).orElseThrow());
  }

  @Test
  void withoutAFallbackANodeChangeToANodeWithNoCollectorUnassigns() {
    Allocator a = builder().noFallback().build();
    a.setCollectors(List.of(Collector.of("c0", node(0))));
    Target here = Target.of("pods", "h:1", Map.of("__meta_kubernetes_pod_node_name", node(0)));
    Target gone = Target.of("pods", "h:1", Map.of("__meta_kubernetes_pod_node_name", "x"));
    a.setTargets(List.of(here));
    assertEquals(0, a.snapshot().unassigned().size());
    a.setTargets(List.of(gone));
    assertEquals(1, a.snapshot().unassigned().size());
    assertComplete(a, List.of(gone));
    a.setTargets(List.of(here));
    assertEquals("c0", a.snapshot().collectorOf(here).orElseThrow());
    assertEquals(0, a.snapshot().unassigned().size());
  }
  /**
   * Random collector sets over nodes with up to three collectors each, changed by 1 to 30
   * collectors at a time (past 16, the winners are computed again instead of edited): after
   * every change each node-local target is on the collector of its node with the smallest name,
   * and nothing is unassigned.
   */
  @Test
  void theWinnersFollowEveryChangeOfTheCollectorsSmallOrLarge() {
    for (long seed = 1; seed <= 12; seed++) {
      java.util.Random random = new java.util.Random(seed);
      List<Target> ts = new ArrayList<>(nodeTargets(40, 3));
      for (int i = 0; i < 20; i++) {
        ts.add(Target.of("blackbox", "probe-" + i + ".example.com:80"));
      }
      List<Collector> candidates = new ArrayList<>();
      for (int n = 0; n < 44; n++) {
        int count = 1 + random.nextInt(3);
        for (int k = 0; k < count; k++) {
          candidates.add(Collector.of("c-" + Integer.toString(random.nextInt(1 << 20), 36)
              + "-" + n + "-" + k, node(n)));
        }
      }
      java.util.Set<Collector> current = new java.util.LinkedHashSet<>();
      Allocator a = builder().build();
      a.setTargets(ts);
      for (int step = 0; step < 40; step++) {
        int flips = 1 + random.nextInt(random.nextBoolean() ? 4 : 30);
        for (int f = 0; f < flips; f++) {
          Collector c = candidates.get(random.nextInt(candidates.size()));
          if (!current.remove(c)) {
            current.add(c);
          }
        }
        if (current.isEmpty()) {
          current.add(candidates.get(0));
        }
        a.setCollectors(new ArrayList<>(current));
        Allocation snap = a.snapshot();
        Map<String, String> winner = new java.util.HashMap<>();
        for (Collector c : current) {
          winner.merge(c.node().orElseThrow(), c.name(),
              (x, y) -> x.compareTo(y) <= 0 ? x : y);
        }
        String where = "seed " + seed + " step " + step;
        assertEquals(0, snap.unassigned().size(), where);
        for (Target t : ts) {
          String expected = t.node().map(winner::get).orElse(null);
          if (expected != null) {
            assertEquals(expected, snap.collectorOf(t).orElseThrow(), where + " " + t);
          }
        }
      }
    }
  }
}
