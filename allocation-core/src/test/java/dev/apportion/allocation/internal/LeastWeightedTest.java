package dev.apportion.allocation.internal;

import static dev.apportion.allocation.internal.Fixtures.assertComplete;
import static dev.apportion.allocation.internal.Fixtures.assignment;
import static dev.apportion.allocation.internal.Fixtures.collectors;
import static dev.apportion.allocation.internal.Fixtures.targets;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LeastWeightedTest extends AllocatorContractTest {
  @Override
  Allocators.Builder builder() {
    return Allocators.builder("least-weighted");
  }

  @Override
  boolean deterministic() {
    return false;
  }

  @Test
  void threeJobsOfAHundredOnFiveCollectorsGiveTwentyPerJobEach() {
    Allocator a = builder().build();
    a.setCollectors(collectors(5));
    a.setTargets(targets(300, 3));
    for (Collector c : a.snapshot().collectors()) {
      for (int j = 0; j < 3; j++) {
        int n = a.targetsFor(c.name(), "job-" + j).size();
        assertTrue(n >= 18 && n <= 22, c + " has " + n + " of job-" + j);
      }
    }
  }

  @Test
  void aNewCollectorReceivesNoExistingTarget() {
    Allocator a = builder().build();
    List<Target> ts = targets(1000, 3);
    a.setCollectors(collectors(5));
    a.setTargets(ts);
    Map<Target, String> before = assignment(a.snapshot());
    a.setCollectors(collectors(6));
    assertEquals(before, assignment(a.snapshot()));
    assertEquals(0, a.snapshot().targetCount("collector-5"));
    List<Target> more = new ArrayList<>(ts);
    more.addAll(targets(1100, 3).subList(1000, 1100));
    a.setTargets(more);
    assertEquals(100, a.snapshot().targetCount("collector-5"), "new targets fill it first");
  }

  @Test
  void removingACollectorMovesOnlyItsTargetsToTheLeastLoaded() {
    Allocator a = builder().build();
    List<Target> ts = targets(1000, 3);
    a.setCollectors(collectors(5));
    a.setTargets(ts);
    Map<Target, String> before = assignment(a.snapshot());
    List<Collector> less = new ArrayList<>(collectors(5));
    less.remove(2);
    a.setCollectors(less);
    assertComplete(a, ts);
    Map<Target, String> after = assignment(a.snapshot());
    for (Target t : ts) {
      if (!before.get(t).equals("collector-2")) {
        assertEquals(before.get(t), after.get(t));
      }
    }
    for (Collector c : a.snapshot().collectors()) {
      assertEquals(250, a.snapshot().targetCount(c.name()));
    }
  }

  @Test
  void tiesGoToTheSmallerName() {
    Allocator a = builder().build();
    a.setCollectors(List.of(Collector.of("b"), Collector.of("a")));
    Target t = Target.of("j", "h:1");
    a.setTargets(List.of(t));
    assertEquals("a", a.snapshot().collectorOf(t).orElseThrow());
  }
}
