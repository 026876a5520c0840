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
          table.insert(key, slot);
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
  void removingAnAbsentEntryIsAnError() {
    SlotTable table = new SlotTable();
    table.insert(5, 1);
    assertThrows(IllegalStateException.class, () -> table.remove(5, 2));
    assertThrows(IllegalStateException.class, () -> table.remove(6, 1));
    assertEquals(1, table.size());
  }
}
