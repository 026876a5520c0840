package dev.apportion.allocation.internal.engine;

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

  /** The inverse of the table's mixing multiplier modulo 2<sup>64</sup> (Newton's iteration). */
  private static long inverseOfMixer() {
    long m = 0x9E3779B97F4A7C15L;
    long x = m;
    for (int i = 0; i < 6; i++) {
      x *= 2 - m * x;
    }
    return x;
  }

  /**
   * Distinct keys that the table cannot tell apart by their fingerprints: key {@code j} is
   * {@code m * inverse} where {@code m}, the key once mixed, has the top 32 bits of group
   * {@code j / 3} and {@code j % 3} below them, so the three keys of a group share their
   * fingerprint (and home) and only {@link SlotTable.Keys} tells them apart.
   */
  @Test
  void keysWithOneFingerprintAreToldApartByTheirKeys() {
    long inverse = inverseOfMixer();
    assertEquals(1L, inverse * 0x9E3779B97F4A7C15L);
    run(600, j -> {
      long group = (j / 3 + 1) * 0xD6E8FEB86659FD93L;
      return ((group & 0xFFFFFFFF00000000L) | (j % 3)) * inverse;
    });
  }

  @ParameterizedTest
  @ValueSource(ints = {3, 40, 100_000})
  void randomInsertsAndRemovalsMatchAMultimap(int distinctKeys) {
    run(distinctKeys, j -> j * 0x100000001L);
  }

  private static void run(int distinctKeys, java.util.function.LongUnaryOperator keyOfIndex) {
    for (long seed = 1; seed <= 20; seed++) {
      Random random = new Random(seed);
      long[] keyOf = new long[3000];
      SlotTable table = new SlotTable(slot -> keyOf[slot]);
      TreeMap<Long, TreeSet<Integer>> model = new TreeMap<>();
      List<long[]> live = new ArrayList<>();
      int nextSlot = 0;
      for (int op = 0; op < 3000; op++) {
        if (live.isEmpty() || random.nextInt(3) > 0) {
          long key = keyOfIndex.applyAsLong(random.nextInt(distinctKeys));
          int slot = nextSlot++;
          keyOf[slot] = key;
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
    SlotTable table = new SlotTable(slot -> slot == 1 ? 5L : 6L);
    table.insert(5, 1);
    assertThrows(IllegalStateException.class, () -> table.remove(5, 2));
    assertThrows(IllegalStateException.class, () -> table.remove(6, 1));
    assertEquals(1, table.size());
  }
}
