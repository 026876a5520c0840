package dev.apportion.allocation.internal.partition;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.Fixtures;
import dev.apportion.allocation.internal.LogCapture;
import dev.apportion.allocation.internal.Providers;
import dev.apportion.allocation.internal.chash.ConsistentHashingPlacer;
import dev.apportion.allocation.internal.chash.IncrementalMatching;
import dev.apportion.allocation.internal.engine.Engine;
import dev.apportion.allocation.internal.engine.NodeZones;
import dev.apportion.allocation.internal.engine.Placer;
import dev.apportion.allocation.internal.engine.TestEngines;
import dev.apportion.allocation.internal.pernode.PerNodePlacer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link IncrementalMatching} through a partition's view ({@link PartitionedPlacer}), where a
 * change of collectors can change the view's targets in the same call: under {@code per-node} a
 * collector that leaves sends its node's targets to the pool, one that joins takes them back;
 * under zone-aware {@code consistent-hashing} a collector set change re-groups nothing but the
 * members. Random histories of collector and target changes; after every step each target must be
 * where a fresh engine built the same way puts it, and the partitions' placers must have
 * continued their last matching for collector changes (not silently placed from scratch) and
 * never abandoned one.
 */
class PartitionIncrementalTest {
  private static final String NODE = "__meta_kubernetes_pod_node_name";

  /** The engine and its partitioned placer. */
  private record Built(Engine engine, PartitionedPlacer partitioned) {}

  private static Built build(boolean perNode, double maxSkew) {
    NodeZones zones = new NodeZones();
    java.util.function.Supplier<Placer> each = () -> new ConsistentHashingPlacer(1.1, 1.15,
        perNode ? Providers.FALLBACK_VIRTUAL_NODES : ConsistentHashingPlacer.VIRTUAL_NODES,
        !perNode);
    PartitionedPlacer partitioned = new PartitionedPlacer(PartitionKey.of(Allocators.ZONE, zones),
        each, maxSkew, perNode ? "per-node" : "consistent-hashing");
    Placer placer = perNode ? new PerNodePlacer(partitioned) : partitioned;
    Engine engine = TestEngines.engine(perNode ? "per-node" : "consistent-hashing", placer,
        List.of(), zones);
    // The topology supplied, so that a fresh engine resolves the zone of a node whose collector
    // left as the long-lived one does (which remembers it).
    Map<String, String> topology = new java.util.TreeMap<>();
    for (int i = 0; i < 60; i++) {
      topology.put("node-" + i, "zone-" + (i % 3));
    }
    engine.setNodeZones(topology);
    return new Built(engine, partitioned);
  }

  private static Collector collector(int i) {
    return Collector.of("collector-" + i, "node-" + i, "zone-" + (i % 3));
  }

  /** Targets on 60 nodes (collectors run on some of them), one in twenty on none. */
  private static Target target(int i, int node) {
    Map<String, String> labels = i % 20 == 0 ? Map.of("instance", "i-" + i)
        : Map.of("instance", "i-" + i, NODE, "node-" + node);
    return Target.of("job-" + (i % 5), "10." + (i >> 16) + "." + ((i >> 8) & 255) + "."
        + (i & 255) + ":9100", labels);
  }

  private static Target target(int i) {
    return target(i, i * 7919 % 60);
  }

  private static int nodeOf(Collector c) {
    return Integer.parseInt(c.node().orElseThrow().substring("node-".length()));
  }

  /**
   * What the placers' trace lines say of the long-lived engine's calls: the fresh engines each
   * step compares with run {@link #fresh} with the captures off.
   */
  private static final class Trace implements AutoCloseable {
    final LogCapture matching = LogCapture.of(IncrementalMatching.class, Level.TRACE);
    final LogCapture partitions = LogCapture.of(PartitionedPlacer.class, Level.TRACE);

    int continued() {
      return matching.count(Level.TRACE, "change continued");
    }

    int abandoned() {
      return matching.count(Level.TRACE, "change abandoned");
    }

    int partitions(String text) {
      return partitions.count(Level.TRACE, text);
    }

