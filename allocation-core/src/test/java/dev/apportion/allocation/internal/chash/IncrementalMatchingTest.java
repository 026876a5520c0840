package dev.apportion.allocation.internal.chash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.Fixtures;
import dev.apportion.allocation.internal.LogCapture;
import dev.apportion.allocation.internal.engine.Engine;
import dev.apportion.allocation.internal.engine.TestEngines;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link IncrementalMatching} against the matching from scratch: random histories of target
 * changes (a few percent replaced, added or dropped) and collector changes (some joining, some
 * leaving, one or two replaced in one call) on an engine running {@code consistent-hashing};
 * after every step each target must be where a fresh engine fed the same two sets puts it, and the incremental path
 * must have been taken (not silently skipped) and never abandoned, as the matching's trace lines
 * say. Scales where many collectors
 * are over-full (load factor 1.05) and where few are (1.25).
 */
class IncrementalMatchingTest {
  private static final Pattern CONTINUED = Pattern.compile(
      "change continued from the last matching: (\\d+) over-full collectors' keys kept, (\\d+) "
      + "kept keys edited");
  private static final Pattern CARRIED = Pattern.compile("(\\d+) kept keys carried");

  /** The sum of {@code group} of every captured trace line {@code pattern} matches. */
  private static long sum(LogCapture log, Pattern pattern, int group) {
    long sum = 0;
    for (String m : log.messages(Level.TRACE)) {
      Matcher matcher = pattern.matcher(m);
      if (matcher.find()) {
        sum += Long.parseLong(matcher.group(group));
      }
    }
    return sum;
  }

  private static Engine engine(ConsistentHashingPlacer placer) {
    return TestEngines.engine("consistent-hashing", placer, List.of());
  }

  private static Target target(int i) {
    return Target.of("job-" + (i % 7), "10." + (i >> 16) + "." + ((i >> 8) & 255) + "."
        + (i & 255) + ":9100", Map.of("instance", "i-" + i));
  }

  @ParameterizedTest(name = "{0} targets on {1} collectors, load factor {2}")
  @CsvSource({"300, 7, 1.05", "3000, 40, 1.05", "3000, 40, 1.25", "20000, 150, 1.1"})
  void everyStepEqualsTheMatchingFromScratch(int targets, int collectors, double loadFactor) {
    int steps = targets > 5000 ? 30 : 60;
    long arcsKept = 0;
    long keysEdited = 0;
    long keysCarried = 0;
    int replacements = 0;
    int replacementsContinued = 0;
    for (long seed = 1; seed <= 4; seed++) {
      try (LogCapture log = LogCapture.of(IncrementalMatching.class, Level.TRACE)) {
        Random random = new Random(seed * 31 + targets);
        ConsistentHashingPlacer placer = new ConsistentHashingPlacer(loadFactor, 1.15,
            ConsistentHashingPlacer.VIRTUAL_NODES, true);
        Engine engine = engine(placer);
        List<Collector> cs = new ArrayList<>();
        int nextCollector = 0;
        for (; nextCollector < collectors; nextCollector++) {
          cs.add(Collector.of("collector-" + nextCollector, "node-" + nextCollector));
        }
        List<Target> ts = new ArrayList<>();
        int nextTarget = 0;
        for (; nextTarget < targets; nextTarget++) {
          ts.add(target(nextTarget));
        }
        engine.setCollectors(cs);
        engine.setTargets(ts);
        for (int step = 0; step < steps; step++) {
          int what = random.nextInt(6);
          if (what <= 2) {
            // Replace, add or drop a few percent of the targets.
            int k = 1 + random.nextInt(Math.max(1, ts.size() / 30));
            for (int j = 0; j < k; j++) {
              if (what != 1 && !ts.isEmpty()) {
                ts.remove(random.nextInt(ts.size()));
              }
              if (what != 2) {
                ts.add(target(nextTarget++));
              }
            }
            engine.setTargets(new ArrayList<>(ts));
          } else if (what == 3 && cs.size() > 2) {
            int k = 1 + random.nextInt(2);
            for (int j = 0; j < k; j++) {
              cs.remove(random.nextInt(cs.size()));
            }
            engine.setCollectors(new ArrayList<>(cs));
          } else if (what == 4) {
            int k = 1 + random.nextInt(2);
            for (int j = 0; j < k; j++) {
              cs.add(Collector.of("collector-" + nextCollector, "node-" + nextCollector++));
            }
            engine.setCollectors(new ArrayList<>(cs));
          } else {
            // One or two replaced in one call (a rolling update): continued from the last
            // matching as a removal and an addition.
            int k = 1 + random.nextInt(2);
            for (int j = 0; j < k; j++) {
              cs.remove(random.nextInt(cs.size()));
              cs.add(Collector.of("collector-" + nextCollector, "node-" + nextCollector++));
            }
            int before = log.count(Level.TRACE, "change continued");
            engine.setCollectors(new ArrayList<>(cs));
            replacements++;
            replacementsContinued += log.count(Level.TRACE, "change continued") - before;
          }
          Engine fresh = engine(new ConsistentHashingPlacer(loadFactor, 1.15,
              ConsistentHashingPlacer.VIRTUAL_NODES, true));
          log.without(() -> {
            fresh.setCollectors(cs);
            fresh.setTargets(ts);
          });
          Fixtures.assertSamePlacement(fresh.snapshot(), engine.snapshot(), ts,
              "seed " + seed + " step " + step + " (change " + what + ")");
        }
        int continued = log.count(Level.TRACE, "change continued");
        assertTrue(continued > steps / 3,
            "the incremental path was taken " + continued + " times of " + steps);
        assertEquals(0, log.count(Level.TRACE, "change abandoned"), "seed " + seed);
        arcsKept += sum(log, CONTINUED, 1);
        keysEdited += sum(log, CONTINUED, 2);
        keysCarried += sum(log, CARRIED, 1);
      }
    }
    // A new collector's id can widen the sort keys (then the matching is placed from scratch);
    // the rest continue.
    assertTrue(replacementsContinued * 4 >= replacements * 3, "of " + replacements
        + " collector replacements " + replacementsContinued + " continued the last matching");
    if (loadFactor < 1.2) {
      // Many over-full collectors: consecutive collector changes re-run some of them from the
      // keys kept the first time.
      assertTrue(arcsKept > 0, "no over-full collector's keys were taken from the last run");
      // A collector added or removed moves targets onto or off its neighbours' arcs: their kept
      // keys are edited, not forgotten (every step above compares the result with a fresh engine).
      assertTrue(keysEdited > 0, "no kept key list was edited in place");
      // A change of targets moves the view's positions: the kept keys are carried over it, with
      // the positions they now have, instead of being forgotten.
      assertTrue(keysCarried > 0, "no kept key was carried over a change of targets");
    }
  }

}
