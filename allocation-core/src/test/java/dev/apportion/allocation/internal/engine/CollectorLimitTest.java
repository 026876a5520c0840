package dev.apportion.allocation.internal.engine;

import static dev.apportion.allocation.internal.Fixtures.assertComplete;
import static dev.apportion.allocation.internal.Fixtures.assignment;
import static dev.apportion.allocation.internal.Fixtures.collectors;
import static dev.apportion.allocation.internal.Fixtures.targets;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.LogCapture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The per-collector limit: every strategy, counts only. */
class CollectorLimitTest {
  private static final String FITS_NOWHERE = "fit on no collector under the per-collector limit";
  private static final String FITS_AGAIN = "every target fits under the per-collector limit";

  private LogCapture log;

  @BeforeEach
  void capture() {
    log = LogCapture.of(Engine.class);
  }

  @AfterEach
  void release() {
    log.close();
  }

  private static void assertWithinLimits(Allocation a, int maxTargets, long maxCost) {
    for (Collector c : a.collectors()) {
      int n = a.targetCount(c.name());
      assertTrue(n <= Math.max(1, (int) Math.floor(maxTargets * c.capacity())),
          () -> c + " holds " + n);
      long cost = a.costOf(c.name());
      assertTrue(n <= 1 || cost <= (long) Math.floor(maxCost * c.capacity()),
          () -> c + " holds cost " + cost);
    }
  }

  @Test
  void targetsBeyondEveryCollectorsLimitStayUnassignedAndAreLoggedOncePerEpisode() {
    for (String s : Allocators.strategies()) {
      int warned0 = log.messages(Level.WARN, FITS_NOWHERE).size();
      int info0 = log.messages(Level.INFO, FITS_AGAIN).size();
      Allocator a = Allocators.builder(s).maxTargetsPerCollector(10).build();
      List<Target> ts = targets(45, 3);
      a.setCollectors(collectors(4));
      a.setTargets(ts);
      assertComplete(a, ts);
      assertWithinLimits(a.snapshot(), 10, Long.MAX_VALUE);
      assertEquals(5, a.snapshot().unassigned().size(), s);
      a.setTargets(ts);
      a.setTargets(targets(46, 3));
      assertEquals(6, a.snapshot().unassigned().size(), s);
      List<String> all = log.messages(Level.WARN, FITS_NOWHERE);
      List<String> warned = all.subList(warned0, all.size());
      assertEquals(1, warned.size(), s + ": once per episode: " + warned);
      assertTrue(warned.get(0).contains("5 of 45 target(s)"), warned.get(0));
      assertTrue(warned.get(0).contains("raise maxTargetsPerCollector"), warned.get(0));

      List<Collector> more = new ArrayList<>(collectors(5));
      a.setCollectors(more);
      assertComplete(a, targets(46, 3));
      assertEquals(0, a.snapshot().unassigned().size(), s + ": room appeared");
      assertWithinLimits(a.snapshot(), 10, Long.MAX_VALUE);
      assertEquals(info0 + 1, log.messages(Level.INFO, FITS_AGAIN).size(), s);

      a.setCollectors(collectors(3));
      assertEquals(16, a.snapshot().unassigned().size(), s);
      assertEquals(warned0 + 2, log.messages(Level.WARN, FITS_NOWHERE).size(),
          s + ": a new episode");
    }
  }

  @Test
  void aCollectorsLimitScalesWithItsCapacity() {
    Allocator a = Allocators.builder(Allocators.RENDEZVOUS).maxTargetsPerCollector(10).build();
    List<Collector> cs = List.of(Collector.of("a"), Collector.of("b").withCapacity(3));
    a.setCollectors(cs);
    a.setTargets(targets(40, 1));
    assertEquals(10, a.snapshot().targetCount("a"));
    assertEquals(30, a.snapshot().targetCount("b"));
    assertEquals(0, a.snapshot().unassigned().size());
  }

  @Test
  void aCostLimitPlacesATargetCostlierThanEveryLimitAloneRatherThanNowhere() {
    for (String s : Allocators.strategies()) {
      Allocator a = Allocators.builder(s).maxCostPerCollector(100).build();
      List<Target> ts = new ArrayList<>();
      for (Target t : targets(30, 2)) {
        ts.add(t.withCost(10));
      }
      Target whale = Target.of("ksm", "kube-state-metrics:8080").withCost(5000);
      ts.add(whale);
      a.setCollectors(collectors(4));
      a.setTargets(ts);
      assertComplete(a, ts);
      String home = a.snapshot().collectorOf(whale).orElseThrow(() -> new AssertionError(s));
      assertEquals(1, a.snapshot().targetCount(home), s + ": the whale is alone");
      assertWithinLimits(a.snapshot(), Integer.MAX_VALUE, 100);
      assertEquals(0, a.snapshot().unassigned().size(), s + ": 30 x 10 fit in 3 x 100");
    }
  }

  @Test
  void costGrowthAloneNeverEvicts() {
    Allocator a = Allocators.builder(Allocators.RENDEZVOUS).maxCostPerCollector(1000).build();
    List<Target> ts = new ArrayList<>();
    for (Target t : targets(200, 2)) {
      ts.add(t.withCost(10));
    }
    a.setCollectors(collectors(4));
    a.setTargets(ts);
    Map<Target, String> before = assignment(a.snapshot());
    List<Target> grown = new ArrayList<>();
    for (Target t : ts) {
      grown.add(t.withCost(30));
    }
    a.setTargets(grown);
    assertEquals(before, assignment(a.snapshot()), "placed targets stay when costs grow");
    assertEquals(0, a.snapshot().unassigned().size());
    a.setTargets(grown.subList(0, 199));
    assertEquals(0, a.snapshot().unassigned().size());
  }

  @Test
  void limitsMustBePositive() {
    Allocators.Builder b = Allocators.builder(Allocators.RENDEZVOUS);
    assertThrows(IllegalArgumentException.class, () -> b.maxTargetsPerCollector(0));
    assertThrows(IllegalArgumentException.class, () -> b.maxCostPerCollector(-5));
  }
}
