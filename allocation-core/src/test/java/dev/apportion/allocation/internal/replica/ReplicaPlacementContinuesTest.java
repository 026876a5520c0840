package dev.apportion.allocation.internal.replica;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A replicated allocator that continues its replica placement through a run of collector changes
 * ends where a fresh allocator given the final sets starts: every target's owners, rank by rank,
 * and every collector's count and cost. Tight load factors, costs and limits make collectors
 * reject proposers, so the acceptance and the probe are exercised, not only the standing choices.
 */
class ReplicaPlacementContinuesTest {
  private static final int TARGETS = 2_000;
  private static final int STEPS = 24;

  @ParameterizedTest(name = "{0}, {1} replicas, load factor {2}, costs {3}, limit {4}")
  @CsvSource({
      "consistent-hashing, 2, 1.2, false, 0",
      "consistent-hashing, 2, 1.05, true, 0",
      "consistent-hashing, 3, 1.05, false, 0",
      "rendezvous, 2, 1.05, false, 0",
      "rendezvous, 3, 1.1, true, 0",
      "consistent-hashing, 2, 1.05, false, 260",
      "consistent-hashing, 3, 1.1, true, 400"})
  void aRunOfCollectorChangesEndsWhereAFreshAllocatorStarts(String strategy, int replicas,
      double loadFactor, boolean costs, int limit) {
    for (long seed = 1; seed <= 2; seed++) {
      SplittableRandom random = new SplittableRandom(seed);
      List<Target> targets = targets(random, costs);
      List<Collector> collectors = new ArrayList<>();
      int nextName = 0;
      for (; nextName < 36; nextName++) {
        collectors.add(collector(nextName));
      }
      Allocator live = build(strategy, replicas, loadFactor, limit);
      live.setCollectors(collectors);
      live.setTargets(targets);
      int continued = 0;
      for (int step = 0; step < STEPS; step++) {
        int what = random.nextInt(3);
        if (what != 1 && collectors.size() > 12) {
          collectors.remove(random.nextInt(collectors.size()));
        }
        if (what != 0) {
          collectors.add(collector(nextName++));
        }
        live.setCollectors(collectors);
        continued += ((ReplicatedAllocator) live).continuedLastChange() ? 1 : 0;
        Allocator fresh = build(strategy, replicas, loadFactor, limit);
        fresh.setCollectors(collectors);
        fresh.setTargets(targets);
        assertSame(fresh.snapshot(), live.snapshot(), targets, "seed " + seed + " step " + step);
      }
      assertTrue(continued >= STEPS * 3 / 4, continued + " of " + STEPS + " steps continued");
    }
  }

  @ParameterizedTest(name = "{0} replicas")
  @CsvSource({"2", "3"})
  void aLongRollingReplacementRenumbersTheCollectorsAndStillAgrees(int replicas) {
    SplittableRandom random = new SplittableRandom(11);
    List<Target> targets = targets(random, false);
    List<Collector> collectors = new ArrayList<>();
    int nextName = 0;
    for (; nextName < 24; nextName++) {
      collectors.add(collector(nextName));
    }
    Allocator live = build("consistent-hashing", replicas, 1.05, 0);
    live.setCollectors(collectors);
    live.setTargets(targets);
    // Each step replaces the oldest collector by a new name: the ids of departed names pile up
    // until the allocator numbers the collectors afresh, and the placement starts over once.
    int afresh = 0;
    for (int step = 0; step < 120; step++) {
      collectors.remove(0);
      collectors.add(collector(nextName++));
      live.setCollectors(collectors);
      afresh += ((ReplicatedAllocator) live).continuedLastChange() ? 0 : 1;
      if (step % 10 == 9) {
        Allocator fresh = build("consistent-hashing", replicas, 1.05, 0);
        fresh.setCollectors(collectors);
        fresh.setTargets(targets);
        assertSame(fresh.snapshot(), live.snapshot(), targets, "step " + step);
      }
    }
    assertTrue(afresh >= 1 && afresh <= 3, afresh + " steps placed afresh");
  }

