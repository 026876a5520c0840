package dev.apportion.allocation.internal.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link Members}' arrays read by the passes of a collector change (ids, largest id, the members
 * themselves, capacity classes), against what reading the members one by one gives; and a
 * {@link Member}'s values read once, after its collector changes.
 */
class MembersTest {

  /** Members named in order, with the given ids and capacities. */
  private static Members members(int[] ids, double[] capacities) {
    Member[] ms = new Member[ids.length];
    for (int i = 0; i < ms.length; i++) {
      String name = String.format("collector-%04d", i);
      ms[i] = new Member(Collector.of(name).withCapacity(capacities[i]), ids[i]);
      ms[i].index(i);
    }
    return new Members(ms);
  }

  @Test
  void arraysAreWhatTheMembersSay() {
    Random random = new Random(42);
    for (int trial = 0; trial < 200; trial++) {
      int n = random.nextInt(40);
      // Ids unique, in any order, with gaps (a departed member's id is reused later).
      int[] pool = new int[n + random.nextInt(20)];
      for (int i = 0; i < pool.length; i++) {
        pool[i] = i;
      }
      for (int i = pool.length - 1; i > 0; i--) {
        int j = random.nextInt(i + 1);
        int t = pool[i];
        pool[i] = pool[j];
        pool[j] = t;
      }
      int[] ids = Arrays.copyOf(pool, n);
      double[] capacities = new double[n];
      boolean uniform = random.nextBoolean();
      for (int i = 0; i < n; i++) {
        capacities[i] = uniform ? 2.5 : 1 + random.nextInt(3) * 0.5;
      }
      Members ms = members(ids, capacities);

      int max = -1;
      double total = 0;
      for (int i = 0; i < n; i++) {
        assertSame(ms.get(i), ms.array()[i]);
        assertEquals(ms.get(i).id(), ms.ids()[i]);
        max = Math.max(max, ms.get(i).id());
        total += capacities[i];
      }
      assertEquals(n, ms.array().length);
      assertEquals(n, ms.ids().length);
      assertEquals(max, ms.maxId());
      assertEquals(total, ms.totalCapacity());
      assertArrayEquals(capacities, ms.capacities());

      // The capacity classes: the distinct values ascending, each member's position among them.
      double[] distinct = Arrays.stream(capacities).distinct().sorted().toArray();
      assertArrayEquals(distinct, ms.classCapacities());
      assertEquals(distinct.length <= 1, ms.uniformCapacity());
      for (int i = 0; i < n; i++) {
        assertEquals(capacities[i], ms.classCapacities()[ms.capacityClass()[i]]);
      }
    }
  }

  /** A set less some members, copied from the set's arrays: what building it anew gives. */
  @Test
  void keepingIsTheSetBuiltFromTheMembersThatStay() {
    Random random = new Random(7);
    for (int trial = 0; trial < 300; trial++) {
      int n = 1 + random.nextInt(30);
      int[] ids = new int[n];
      double[] capacities = new double[n];
      boolean uniform = random.nextInt(3) > 0;
      for (int i = 0; i < n; i++) {
        ids[i] = n - 1 - i + random.nextInt(2) * n; // unique: i's own or i's own plus n
        capacities[i] = uniform ? 0.5 : 1 + random.nextInt(2);
      }
      Members ms = members(ids, capacities);
      boolean[] kept = new boolean[n];
      int count = 0;
      for (int i = 0; i < n; i++) {
        kept[i] = random.nextInt(4) > 0;
        count += kept[i] ? 1 : 0;
      }
      Member[] next = new Member[count];
      for (int i = 0, w = 0; i < n; i++) {
        if (kept[i]) {
          next[w++] = ms.get(i);
        }
      }
      Members derived = ms.keeping(kept, next);
      Members built = new Members(next);
      assertArrayEquals(built.ids(), derived.ids());
      assertArrayEquals(built.hashes(), derived.hashes());
      assertArrayEquals(built.capacities(), derived.capacities());
      assertArrayEquals(built.classCapacities(), derived.classCapacities());
      assertArrayEquals(built.capacityClass(), derived.capacityClass());
      assertEquals(built.totalCapacity(), derived.totalCapacity());
      assertEquals(built.uniformCapacity(), derived.uniformCapacity());
      assertEquals(built.maxId(), derived.maxId());
      for (int i = 0; i < count; i++) {
        assertSame(next[i], derived.get(i));
      }
    }
  }

  @Test
  void keepingChecksTheCount() {
    Members ms = members(new int[] {0, 1, 2}, new double[] {1, 1, 1});
    boolean[] kept = {true, false, true};
    assertThrows(IllegalArgumentException.class,
        () -> ms.keeping(kept, new Member[] {ms.get(0)}));
    assertThrows(IllegalArgumentException.class,
        () -> ms.keeping(kept, new Member[] {ms.get(0), ms.get(1), ms.get(2)}));
  }

  @Test
  void emptySetHasNoLargestId() {
    assertEquals(-1, Members.EMPTY.maxId());
    assertEquals(0, Members.EMPTY.ids().length);
    assertEquals(0, Members.EMPTY.classCapacities().length);
    assertTrue(Members.EMPTY.uniformCapacity());
  }

  @Test
  void uniformSetHasOneClass() {
    Members ms = members(new int[] {3, 0, 7}, new double[] {1.5, 1.5, 1.5});
    assertTrue(ms.uniformCapacity());
    assertArrayEquals(new double[] {1.5}, ms.classCapacities());
    assertArrayEquals(new int[] {0, 0, 0}, ms.capacityClass());
    assertEquals(7, ms.maxId());
  }

  @Test
  void memberReadsItsNewCollectorsValues() {
    Member m = new Member(Collector.of("a", "node-1"), 0);
    assertEquals("node-1", m.node());
    assertNull(m.zone());
    assertEquals(1.0, m.capacity());
    Collector moved = Collector.of("a", "node-2", "zone-b").withCapacity(3);
    m.collector(moved);
    assertSame(moved, m.collector());
    assertEquals("node-2", m.node());
    assertEquals("zone-b", m.zone());
    assertEquals(3.0, m.capacity());
    m.collector(Collector.of("a"));
    assertNull(m.node());
    assertNull(m.zone());
    assertEquals(1.0, m.capacity());
  }
}
