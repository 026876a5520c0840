package dev.apportion.allocation.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.apportion.allocation.Target;
import java.util.Arrays;
import java.util.Random;
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
      long[] pool = new long[1 + r.nextInt(Math.max(1, n / 3 + 1))];
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
      SlotOrder.sortInto(input, n, hashes, targets, out, outHashes);
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
}
