package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.Headroom;
import dev.apportion.allocation.internal.collections.IntList;
import java.util.Arrays;

/**
 * The live slots of the {@link Slots} in {@link TargetOrder}, which every placement and every
 * output follows, with each one's identity hash beside it: a pass over the order (a placement,
 * the merge of new slots into it) reads hashes sequentially, not one slot at a time from the
 * store. Writer-thread only.
 *
 * <p>A {@code setTargets} call changes it once, in place: the dropped slots are taken out and the
 * added ones merged in ({@link #removeAndMerge}), so a small change allocates nothing and moves
 * the arrays in bulk.
 */
final class LiveOrder {
  private final IntList order = new IntList();
  /** The hash of each slot of {@link #order}, in the same order. */
  private long[] orderHashes = new long[16];

  /** How many slots are live. */
  int size() {
    return order.size();
  }

  /** The live slots. Must not be modified. */
  IntList slots() {
    return order;
  }

  /** The {@code i}-th live slot. */
  int get(int i) {
    return order.get(i);
  }

  /** The identity hash of the {@code i}-th live slot. */
  long hashAt(int i) {
    return orderHashes[i];
  }

  /**
   * Takes the {@code gone} slots out and merges the {@code added} ones in. Each gone slot is
   * found by a binary search of the order's hashes and the runs between them are moved forward;
   * then each added slot's place is found the same way, from the back, and the runs after it are
   * moved back.
   *
   * @param gone live slots to take out, in {@link TargetOrder}
   * @param added new slots, in any order: sorted here into {@link TargetOrder}
   * @param hashes the store's hashes by slot
   * @param targets the store's targets by slot
   * @param sorter the store's sorter
   */
  void removeAndMerge(IntList gone, IntList added, long[] hashes, Target[] targets,
      SlotOrder sorter) {
    int n = order.size();
    if (n == 0) {
      fromNothing(added, hashes, targets, sorter);
      return;
    }
    sorter.sort(added.array(), added.size(), hashes, targets);
    int[] o = order.array();
    long[] oh = orderHashes;
    int[] g = gone.array();
    int w = 0;
    int r = 0;
    for (int k = 0; k < gone.size(); k++) {
      int p = positionOf(g[k], r, n, hashes);
      int run = p - r;
      if (w != r) {
        System.arraycopy(o, r, o, w, run);
        System.arraycopy(oh, r, oh, w, run);
      }
      w += run;
      r = p + 1;
    }
    if (w != r) {
      System.arraycopy(o, r, o, w, n - r);
      System.arraycopy(oh, r, oh, w, n - r);
    }
    w += n - r;
    int[] ad = added.array();
    int a = added.size();
    int total = w + a;
    order.truncate(w);
    if (total > o.length) {
      order.ensureCapacity(Headroom.withHeadroom(total));
    }
    o = order.array();
    if (oh.length < o.length) {
      orderHashes = Arrays.copyOf(oh, o.length);
      oh = orderHashes;
    }
    int end = w; // o[0 .. end) still to place; the rest is final
    for (int x = total; a > 0; a--) {
      int add = ad[a - 1];
      int p = insertionPoint(add, end, hashes, targets);
      int run = end - p;
      x -= run;
      System.arraycopy(o, p, o, x, run);
      System.arraycopy(oh, p, oh, x, run);
      x--;
      o[x] = add;
      oh[x] = hashes[add];
      end = p;
    }
    order.setSize(total);
  }

  /**
   * The order of a first placement (nothing known before): the added slots are sorted straight
   * into the order's arrays ({@link SlotOrder#sortInto}, no scratch but its counts, where sorting
   * keys would take two arrays of longs the size of the input); {@code added} then takes the
   * order.
   */
  private void fromNothing(IntList added, long[] hashes, Target[] targets, SlotOrder sorter) {
    int a = added.size();
    if (order.array().length < a) {
      order.ensureCapacity(Headroom.withHeadroom(a));
    }
    int[] o = order.array();
    if (orderHashes.length < o.length) {
      orderHashes = new long[o.length];
    }
    long[] oh = orderHashes;
    int[] ad = added.array();
    if (SlotOrder.sortInto(ad, a, hashes, targets, o, oh)) {
      System.arraycopy(o, 0, ad, 0, a);
    } else {
      // Hashes that crowd one bucket (made to collide): sort by keys, then copy.
      sorter.sort(ad, a, hashes, targets);
      System.arraycopy(ad, 0, o, 0, a);
      for (int i = 0; i < a; i++) {
        oh[i] = hashes[ad[i]];
      }
    }
    order.setSize(a);
  }

  /** Where slot {@code s} is in the order, searched in {@code [from, to)}, where it must be. */
  private int positionOf(int s, int from, int to, long[] hashes) {
    long h = hashes[s];
    long[] oh = orderHashes;
    int lo = from;
    int hi = to;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (Long.compareUnsigned(oh[mid], h) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    int[] o = order.array();
    for (int i = lo; i < to && oh[i] == h; i++) {
      if (o[i] == s) {
        return i;
      }
    }
    throw new IllegalStateException("slot " + s + " is not in the order");
  }

  /** The first place in {@code order[0 .. end)} holding a slot after {@code s} in the order. */
  private int insertionPoint(int s, int end, long[] hashes, Target[] targets) {
    long h = hashes[s];
    long[] oh = orderHashes;
    int[] o = order.array();
    int lo = 0;
    int hi = end;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      int c = Long.compareUnsigned(oh[mid], h);
      if (c < 0 || (c == 0 && SlotOrder.compare(o[mid], s, hashes, targets) <= 0)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
}
