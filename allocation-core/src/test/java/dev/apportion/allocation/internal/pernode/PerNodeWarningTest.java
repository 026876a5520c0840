package dev.apportion.allocation.internal.pernode;

import static dev.apportion.allocation.internal.Fixtures.collectors;
import static dev.apportion.allocation.internal.Fixtures.nodeTargets;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.LogCapture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * per-node without a fallback warns once per allocator instance, however often it leaves targets
 * unassigned.
 */
class PerNodeWarningTest {
  private static final String NO_FALLBACK = "per-node runs with no fallback strategy";

  private LogCapture log;

  @BeforeEach
  void capture() {
    log = LogCapture.of(PerNodePlacer.class);
  }

  @AfterEach
  void release() {
    log.close();
  }

  private List<String> warnings() {
    return log.messages(Level.WARN, NO_FALLBACK);
  }

  /** Many calls that each leave targets unassigned: collectors on nodes 0-2, targets on 0-5. */
  private static void churn(Allocator a) {
    a.setCollectors(collectors(3));
    for (int round = 0; round < 5; round++) {
      List<Target> ts = new ArrayList<>(nodeTargets(6, 4 + round));
      ts.add(Target.of("static", "10.9.9." + round + ":80", Map.of()));
      a.setTargets(ts);
      assertTrue(a.snapshot().unassigned().size() >= 3 * 4 + 1, "targets are left unassigned");
      a.setCollectors(round % 2 == 0 ? collectors(2) : collectors(3));
      assertTrue(a.snapshot().unassigned().size() > 0, "targets are left unassigned");
    }
  }

  @Test
  void warnsOncePerAllocatorInstanceWithTheCountAndTheWayOut() {
    Allocator first = Allocators.builder("per-node").noFallback().build();
    churn(first);
    List<String> once = warnings();
    assertEquals(1, once.size(), () -> "one warning for ten unassigning calls: " + once);
    // The first call to leave targets unassigned: 3 nodes of 4 targets with no collector, plus
    // the target with no node.
    assertTrue(once.get(0).contains(": 13 target(s) with no node"), once.get(0));
    assertTrue(once.get(0).contains("fallback(\"...\")"), once.get(0));
    assertTrue(once.get(0).contains("once per allocator"), once.get(0));

    Allocator second = Allocators.builder("per-node").fallback("").build();
    churn(second);
    assertEquals(2, warnings().size(), "a second allocator warns once too");
    churn(first);
    churn(second);
    assertEquals(2, warnings().size(), "and neither warns again");
  }

  @Test
  void withAFallbackNothingIsUnassignedAndNothingIsLogged() {
    Allocator a = Allocators.builder("per-node").build();
    a.setCollectors(collectors(3));
    a.setTargets(nodeTargets(6, 4));
    assertEquals(0, a.snapshot().unassigned().size());
    assertEquals(List.of(), warnings());
  }

  @Test
  void withoutAFallbackButWithACollectorOnEveryNodeNothingIsLogged() {
    Allocator a = Allocators.builder("per-node").noFallback().build();
    a.setCollectors(collectors(6));
    a.setTargets(nodeTargets(6, 4));
    assertEquals(0, a.snapshot().unassigned().size());
    assertEquals(List.of(), warnings());
  }
}
