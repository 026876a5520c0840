package dev.apportion.allocation.internal.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Both ways of putting slots in {@link TargetOrder} (sorting keys in place, and the bucketed
 * {@link SlotOrder#sortInto} of a first placement) give the order of {@link SlotOrder#compare}:
 * by hash as an unsigned number, then by the targets for equal hashes. The hashes here are chosen,
 * not the targets' own, so that many are equal, all top bits are used and some slots fall into
 * the same bucket with different hashes.
 */
class SlotOrderTest {

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 3, 7, 64, 1000, 20_000})
  void bothSortsGiveTheComparatorsOrder(int n) {
    for (long seed = 1; seed <= 8; seed++) {
      Random r = new Random(seed * 31 + n);
      int slotLimit = n * 2 + 1;
      long[] hashes = new long[slotLimit];
      Target[] targets = new Target[slotLimit];
      // About two slots share each pooled value: many equal hashes, no bucket crowded past
      // SlotOrder.BUCKET_MAX (see the next test for crowded ones).
      long[] pool = new long[1 + n / 3];
      for (int i = 0; i < pool.length; i++) {
        pool[i] = r.nextLong();
      }
      for (int s = 0; s < slotLimit; s++) {
        // Some equal hashes, some sharing only their top bits, the rest anything.
        int kind = r.nextInt(3);
        long base = pool[r.nextInt(pool.length)];
        hashes[s] = kind == 0 ? base : kind == 1 ? base ^ r.nextInt(1 << 20) : r.nextLong();
        targets[s] = Target.of("job-" + r.nextInt(3), "10.0." + (s >> 8) + "." + (s & 255) + ":80");
      }
      // n distinct slots, in random order
      int[] slots = new int[slotLimit];
      for (int s = 0; s < slotLimit; s++) {
        slots[s] = s;
      }
      for (int i = slotLimit - 1; i > 0; i--) {
        int j = r.nextInt(i + 1);
        int t = slots[i];
        slots[i] = slots[j];
        slots[j] = t;
      }
      int[] given = Arrays.copyOf(slots, n);
      Integer[] boxed = Arrays.stream(given).boxed().toArray(Integer[]::new);
      Arrays.sort(boxed, (a, b) -> SlotOrder.compare(a, b, hashes, targets));
      int[] want = Arrays.stream(boxed).mapToInt(Integer::intValue).toArray();

      int[] out = new int[n];
      long[] outHashes = new long[n];
      int[] input = given.clone();
      if (!SlotOrder.sortInto(input, n, hashes, targets, out, outHashes)) {
        throw new AssertionError("sortInto declined random hashes, seed " + seed);
      }
      assertArrayEquals(want, out, "sortInto, seed " + seed);
      assertArrayEquals(given, input, "sortInto leaves its input as it was");
      for (int i = 0; i < n; i++) {
        if (outHashes[i] != hashes[out[i]]) {
          throw new AssertionError("hash " + i + " is not its slot's");
        }
      }

      int[] inPlace = given.clone();
      new SlotOrder().sort(inPlace, n, hashes, targets);
      assertArrayEquals(want, inPlace, "sort, seed " + seed);
    }
  }

  /**
   * Targets whose hashes share their top bits (found by search, as anyone could, the hash being
   * public) crowd one of sortInto's buckets: it declines, writing nothing, and a first placement
   * of them still lists them in TargetOrder (sorted by keys instead).
   */
  @Test
  void crowdedBucketsFallBackToTheKeySort() {
    List<Target> crowded = new ArrayList<>();
    for (int i = 0; crowded.size() < 300; i++) {
      Target t = Target.of("job", "10.1." + (i >> 8 & 255) + "." + (i & 255) + ":" + (80 + i / 65536));
      if (t.hash() >>> 58 == 0) {
        crowded.add(t);
      }
    }
    int n = crowded.size();
    long[] hashes = new long[n];
    Target[] targets = crowded.toArray(new Target[0]);
    int[] slots = new int[n];
    for (int s = 0; s < n; s++) {
      hashes[s] = targets[s].hash();
      slots[s] = s;
    }
    int[] out = new int[n];
    long[] outHashes = new long[n];
    assertFalse(SlotOrder.sortInto(slots, n, hashes, targets, out, outHashes));
    assertArrayEquals(new int[n], out, "nothing written");

    Allocator a = Allocators.builder("rendezvous").build();
    a.setCollectors(List.of(Collector.of("a"), Collector.of("b"), Collector.of("c")));
    List<Target> shuffled = new ArrayList<>(crowded);
    java.util.Collections.shuffle(shuffled, new Random(5));
    a.setTargets(shuffled);
    List<Target> want = new ArrayList<>(crowded);
    want.sort(TargetOrder.HASH);
    assertEquals(want, List.copyOf(a.snapshot().targets()));
    assertEquals(n, a.snapshot().targets().size());
  }
}
