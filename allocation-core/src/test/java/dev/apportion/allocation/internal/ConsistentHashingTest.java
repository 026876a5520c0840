package dev.apportion.allocation.internal;

import static dev.apportion.allocation.internal.Fixtures.assertComplete;
import static dev.apportion.allocation.internal.Fixtures.assignment;
import static dev.apportion.allocation.internal.Fixtures.collectors;
import static dev.apportion.allocation.internal.Fixtures.moved;
import static dev.apportion.allocation.internal.Fixtures.targets;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.spi.AllocatorSpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

public class ConsistentHashingTest extends AllocatorContractTest {
  @Override
  Allocators.Builder builder() {
    return Allocators.builder("consistent-hashing");
  }

  private static void assertBalanced(Allocation a, int targets, double loadFactor) {
    int c = a.collectors().size();
    int cap = (int) Math.ceil(loadFactor * targets / c);
    for (Collector col : a.collectors()) {
      int n = a.targetCount(col.name());
      assertTrue(n <= cap, col + " holds " + n + " > cap " + cap);
      assertTrue(n > 0, col + " is empty");
    }
  }

  /**
   * After a placement of more than 65,536 targets the matching lets go of its sort keys; the
   * changes that follow continue it (their probe rounds allocate keys again) and must place
   * exactly what a fresh allocator places for the same sets: a small change of targets, a
   * removal and an addition of a collector. A tight load factor, so that round 1 rejects
   * targets and the probe rounds run.
   */
  @Test
  void changesAfterALargePlacementPlaceWhatAFreshAllocatorDoes() {
    List<Target> targets = targets(70_000, 7);
    List<Collector> collectors = collectors(40);
    Allocator a = builder().loadFactor(1.01).build();
    a.setCollectors(collectors);
    a.setTargets(targets);
    List<Target> changed = new java.util.ArrayList<>(targets);
    for (int i = 0; i < 50; i++) {
      Target old = changed.get(i * 997);
      changed.set(i * 997, Target.of(old.job(), "replaced-" + i + ":80", old.labels()));
    }
    List<Collector> fewer = collectors.subList(1, collectors.size());
    List<Collector> more = new java.util.ArrayList<>(collectors);
    more.add(Collector.of("collector-joined"));
    String[] steps = {"targets", "removal", "addition"};
    List<List<Collector>> sets = List.of(collectors, fewer, more);
    for (int step = 0; step < steps.length; step++) {
      if (step == 0) {
        a.setTargets(changed);
      } else {
        a.setCollectors(sets.get(step));
      }
      Allocator fresh = builder().loadFactor(1.01).build();
      fresh.setCollectors(sets.get(step));
      fresh.setTargets(changed);
      assertEquals(assignment(fresh.snapshot()), assignment(a.snapshot()), steps[step]);
    }
  }

  /** Movement bounds at one shape: grow by one, then shrink by one. */
  private void assertMovement(int targets, int from) {
    Allocator a = builder().build();
    List<Target> ts = targets(targets, 10);
    a.setTargets(ts);
    a.setCollectors(collectors(from));
    assertBalanced(a.snapshot(), targets, AllocatorSpec.DEFAULT_LOAD_FACTOR);
    Map<Target, String> before = assignment(a.snapshot());

    a.setCollectors(collectors(from + 1));
    assertComplete(a, ts);
    assertBalanced(a.snapshot(), targets, AllocatorSpec.DEFAULT_LOAD_FACTOR);
    Map<Target, String> grown = assignment(a.snapshot());
    int minimum = targets / (from + 1);
    int moved = moved(before, grown);
    assertTrue(moved <= 1.5 * minimum, "adding one moved " + moved + ", minimum " + minimum);

    String victim = "collector-3";
    int share = a.snapshot().targetCount(victim);
    List<Collector> less = new java.util.ArrayList<>(collectors(from + 1));
    less.removeIf(c -> c.name().equals(victim));
    a.setCollectors(less);
    assertComplete(a, ts);
    assertBalanced(a.snapshot(), targets, AllocatorSpec.DEFAULT_LOAD_FACTOR);
    moved = moved(grown, assignment(a.snapshot()));
    assertTrue(moved <= 1.5 * share, "removing one moved " + moved + ", its share " + share);
  }

  @Test
  void tenThousandTargetsOnFifteenToSixteenCollectors() {
    assertMovement(10_000, 15);
  }

  @Test
  void theLoadFactorIsABuilderOption() {
    Allocator a = builder().loadFactor(1.02).build();
    List<Target> ts = targets(5000, 3);
    a.setCollectors(collectors(20));
    a.setTargets(ts);
    assertBalanced(a.snapshot(), 5000, 1.02);
    assertThrows(IllegalArgumentException.class, () -> builder().loadFactor(1.0));
    assertThrows(IllegalArgumentException.class, () -> builder().loadFactor(0.5));
  }

  @Test
  void itIsTheDefaultStrategy() {
    assertEquals("consistent-hashing", Allocators.DEFAULT_STRATEGY);
    assertThrows(IllegalArgumentException.class, () -> builder().fallback("rendezvous"));
  }

  @Test
  void oneCollectorTakesEverything() {
    Allocator a = builder().build();
    List<Target> ts = targets(100, 2);
    a.setTargets(ts);
    a.setCollectors(List.of(Collector.of("only")));
    assertEquals(100, a.snapshot().targetCount("only"));
    assertEquals(Map.of(), Map.of());
  }
}
