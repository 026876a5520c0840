package dev.apportion.allocation.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
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
