package dev.apportion.allocation.internal;

import static dev.apportion.allocation.internal.Fixtures.assertComplete;
import static dev.apportion.allocation.internal.Fixtures.assignment;
import static dev.apportion.allocation.internal.Fixtures.collectors;
import static dev.apportion.allocation.internal.Fixtures.targets;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRing;
import dev.apportion.allocation.ring.HashRings;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RendezvousTest extends AllocatorContractTest {
  @Override
  Allocators.Builder builder() {
    return Allocators.builder("rendezvous");
  }

  @Test
  void placementIsTheRendezvousRingsOwner() {
    Allocator a = builder().build();
    List<Target> ts = targets(2000, 3);
    a.setCollectors(collectors(17));
    a.setTargets(ts);
    List<String> names = new ArrayList<>();
    collectors(17).forEach(c -> names.add(c.name()));
    HashRing ring = HashRings.rendezvous(names);
    for (Target t : ts) {
      assertEquals(ring.owner(t.hash()), a.snapshot().collectorOf(t).orElseThrow());
    }
  }

  @Test
  void removingACollectorMovesExactlyItsTargets() {
    Allocator a = builder().build();
    List<Target> ts = targets(10_000, 5);
    a.setCollectors(collectors(16));
    a.setTargets(ts);
    Map<Target, String> before = assignment(a.snapshot());
    List<Collector> less = new ArrayList<>(collectors(16));
    less.remove(7);
    a.setCollectors(less);
    assertComplete(a, ts);
    Map<Target, String> after = assignment(a.snapshot());
    for (Target t : ts) {
      if (before.get(t).equals("collector-7")) {
        assertEquals(true, !after.get(t).equals("collector-7"));
      } else {
        assertEquals(before.get(t), after.get(t), "a survivor's target moved");
      }
    }
  }

  @Test
  void addingACollectorMovesOnlyTheTargetsItNowWins() {
    Allocator a = builder().build();
    List<Target> ts = targets(10_000, 5);
    a.setCollectors(collectors(15));
    a.setTargets(ts);
    Map<Target, String> before = assignment(a.snapshot());
    a.setCollectors(collectors(16));
    Map<Target, String> after = assignment(a.snapshot());
    int moved = 0;
    for (Target t : ts) {
      if (!before.get(t).equals(after.get(t))) {
        assertEquals("collector-15", after.get(t), "moved, but not to the new collector");
        moved++;
      }
    }
    assertEquals(a.snapshot().targetCount("collector-15"), moved);
  }
}