  @ParameterizedTest(name = "per-node, {0} replicas")
  @CsvSource({"2", "3"})
  void perNodeWithANodeTopologyContinuesAndAgrees(int replicas) {
    SplittableRandom random = new SplittableRandom(5);
    List<Target> targets = targets(random, false);
    List<Collector> collectors = new ArrayList<>();
    Map<String, String> zones = new java.util.HashMap<>();
    for (int i = 0; i < 40; i++) {
      collectors.add(Collector.of("collector-" + i, "node-" + i));
      zones.put("node-" + i, "zone-" + (i % 3));
    }
    Allocator live = build("per-node", replicas, 1.2, 0);
    live.setNodeZones(zones);
    live.setCollectors(collectors);
    live.setTargets(targets);
    int continued = 0;
    for (int step = 0; step < 20; step++) {
      if (step % 2 == 0) {
        collectors.remove(random.nextInt(collectors.size()));
      } else {
        int i = 40 + step;
        collectors.add(Collector.of("collector-" + i, "node-" + (i % 40)));
      }
      live.setCollectors(collectors);
      continued += ((ReplicatedAllocator) live).continuedLastChange() ? 1 : 0;
      Allocator fresh = build("per-node", replicas, 1.2, 0);
      fresh.setNodeZones(zones);
      fresh.setCollectors(collectors);
      fresh.setTargets(targets);
      assertSame(fresh.snapshot(), live.snapshot(), targets, "per-node step " + step);
    }
    assertTrue(continued >= 15, continued + " of 20 steps continued");
  }

  @ParameterizedTest(name = "per-node, {0} replicas")
  @CsvSource({"2", "3"})
  void perNodeWithoutANodeTopologyPlacesAfreshAndStillAgrees(int replicas) {
    SplittableRandom random = new SplittableRandom(7);
    List<Target> targets = targets(random, false);
    List<Collector> collectors = new ArrayList<>();
    for (int i = 0; i < 24; i++) {
      collectors.add(collector(i));
    }
    Allocator live = build("per-node", replicas, 1.2, 0);
    live.setCollectors(collectors);
    live.setTargets(targets);
    collectors.remove(5);
    live.setCollectors(collectors);
    assertFalse(((ReplicatedAllocator) live).continuedLastChange());
    Allocator fresh = build("per-node", replicas, 1.2, 0);
    fresh.setCollectors(collectors);
    fresh.setTargets(targets);
    assertSame(fresh.snapshot(), live.snapshot(), targets, "per-node");
  }

  private static Allocator build(String strategy, int replicas, double loadFactor, int limit) {
    Allocators.Builder b = Allocators.builder(strategy).replicas(replicas).loadFactor(loadFactor);
    if (limit > 0) {
      b.maxTargetsPerCollector(limit);
    }
    return b.build();
  }

  /** Six collectors a zone in three zones, two a node. */
  private static Collector collector(int i) {
    return Collector.of("collector-" + i, "node-" + (i / 2), "zone-" + (i / 2 % 3));
  }

  private static List<Target> targets(SplittableRandom random, boolean costs) {
    List<Target> ts = new ArrayList<>();
    for (int i = 0; i < TARGETS; i++) {
      Target t = Target.of("job-" + (i % 7), "10.0." + (i / 250) + "." + (i % 250) + ":9100",
          Map.of("__meta_kubernetes_pod_node_name", "node-" + random.nextInt(20)));
      ts.add(costs ? t.withCost(1 + random.nextInt(40)) : t);
    }
    return ts;
  }

  private static void assertSame(Allocation want, Allocation have, List<Target> targets,
      String where) {
    for (Target t : targets) {
      assertEquals(want.ownersOf(t), have.ownersOf(t), where + ": owners of " + t);
    }
    for (Collector c : want.collectors()) {
      assertEquals(want.targetCount(c.name()), have.targetCount(c.name()), where + ": count");
      assertEquals(want.costOf(c.name()), have.costOf(c.name()), where + ": cost");
    }
    assertEquals(want.unassigned(), have.unassigned(), where + ": unassigned");
  }
}
