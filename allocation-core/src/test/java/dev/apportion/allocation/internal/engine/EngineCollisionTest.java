package dev.apportion.allocation.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Identity-hash collisions must not lose targets. The engine's slot table is keyed by
 * {@code hash() & keyMask}; a narrow mask makes many distinct targets share a key (a mask of 0
 * makes them all share one), which is what two targets with equal identity hashes look like to
 * the table. Every engine, whatever its mask, must keep and place every target, carry relabels,
 * drop exactly the removed ones and report the same moves as an engine without collisions.
 */
class EngineCollisionTest {

  private static Engine engine(long keyMask, List<AllocationChange> heard) {
    return TestEngines.keyedBy(new EngineTestPlacer(), List.of(heard::add), keyMask, true);
  }

  private static Target target(int id, int version) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("pod", "p-" + id);
    labels.put("__meta_kubernetes_pod_annotation_v", "v" + version);
    return Target.of("job-" + (id % 3), "10.0.0." + id + ":80", labels);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, 1L, 0xFL})
  void collidingKeysKeepAndPlaceEveryTarget(long keyMask) {
    for (long seed = 1; seed <= 15; seed++) {
      Random random = new Random(seed);
      List<AllocationChange> heardPlain = new ArrayList<>();
      List<AllocationChange> heardColliding = new ArrayList<>();
      Engine plain = engine(-1L, heardPlain);
      Engine colliding = engine(keyMask, heardColliding);
      Map<Integer, Integer> versions = new LinkedHashMap<>();
      List<Collector> collectors = new ArrayList<>();
      for (int op = 0; op < 60; op++) {
        if (random.nextInt(4) == 0) {
          collectors.clear();
          int n = 1 + random.nextInt(5);
          for (int i = 0; i < n; i++) {
            collectors.add(Collector.of("c-" + random.nextInt(8) + "-" + i));
          }
          plain.setCollectors(collectors);
          colliding.setCollectors(collectors);
        } else {
          int changes = 1 + random.nextInt(20);
          for (int i = 0; i < changes; i++) {
            int id = random.nextInt(120);
            switch (random.nextInt(3)) {
              case 0 -> versions.remove(id);
              case 1 -> versions.merge(id, 1, Integer::sum);
              default -> versions.putIfAbsent(id, 0);
            }
          }
          List<Target> given = new ArrayList<>();
          versions.forEach((id, v) -> given.add(target(id, v)));
          Collections.shuffle(given, random);
          plain.setTargets(given);
          colliding.setTargets(given);
          Allocation a = colliding.snapshot();
          assertEquals(versions.size(), a.targets().size(), "seed " + seed);
          for (Target t : given) {
            assertTrue(a.targets().contains(t), "seed " + seed + ": lost " + t);
          }
        }
        assertSameAllocation(plain.snapshot(), colliding.snapshot(), "seed " + seed + " op " + op);
        assertEquals(moves(heardPlain), moves(heardColliding), "seed " + seed + " op " + op);
        assertEquals(relabeled(heardPlain), relabeled(heardColliding), "seed " + seed);
      }
    }
  }

  private static List<String> moves(List<AllocationChange> heard) {
    List<String> out = new ArrayList<>();
    for (AllocationChange c : heard) {
      for (Move m : c.moves()) {
        out.add(m + " " + m.target().labels());
      }
      out.add("|");
    }
    return out;
  }

  private static List<String> relabeled(List<AllocationChange> heard) {
    List<String> out = new ArrayList<>();
    for (AllocationChange c : heard) {
      for (Target t : c.relabeled()) {
        out.add(t + " " + t.labels());
      }
    }
    return out;
  }

  static void assertSameAllocation(Allocation expected, Allocation actual, String where) {
    assertEquals(expected.collectors(), actual.collectors(), where);
    assertEquals(new ArrayList<>(expected.targets()), new ArrayList<>(actual.targets()), where);
    assertEquals(new ArrayList<>(expected.unassigned()), new ArrayList<>(actual.unassigned()),
        where);
    for (Target t : expected.targets()) {
      assertEquals(expected.collectorOf(t), actual.collectorOf(t), where);
    }
    for (Collector c : expected.collectors()) {
      assertEquals(expected.jobsFor(c.name()), actual.jobsFor(c.name()), where);
      assertEquals(expected.targetCount(c.name()), actual.targetCount(c.name()), where);
      for (String job : expected.jobsFor(c.name())) {
        List<Target> e = expected.targetsFor(c.name(), job);
        List<Target> a = actual.targetsFor(c.name(), job);
        assertEquals(e, a, where);
        for (int i = 0; i < e.size(); i++) {
          assertEquals(e.get(i).labels(), a.get(i).labels(), where + ": labels carried");
        }
      }
    }
  }
}
