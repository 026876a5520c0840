package dev.apportion.allocation.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocators;
import org.junit.jupiter.api.Test;

/**
 * The movement goals of {@code consistent-hashing} (docs/strategies.md, "Movement"), as counts, at
 * the two smaller shapes. Where a goal is missed at 100k on 1000 (the summed removals and
 * additions, and what replacing 1% of the targets moves), the bound asserted is the measured
 * figure with a little room, so that a regression fails; docs/strategies.md shows the frontier
 * that explains the miss. Placement is a pure function of the sets: these counts are the same on
 * every run and every machine.
 */
class ConsistentHashingMovementTest {

  private static Movement.Figures measure(int targets, int collectors, int sweepFrom,
      int sweepTo) {
    Movement.Figures f = new Movement(
        () -> Allocators.builder(Allocators.CONSISTENT_HASHING).build(), targets, collectors)
        .measure(sweepFrom, sweepTo);
    System.out.println(targets + " on " + collectors + ": " + f);
    return f;
  }

  @Test
  void tenThousandOnAHundred() {
    Movement.Figures f = measure(10_000, 100, 95, 105);
    assertTrue(f.peakToMean() <= 1.10 + 1e-9, f.toString());
    assertEquals(0, f.idle(), f.toString());
    assertTrue(f.removalRatio() <= 1.25, f.toString());
    assertTrue(f.additionRatio() <= 1.25, f.toString());
    assertTrue(f.worstSweepStep().ratio() <= 2.0, f.toString());
    // Goal 0.1% of the others (10): missed (29 measured).
    assertTrue(f.replacedOthersMoved() <= 35, f.toString());
  }

  @Test
  void hundredThousandOnAThousand() {
    Movement.Figures f = measure(100_000, 1000, 950, 1050);
    assertTrue(f.peakToMean() <= 1.10 + 1e-9, f.toString());
    assertEquals(0, f.idle(), f.toString());
    // Goals 1.25x and 1.25x: missed (1.36x and 1.52x measured).
    assertTrue(f.removalRatio() <= 1.45, f.toString());
    assertTrue(f.additionRatio() <= 1.6, f.toString());
    assertTrue(f.worstSweepStep().ratio() <= 2.0, f.toString());
    // Goal 0.1% of the others (100): missed (234 measured).
    assertTrue(f.replacedOthersMoved() <= 300, f.toString());
  }
}
