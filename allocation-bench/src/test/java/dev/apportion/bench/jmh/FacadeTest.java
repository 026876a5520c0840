package dev.apportion.bench.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.bench.Placement;
import dev.apportion.bench.sim.Cluster;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The benchmarks' facades do what they claim, so that the figures compare like with like: every
 * ring answers with a member, the named-member rings move only the removed member's keys, and
 * every contender places every target exactly once and counts its moves.
 */
class FacadeTest {
  private static final Cluster CLUSTER = Shapes.cluster(3_000, 40);

  private static List<String> names(List<Collector> collectors) {
    List<String> names = new ArrayList<>();
    for (Collector c : collectors) {
      names.add(c.name());
    }
    return names;
  }

  private static Map<Target, String> owners(NamedRing ring) {
    Map<Target, String> owners = new HashMap<>();
    for (Target t : CLUSTER.targets()) {
      owners.put(t, ring.owner(t));
    }
    return owners;
  }

  @Test
  void everyRingAnswersWithAMemberAndUsesThemAll() {
    Set<String> members = new HashSet<>(names(CLUSTER.collectors()));
    for (NamedRing.Type type : NamedRing.Type.values()) {
      Map<Target, String> owners = owners(type.create(members));
      assertTrue(members.containsAll(owners.values()), type.name());
      assertEquals(members, new HashSet<>(owners.values()), type + " uses every member");
    }
  }

  @Test
  void namedMemberRingsMoveOnlyTheRemovedMembersKeys() {
    List<String> members = names(CLUSTER.collectors());
    String victim = members.get(members.size() / 2);
    for (NamedRing.Type type : NamedRing.Type.values()) {
      NamedRing ring = type.create(members);
      Map<Target, String> before = owners(ring);
      ring.remove(victim);
      Map<Target, String> after = owners(ring);
      int moved = 0;
      int held = 0;
      for (Target t : CLUSTER.targets()) {
        assertNotEquals(victim, after.get(t), type + ": nothing stays on the removed member");
        if (before.get(t).equals(victim)) {
          held++;
        }
        if (!before.get(t).equals(after.get(t))) {
          moved++;
        }
      }
      if (type == NamedRing.Type.GUAVA_JUMP) {
        assertTrue(moved > 5 * held, "jump hash cannot remove a named member: " + moved
            + " moved for " + held + " held");
      } else {
        assertEquals(held, moved, type + " moves only the removed member's keys");
      }
      ring.add(victim);
      if (type != NamedRing.Type.HASH4J_ANCHOR) {
        assertEquals(before, owners(ring), type + ": re-adding restores the placement");
      }
    }
  }

  @Test
  void everyContenderPlacesEveryTargetOnceAndCountsMoves() {
    List<String> jobs = CLUSTER.targets().stream().map(Target::job).distinct().toList();
    List<Collector> fewer = new ArrayList<>(CLUSTER.collectors());
    Collector gone = fewer.remove(7);
    for (Contender contender : Contender.values()) {
      Placement p = contender.create();
      p.setCollectors(CLUSTER.collectors());
      p.setTargets(CLUSTER.targets());
      assertEquals(0, p.lastMoved(), contender + ": a first placement moves nothing");
      Map<Target, String> before = listed(p, CLUSTER.collectors(), jobs);
      assertEquals(CLUSTER.targets().size(), before.size(), contender + " places every target");
      int held = (int) before.values().stream().filter(gone.name()::equals).count();

      p.setCollectors(fewer);
      Map<Target, String> after = listed(p, fewer, jobs);
      assertEquals(CLUSTER.targets().size(), after.size(), contender + " after a removal");
      int moved = 0;
      for (Target t : CLUSTER.targets()) {
        if (!before.get(t).equals(after.get(t))) {
          moved++;
        }
      }
      assertEquals(moved, p.lastMoved(), contender + " reports what moved");
      assertTrue(moved >= held, contender + ": the removed collector's targets moved");
    }
  }

  @Test
  void anEqualNewlyBuiltTargetSetMovesNothing() {
    List<String> jobs = CLUSTER.targets().stream().map(Target::job).distinct().toList();
    List<Target> rebuilt = PlacementHarness.rebuilt(CLUSTER.targets());
    for (int i = 0; i < rebuilt.size(); i++) {
      assertNotSame(CLUSTER.targets().get(i), rebuilt.get(i));
      assertTrue(rebuilt.get(i).sameLabels(CLUSTER.targets().get(i)));
    }
    for (Contender contender : Contender.values()) {
      Placement p = contender.create();
      p.setCollectors(CLUSTER.collectors());
      p.setTargets(CLUSTER.targets());
      Map<Target, String> before = listed(p, CLUSTER.collectors(), jobs);
      p.setTargets(rebuilt);
      assertEquals(0, p.lastMoved(), contender + " moves nothing");
      assertEquals(before, listed(p, CLUSTER.collectors(), jobs), contender.name());
    }
  }

  private static Map<Target, String> listed(Placement p, List<Collector> collectors,
      List<String> jobs) {
    Map<Target, String> owners = new HashMap<>();
    for (Collector c : collectors) {
      for (String job : jobs) {
        for (Target t : p.targetsFor(c.name(), job)) {
          String previous = owners.put(t, c.name());
          assertEquals(null, previous, t + " listed twice");
        }
      }
    }
    return owners;
  }
}