    /** A fresh engine built the same way, fed the two sets, not traced. */
    Engine fresh(boolean perNode, double maxSkew, List<Collector> cs, List<Target> ts) {
      Engine[] fresh = new Engine[1];
      matching.without(() -> partitions.without(() -> {
        fresh[0] = build(perNode, maxSkew).engine();
        fresh[0].setCollectors(cs);
        fresh[0].setTargets(ts);
      }));
      return fresh[0];
    }

    @Override
    public void close() {
      matching.close();
      partitions.close();
    }
  }

  private static final String IN_PLACE = "target change placed in place";
  private static final String KEPT_GROUPS = "collector change kept the groups";
  private static final String FROM_ORPHANS = "found among its orphans";
  private static final String EMPTY_SKIP = "left to the next reconcile";
  private static final String FROM_CHANGE = "took the engine's change as it is";

  @ParameterizedTest(name = "per-node {0}, skew limit {1}")
  @CsvSource({"true, NaN", "false, NaN", "false, 1.2"})
  void everyStepEqualsAFreshEngineAndCollectorChangesContinueTheMatching(boolean perNode,
      double maxSkew) {
    for (long seed = 1; seed <= 4; seed++) {
      try (Trace trace = new Trace()) {
        Random random =
            new Random(seed * 977 + (perNode ? 1 : 0) + (Double.isNaN(maxSkew) ? 0 : 2));
        Built built = build(perNode, maxSkew);
        Engine engine = built.engine();
        List<Collector> cs = new ArrayList<>();
        // Collectors on nodes 0-44: nodes 45-59 have none, so their targets are in the pool.
        List<Integer> off = new ArrayList<>();
        for (int i = 0; i < 45; i++) {
          cs.add(collector(i));
        }
        for (int i = 45; i < 60; i++) {
          off.add(i);
        }
        List<Target> ts = new ArrayList<>();
        int nextTarget = 0;
        for (; nextTarget < 3000; nextTarget++) {
          ts.add(target(nextTarget));
        }
        engine.setCollectors(cs);
        engine.setTargets(ts);
        int collectorChanges = 0;
        int continuedChanges = 0;
        int targetReplacements = 0;
        for (int step = 0; step < 50; step++) {
          int what = random.nextInt(5);
          int before = trace.continued();
          if (what == 0) {
            for (int j = 1 + random.nextInt(40); j > 0; j--) {
              ts.remove(random.nextInt(ts.size()));
              ts.add(target(nextTarget++));
            }
            engine.setTargets(new ArrayList<>(ts));
            targetReplacements++;
          } else if (what == 1) {
            // Some targets move to another node (their pods rescheduled, same address).
            for (int j = 1 + random.nextInt(20); j > 0; j--) {
              int k = random.nextInt(ts.size());
              Target t = ts.get(k);
              String instance = t.labels().get("instance");
              int i = Integer.parseInt(instance.substring(2));
              ts.set(k, target(i, random.nextInt(60)));
            }
            engine.setTargets(new ArrayList<>(ts));
          } else if (what == 2 && cs.size() > 5) {
            Collector gone = cs.remove(random.nextInt(cs.size()));
            off.add(nodeOf(gone));
            engine.setCollectors(new ArrayList<>(cs));
            collectorChanges++;
            continuedChanges += trace.continued() > before ? 1 : 0;
          } else if (what == 3 && !off.isEmpty()) {
            int node = off.remove(random.nextInt(off.size()));
            cs.add(Collector.of("joined-" + step, "node-" + node, "zone-" + (node % 3)));
            engine.setCollectors(new ArrayList<>(cs));
            collectorChanges++;
            continuedChanges += trace.continued() > before ? 1 : 0;
          } else if (!off.isEmpty()) {
            // A collector moves to a free node, in another zone (same name): a removal from one
            // zone's partition and an addition to another's in one call.
            int k = random.nextInt(cs.size());
            int from = nodeOf(cs.get(k));
            int to = off.remove(random.nextInt(off.size()));
            cs.set(k, Collector.of(cs.get(k).name(), "node-" + to, "zone-" + (to % 3)));
            off.add(from);
            engine.setCollectors(new ArrayList<>(cs));
          }
          Engine fresh = trace.fresh(perNode, maxSkew, cs, ts);
          Fixtures.assertSamePlacement(fresh.snapshot(), engine.snapshot(), ts,
              "seed " + seed + " step " + step + " (change " + what + ")");
        }
        assertEquals(0, trace.abandoned(), "seed " + seed);
        if (!perNode) {
          // Collector changes in a row keep every target's partition: most take the short way.
          assertTrue(trace.partitions(KEPT_GROUPS) > 0,
              "seed " + seed + ": no collector change kept the groups");
          // With no per-collector limit, each of them found what lost its owner among the
          // change's orphans, without reading the view's 1500 owners.
          assertEquals(trace.partitions(KEPT_GROUPS), trace.partitions(FROM_ORPHANS),
              "seed " + seed);
        }
        if (!perNode && Double.isNaN(maxSkew)) {
          // Targets replaced (none relabeled, every zone with collectors, no skew limit): each
          // such call looked up the new targets' zones only and kept every other target's group;
          // so did the first placement, onto collectors set before.
          assertTrue(targetReplacements > 0, "seed " + seed);
          assertEquals(targetReplacements + 1, trace.partitions(IN_PLACE), "seed " + seed);
        } else if (perNode) {
          // per-node's pool view does not say what was relabeled: the full reconcile, always.
          assertEquals(0, trace.partitions(IN_PLACE), "seed " + seed);
        }
        // The cluster-wide group has every collector unless a partition spilled: it takes the
        // engine's change as it is.
        assertTrue(trace.partitions(FROM_CHANGE) > 0,
            "seed " + seed + ": no collector change was taken from the engine's change");
        assertTrue(continuedChanges * 2 >= collectorChanges,
            "seed " + seed + ": the partitions continued their matching in " + continuedChanges
                + " of " + collectorChanges + " collector additions and removals");
      }
    }
  }

