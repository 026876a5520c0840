package dev.apportion.allocation.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.engine.NodeZones;
import dev.apportion.allocation.internal.partition.PartitionKey;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link NodeZones#version()}: it moves exactly when some node resolves to another zone, which is
 * what lets the partitioned placer keep every target's zone across a collector change.
 */
class NodeZonesTest {

  private static Members members(Collector... collectors) {
    Collector[] sorted = collectors.clone();
    Arrays.sort(sorted, Comparator.comparing(Collector::name));
    Member[] ms = new Member[sorted.length];
    for (int i = 0; i < ms.length; i++) {
      ms[i] = new Member(sorted[i], i);
    }
    return new Members(ms);
  }

  @Test
  void versionMovesOnlyWhenANodeResolvesToAnotherZone() {
    NodeZones zones = new NodeZones();
    zones.use();
    long v = zones.version();
    zones.learn(members(Collector.of("a", "n1", "z1"), Collector.of("b", "n2", "z2")));
    assertNotEquals(v, zones.version(), "two nodes gained a zone");
    assertEquals("z1", zones.zoneOfNode("n1"));

    v = zones.version();
    zones.learn(members(Collector.of("a", "n1", "z1")));
    assertEquals(v, zones.version(), "n2's zone is remembered after its collector left");
    assertEquals("z2", zones.zoneOfNode("n2"));

    zones.learn(members(Collector.of("a", "n1", "z1"), Collector.of("b", "n2", "z2")));
    assertEquals(v, zones.version(), "n2 came back in the zone it was remembered in");

    zones.learn(members(Collector.of("a", "n1", "z1"), Collector.of("c", "n1", "z1"),
        Collector.of("b", "n2", "z2")));
    assertEquals(v, zones.version(), "a second collector on n1, same zone");

    zones.learn(members(Collector.of("a", "n1", "z1"), Collector.of("b", "n2", "z3")));
    assertNotEquals(v, zones.version(), "n2's collector says another zone now");
    assertEquals("z3", zones.zoneOfNode("n2"));

    v = zones.version();
    zones.learn(members(Collector.of("a", "n1", "z1"), Collector.of("b", "n2", "z3"),
        Collector.of("d", "n3")));
    assertEquals(v, zones.version(), "a collector without a zone resolves no node");
    assertEquals(null, zones.zoneOfNode("n3"));
  }

  /**
   * A removal's shortcut ({@code onlyRemovals}): the same zones and version as learning the
   * remaining members in full, with or without zones before.
   */
  @Test
  void aRemovalLearnsWhatTheFullPassLearns() {
    Collector[][] sets = {
      {Collector.of("a", "n1"), Collector.of("b", "n2"), Collector.of("c")},
      {Collector.of("a", "n1", "z1"), Collector.of("b", "n2", "z2"), Collector.of("c", "n2")},
      {Collector.of("a", "n1"), Collector.of("b", "n2", "z2")},
    };
    for (Collector[] all : sets) {
      for (int drop = 0; drop < all.length; drop++) {
        Collector[] rest = new Collector[all.length - 1];
        for (int i = 0, w = 0; i < all.length; i++) {
          if (i != drop) {
            rest[w++] = all[i];
          }
        }
        NodeZones full = new NodeZones();
        NodeZones shortcut = new NodeZones();
        full.use();
        shortcut.use();
        full.learn(members(all));
        shortcut.learn(members(all));
        full.learn(members(rest), false);
        shortcut.learn(members(rest), true);
        assertEquals(full.version(), shortcut.version(), Arrays.toString(rest));
        for (String node : new String[] {"n1", "n2", "n3", null}) {
          assertEquals(full.zoneOfNode(node), shortcut.zoneOfNode(node), node);
        }
      }
    }
  }

  @Test
  void zonesNoKeyReadsAreNotLearned() {
    NodeZones zones = new NodeZones();
    zones.learn(members(Collector.of("a", "n1", "z1")));
    assertEquals(null, zones.zoneOfNode("n1"));
    PartitionKey.of(dev.apportion.allocation.Allocators.ZONE, zones);
    zones.learn(members(Collector.of("a", "n1", "z1")));
    assertEquals("z1", zones.zoneOfNode("n1"));
  }

  @Test
  void versionMovesWhenTheSuppliedTopologyChanges() {
    NodeZones zones = new NodeZones();
    long v = zones.version();
    zones.supply(Map.of("n1", "z1"));
    assertNotEquals(v, zones.version());
    v = zones.version();
    zones.supply(Map.of("n1", "z1"));
    assertEquals(v, zones.version(), "the same topology again");
    zones.supply(Map.of("n1", "z2"));
    assertNotEquals(v, zones.version());
  }
}
