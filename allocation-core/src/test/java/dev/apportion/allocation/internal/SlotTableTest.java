package dev.apportion.allocation.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The slot table against a model (a sorted multimap), under random inserts and removals with
 * few distinct keys (long probe runs, equal keys, wrap-around at the end of the arrays) and with
 * many.
 */
class SlotTableTest {

  private static Set<Integer> slotsOf(SlotTable table, long key) {
    TreeSet<Integer> out = new TreeSet<>();
    for (int c = table.find(key); c >= 0; c = table.findNext(key, c)) {
      // Each entry was inserted with its slot as its extra word.
      assertEquals(table.slotAt(c), table.auxAt(c));
      out.add(table.slotAt(c));
    }
    return out;
  }

  @ParameterizedTest
  @ValueSource(ints = {3, 40, 100_000})
  void randomInsertsAndRemovalsMatchAMultimap(int distinctKeys) {
    for (long seed = 1; seed <= 20; seed++) {
      Random random = new Random(seed);
      SlotTable table = new SlotTable();
      TreeMap<Long, TreeSet<Integer>> model = new TreeMap<>();
      List<long[]> live = new ArrayList<>();
      int nextSlot = 0;
      for (int op = 0; op < 3000; op++) {
        if (live.isEmpty() || random.nextInt(3) > 0) {
          long key = random.nextInt(distinctKeys) * 0x100000001L;
          int slot = nextSlot++;
          table.insert(key, slot, slot, 0);
          model.computeIfAbsent(key, k -> new TreeSet<>()).add(slot);
          live.add(new long[] {key, slot});
        } else {
          long[] e = live.remove(random.nextInt(live.size()));
          table.remove(e[0], (int) e[1]);
          TreeSet<Integer> s = model.get(e[0]);
          s.remove((int) e[1]);
          if (s.isEmpty()) {
            model.remove(e[0]);
          }
        }
        if (op % 97 == 0 || op == 2999) {
          assertEquals(live.size(), table.size(), "seed " + seed);
          for (long[] e : live) {
            assertEquals(model.get(e[0]), slotsOf(table, e[0]), "seed " + seed + " key " + e[0]);
          }
          assertEquals(-1, table.find(-7L), "seed " + seed);
        }
      }
    }
  }

  @Test
  void seenMarksLiveInTheCellAndSurviveGrowthAndRemoval() {
    SlotTable table = new SlotTable();
    for (int slot = 0; slot < 100; slot++) {
      table.insert(slot % 7, slot, slot, slot < 10 ? 5 : 0);
    }
    for (int slot = 10; slot < 50; slot++) {
      int cell = table.find(slot % 7);
      while (table.slotAt(cell) != slot) {
        cell = table.findNext(slot % 7, cell);
      }
      org.junit.jupiter.api.Assertions.assertTrue(table.markSeen(cell, 5));
      org.junit.jupiter.api.Assertions.assertFalse(table.markSeen(cell, 5), "seen twice");
    }
    table.remove(3, 3);
    table.remove(4 % 7, 60);
    IntList unseen = new IntList();
    table.unseen(5, unseen);
    TreeSet<Integer> got = new TreeSet<>();
    for (int i = 0; i < unseen.size(); i++) {
      got.add(unseen.get(i));
    }
    TreeSet<Integer> expected = new TreeSet<>();
    for (int slot = 50; slot < 100; slot++) {
      if (slot != 60) {
        expected.add(slot);
      }
    }
    assertEquals(expected, got);
    table.clearSeen();
    unseen.clear();
    table.unseen(5, unseen);
    assertEquals(98, unseen.size(), "after clearSeen nothing counts as seen");
  }

  @Test
  void removingAnAbsentEntryIsAnError() {
    SlotTable table = new SlotTable();
    table.insert(5, 0, 1, 0);
    assertThrows(IllegalStateException.class, () -> table.remove(5, 2));
    assertThrows(IllegalStateException.class, () -> table.remove(6, 1));
    assertEquals(1, table.size());
  }
}
