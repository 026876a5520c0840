package dev.apportion.allocation.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.LogCapture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The engine's operator-facing log lines: when they appear, how often, and what they say. */
class EngineLogTest {
  private static final String BLIP = "the collector set went empty";
  private static final String BACK = "collectors are back";
  private static final String MOVED = "reassigned";
  private static final String DUPLICATES = "duplicate target(s)";

  private LogCapture log;

  @BeforeEach
  void capture() {
    log = LogCapture.of(Engine.class);
  }

  @AfterEach
  void release() {
    log.close();
  }

  private static List<Target> targets(int n) {
    List<Target> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(Target.of("job-" + (i % 3), "10.0." + (i / 250) + "." + (i % 250) + ":9100",
          Map.of()));
    }
    return out;
  }

  private static List<Collector> collectors(String prefix, int n) {
    List<Collector> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(Collector.of(prefix + i));
    }
    return out;
  }

  @Test
  void anEmptyCollectorSetBeforeAnyCollectorsIsNotABlip() {
    Allocator a = Allocators.builder("consistent-hashing").build();
    a.setTargets(targets(10));
    a.setCollectors(List.of());
    a.setCollectors(List.of());
    assertEquals(List.of(), log.messages(Level.WARN, BLIP));
  }

  @Test
  void anEmptyCollectorSetWarnsOncePerBlipWithTheCountsThatStand() {
    Allocator a = Allocators.builder("consistent-hashing").build();
    a.setTargets(targets(40));
    a.setCollectors(collectors("c-", 3));
    assertEquals(List.of(), log.messages(Level.WARN, BLIP));

    a.setCollectors(List.of());
    a.setCollectors(List.of());
    a.setCollectors(List.of());
    List<String> blips = log.messages(Level.WARN, BLIP);
    assertEquals(1, blips.size(), () -> "once per blip, not per call: " + blips);
    assertTrue(blips.get(0).contains("(3 collectors, 40 targets)"), blips.get(0));
    assertTrue(blips.get(0).contains("check the collector discovery"), blips.get(0));
    assertEquals(3, a.snapshot().collectors().size(), "the last assignment stands");
    assertEquals(List.of(), log.messages(Level.INFO, BACK));

    a.setCollectors(collectors("c-", 2));
    List<String> back = log.messages(Level.INFO, BACK);
    assertEquals(1, back.size(), () -> back.toString());
    assertTrue(back.get(0).contains("2 collectors (there were 3)"), back.get(0));

    a.setCollectors(collectors("c-", 2));
    assertEquals(1, log.messages(Level.INFO, BACK).size(), "said once, when the blip ends");

    a.setCollectors(List.of());
    List<String> second = log.messages(Level.WARN, BLIP);
    assertEquals(2, second.size(), "a new blip warns again");
    assertTrue(second.get(1).contains("(2 collectors, 40 targets)"), second.get(1));
  }

  @Test
  void replacingEveryCollectorWarnsWithTheMovedCountAndShare() {
    AtomicInteger reassigned = new AtomicInteger();
    Allocator a = Allocators.builder("rendezvous")
        .listener(c -> reassigned.set(c.reassigned()))
        .build();
    a.setTargets(targets(1000));
    a.setCollectors(collectors("a-", 10));
    assertEquals(List.of(), log.messages(Level.WARN, MOVED), "first placement moves nothing");

    a.setCollectors(collectors("b-", 10));
    assertEquals(1000, reassigned.get(), "every target changed collector");
    List<String> warnings = log.messages(Level.WARN, MOVED);
    assertEquals(1, warnings.size(), () -> warnings.toString());
    String w = warnings.get(0);
    assertTrue(w.contains("[rendezvous] one setCollectors call reassigned 1000 of 1000 targets "
        + "(100%), above the warning share of 50%"), w);
    assertTrue(w.contains("roll collectors out fewer at a time"), w);
  }

  @Test
  void aChangeBelowTheShareDoesNotWarnAndTheShareIsConfigurable() {
    for (double share : new double[] {0.5, 0.05}) {
      AtomicInteger reassigned = new AtomicInteger();
      Allocator a = Allocators.builder("rendezvous")
          .warnWhenMovedShareExceeds(share)
          .listener(c -> reassigned.set(c.reassigned()))
          .build();
      a.setTargets(targets(1000));
      a.setCollectors(collectors("a-", 10));
      int before = log.messages(Level.WARN, MOVED).size();
      a.setCollectors(collectors("a-", 9));
      int moved = reassigned.get();
      assertTrue(moved > 50 && moved < 500,
          "removing 1 of 10 moves about a tenth of the targets: " + moved);
      List<String> warnings = log.messages(Level.WARN, MOVED);
      if (share == 0.5) {
        assertEquals(before, warnings.size(), "below the default share: no warning");
      } else {
        assertEquals(before + 1, warnings.size(), "above a 5% share: a warning");
        assertTrue(warnings.get(before).contains("reassigned " + moved + " of 1000 targets"),
            warnings.get(before));
        assertTrue(warnings.get(before).contains("warning share of 5%"), warnings.get(before));
      }
    }
  }

  @Test
  void collapsedDuplicatesAreLoggedWithTheirCountWhenTheCountChanges() {
    Allocator a = Allocators.builder("consistent-hashing").build();
    List<Target> unique = targets(20);
    List<Target> given = new ArrayList<>(unique);
    for (int i = 0; i < 3; i++) {
      Target t = unique.get(i);
      // Same identity: only a __meta_ label differs.
      given.add(Target.of(t.job(), t.address(), Map.of("__meta_kubernetes_pod_name", "p-" + i)));
    }
    a.setTargets(given);
    assertEquals(20, a.snapshot().targets().size());
    List<String> info = log.messages(Level.INFO, DUPLICATES);
    assertEquals(1, info.size(), () -> info.toString());
    assertTrue(info.get(0).contains("collapsed 3 duplicate target(s) of 23 given"), info.get(0));
    assertTrue(info.get(0).contains("overlap"), info.get(0));

    a.setTargets(given);
    assertEquals(1, log.messages(Level.INFO, DUPLICATES).size(),
        "the same count again is not repeated at info");
    assertEquals(1, log.messages(Level.DEBUG, DUPLICATES).size(), "but is at debug");

    a.setTargets(given.subList(0, 22));
    List<String> changed = log.messages(Level.INFO, DUPLICATES);
    assertEquals(2, changed.size(), "a new count is logged");
    assertTrue(changed.get(1).contains("collapsed 2 duplicate target(s) of 22 given"),
        changed.get(1));

    a.setTargets(unique);
    a.setTargets(given.subList(0, 22));
    assertEquals(3, log.messages(Level.INFO, DUPLICATES).size(),
        "duplicates that come back after a clean call are logged again");
  }

  @Test
  void noDuplicatesNoLine() {
    Allocator a = Allocators.builder("consistent-hashing").build();
    a.setTargets(targets(20));
    a.setTargets(targets(20));
    assertEquals(List.of(), log.messages(Level.INFO, DUPLICATES));
    assertEquals(List.of(), log.messages(Level.DEBUG, DUPLICATES));
  }
}
