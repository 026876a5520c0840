package dev.apportion.allocation.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link IncrementalMatching} against the matching from scratch: random histories of target
 * changes (a few percent replaced, added or dropped) and collector changes (some joining, some
 * leaving, one or two replaced in one call) on an engine running {@code consistent-hashing}; after every step each
 * target must be where a fresh engine fed the same two sets puts it, and the incremental path
 * must have been taken (not silently skipped) and never abandoned. Scales where many collectors
 * are over-full (load factor 1.05) and where few are (1.25).
 */
class IncrementalMatchingTest {

  private static Engine engine(ConsistentHashingPlacer placer) {
    return new Engine("consistent-hashing", placer, List.of(), 1.0);
  }

  private static Target target(int i) {
    return Target.of("job-" + (i % 7), "10." + (i >> 16) + "." + ((i >> 8) & 255) + "."
        + (i & 255) + ":9100", Map.of("instance", "i-" + i));
  }

  @ParameterizedTest(name = "{0} targets on {1} collectors, load factor {2}")
  @CsvSource({"300, 7, 1.05", "3000, 40, 1.05", "3000, 40, 1.25", "20000, 150, 1.1"})
  void everyStepEqualsTheMatchingFromScratch(int targets, int collectors, double loadFactor) {
    int steps = targets > 5000 ? 30 : 60;
    int arcsKept = 0;
    int keysEdited = 0;
    long keysCarried = 0;
    int replacements = 0;
    int replacementsContinued = 0;
    for (long seed = 1; seed <= 4; seed++) {
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
          int before = placer.incremental.continued;
          engine.setCollectors(new ArrayList<>(cs));
          replacements++;
          replacementsContinued += placer.incremental.continued - before;
        }
        Engine fresh = engine(new ConsistentHashingPlacer(loadFactor, 1.15,
            ConsistentHashingPlacer.VIRTUAL_NODES, true));
        fresh.setCollectors(cs);
        fresh.setTargets(ts);
        Fixtures.assertSamePlacement(fresh.snapshot(), engine.snapshot(), ts,
            "seed " + seed + " step " + step + " (change " + what + ")");
      }
      assertTrue(placer.incremental.continued > steps / 3,
          "the incremental path was taken " + placer.incremental.continued + " times of "
              + steps);
      assertEquals(0, placer.incremental.abandoned, "seed " + seed);
      arcsKept += placer.incremental.arcsKept;
      keysEdited += placer.incremental.keysEdited;
      keysCarried += placer.incremental.keysCarried;
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