  /**
   * per-node with a collector on every node that has targets: its pool is empty, and collector
   * changes that leave it empty (collectors on nodes without targets coming, going, moving) are
   * not reconciled. The first change that fills the pool (a collector on a node with targets
   * leaves) must place it as a fresh engine does, its partitions' members being everything the
   * skipped changes made them; and so must every step after.
   */
  @org.junit.jupiter.api.Test
  void collectorChangesWhileThePoolIsEmptyAreSeenWhenItFills() {
    for (long seed = 1; seed <= 6; seed++) {
      try (Trace trace = new Trace()) {
        Random random = new Random(seed);
        Built built = build(true, Double.NaN);
        Engine engine = built.engine();
        List<Collector> cs = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
          cs.add(collector(i));
        }
        List<Target> ts = new ArrayList<>();
        for (int i = 0; i < 1500; i++) {
          // Every target on a node with a collector: no pool.
          ts.add(Target.of("job-" + (i % 5), "10.1." + ((i >> 8) & 255) + "." + (i & 255)
              + ":9100", Map.of("instance", "i-" + i, NODE, "node-" + (i % 30))));
        }
        engine.setCollectors(cs);
        engine.setTargets(ts);
        int spare = 30;
        for (int step = 0; step < 40; step++) {
          // The first steps keep the pool empty; then collectors on nodes with targets come and go.
          int what = step < 12 ? new int[] {0, 1, 3}[random.nextInt(3)] : random.nextInt(4);
          if (what == 0) {
            // A collector on a node without targets joins (the pool stays as it is).
            cs.add(collector(spare++ % 30 + 30));
          } else if (what == 1) {
            // A collector on a node without targets leaves, if there is one.
            for (int k = 0; k < cs.size(); k++) {
              if (nodeOf(cs.get(k)) >= 30) {
                cs.remove(k);
                break;
              }
            }
          } else if (what == 2) {
            // A collector on a node with targets leaves (they go to the pool) or comes back.
            int node = random.nextInt(30);
            boolean present = cs.stream().anyMatch(c -> nodeOf(c) == node);
            if (present) {
              cs.removeIf(c -> nodeOf(c) == node);
            } else {
              cs.add(collector(node));
            }
          } else {
            // A collector without targets changes its capacity.
            for (int k = 0; k < cs.size(); k++) {
              if (nodeOf(cs.get(k)) >= 30) {
                cs.set(k, cs.get(k).withCapacity(1 + random.nextInt(3)));
                break;
              }
            }
          }
          java.util.Collections.sort(cs, java.util.Comparator.comparing(Collector::name));
          engine.setCollectors(new ArrayList<>(cs));
          Engine fresh = trace.fresh(true, Double.NaN, cs, ts);
          Fixtures.assertSamePlacement(fresh.snapshot(), engine.snapshot(), ts,
              "seed " + seed + " step " + step + " (change " + what + ")");
        }
        assertTrue(trace.partitions(EMPTY_SKIP) > 0, "seed " + seed + ": no change skipped");
      }
    }
  }

  /**
   * Zone-aware consistent-hashing with one zone (zone-2) that has no collector: its targets are
   * placed cluster-wide and counted outside their partition. Replacing targets keeps every other
   * target's group in place unless a new target is in zone-2 (then the full reconcile counts and
   * logs it); a removed zone-2 target is uncounted either way. Every step: the placement and the
   * count a fresh engine gives.
   */
  @org.junit.jupiter.api.Test
  void targetChangesInPlaceCountWhatIsOutsideItsPartitionAsAFreshEngine() {
    int homelessSteps = 0;
    for (long seed = 1; seed <= 6; seed++) {
      try (Trace trace = new Trace()) {
        Random random = new Random(seed * 31);
        Built built = build(false, Double.NaN);
        Engine engine = built.engine();
        List<Collector> cs = new ArrayList<>();
        for (int i = 0; i < 45; i++) {
          if (i % 3 != 2) {
            cs.add(collector(i));
          }
        }
        List<Target> ts = new ArrayList<>();
        int next = 0;
        for (; next < 1500; next++) {
          ts.add(target(next));
        }
        engine.setCollectors(cs);
        engine.setTargets(ts);
        assertTrue(engine.snapshot().outsidePartition() > 0, "seed " + seed);
        int inPlace = 0;
        for (int step = 0; step < 40; step++) {
          boolean intoZone2 = random.nextInt(4) == 0;
          int before = trace.partitions(IN_PLACE);
          // A new zone-2 target (one with a node label: one in twenty has none) goes the full way.
          boolean homelessAdded = false;
          for (int j = 1 + random.nextInt(30); j > 0; j--) {
            ts.remove(random.nextInt(ts.size()));
            // On a node of zone 0 or 1, unless this step brings a target into zone 2.
            int node = 3 * random.nextInt(20) + (intoZone2 && j == 1 ? 2 : random.nextInt(2));
            Target t = target(next++, node);
            homelessAdded |= node % 3 == 2 && t.labels().containsKey(NODE);
            ts.add(t);
          }
          engine.setTargets(new ArrayList<>(ts));
          boolean took = trace.partitions(IN_PLACE) > before;
          Engine fresh = trace.fresh(false, Double.NaN, cs, ts);
          String at = "seed " + seed + " step " + step;
          Fixtures.assertSamePlacement(fresh.snapshot(), engine.snapshot(), ts, at);
          assertEquals(fresh.snapshot().outsidePartition(), engine.snapshot().outsidePartition(),
              at);
          if (!intoZone2) {
            assertTrue(took,
                at + ": targets replaced within zones 0 and 1 took the full reconcile");
          } else if (homelessAdded) {
            assertFalse(took, at + ": a new target outside its partition was changed in place");
            homelessSteps++;
          }
          inPlace += took ? 1 : 0;
        }
        assertTrue(inPlace > 20, "seed " + seed + ": " + inPlace + " of 40 in place");
      }
    }
    assertTrue(homelessSteps > 0, "no step brought a target outside its partition");
  }
}
