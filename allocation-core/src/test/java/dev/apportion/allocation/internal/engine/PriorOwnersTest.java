package dev.apportion.allocation.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The journal of prior owners against a map, through operations of every size: a few slots (its
 * own map), more than a sixteenth of the slots (an array by slot), slots growing within an
 * operation, slots recorded twice.
 */
class PriorOwnersTest {

  @Test
  void recordsMatchAMapInOperationsOfEverySize() {
    for (long seed = 1; seed <= 30; seed++) {
      Random random = new Random(seed);
      PriorOwners journal = new PriorOwners();
      int slots = 1 + random.nextInt(50_000);
      for (int op = 0; op < 12; op++) {
        Map<Integer, Integer> model = new HashMap<>();
        int puts = random.nextInt(4) == 0 ? random.nextInt(slots) : random.nextInt(200);
        for (int i = 0; i < puts; i++) {
          if (random.nextInt(2000) == 0) {
            slots += random.nextInt(1000);
            journal.grow(slots);
          }
          int slot = random.nextInt(slots);
          int owner = random.nextInt(3000) - 3;
          journal.put(slot, owner, slots);
          model.put(slot, owner);
        }
        String where = "seed " + seed + " op " + op + " " + journal;
        assertEquals(model.size(), journal.size(), where);
        for (Map.Entry<Integer, Integer> e : model.entrySet()) {
          assertEquals(e.getValue().intValue(), journal.get(e.getKey()), where);
        }
        for (int i = 0; i < 100; i++) {
          int slot = random.nextInt(slots + 10);
          if (!model.containsKey(slot)) {
            assertEquals(PriorOwners.ABSENT, journal.get(slot), where + " slot " + slot);
          }
        }
        journal.clear();
        assertEquals(0, journal.size());
        assertEquals(PriorOwners.ABSENT, journal.get(random.nextInt(slots)), where);
      }
    }
  }

  @Test
  void aLargeOperationSwitchesToAnArrayAndLeavesNoneBehind() {
    PriorOwners journal = new PriorOwners();
    for (int s = 0; s < 100_000; s++) {
      journal.put(s, s % 7, 100_000);
    }
    assertTrue(journal.toString().contains("by slot"), journal.toString());
    assertEquals(100_000, journal.size());
    assertEquals(99_998 % 7, journal.get(99_998));
    journal.clear();
    assertTrue(journal.toString().contains("in a map"), journal.toString());
    journal.put(5, 2, 100_000);
    assertEquals(2, journal.get(5));
    assertEquals(PriorOwners.ABSENT, journal.get(6));
  }
}
