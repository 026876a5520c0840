package dev.apportion.allocation.internal.engine;

import com.google.common.collect.ImmutableList;
import dev.apportion.allocation.Target;
import java.util.Arrays;
import java.util.List;

/**
 * One collector's change to one job's published list in one operation: removals and additions,
 * each in {@link TargetOrder} (the {@link Publisher} visits the touched targets in that order),
 * and the merge that applies them to the old list. Writer-thread only.
 */
final class JobListDelta {
  private static final Target[] NONE = {};
  private Target[] adds = new Target[2];
  private int addCount;
  private Target[] removes = NONE;
  private int removeCount;

  void add(Target t) {
    if (addCount == adds.length) {
      adds = Arrays.copyOf(adds, addCount * 2);
    }
    adds[addCount++] = t;
  }

  void remove(Target t) {
    if (removeCount == removes.length) {
      removes = Arrays.copyOf(removes, Math.max(2, removeCount * 2));
    }
    removes[removeCount++] = t;
  }

  /**
   * The old list without this delta's removals, with its additions, all in order. Each removal
   * and addition finds its place by a binary search from the previous one's; the runs of the old
   * list between them are copied as references, never read, so a list of {@code m} targets with
   * {@code d} changes costs about {@code d log m} reads of targets, not {@code m}. Built through a
   * builder of the exact size, which Guava then wraps instead of copying.
   */
  ImmutableList<Target> applyTo(ImmutableList<Target> old) {
    // Every removal is in the old list: it names a target this collector held for this job.
    ImmutableList.Builder<Target> next =
        ImmutableList.builderWithExpectedSize(Math.max(0, old.size() - removeCount) + addCount);
    int a = 0;
    int r = 0;
    int o = 0;
    int size = old.size();
    while (a < addCount || r < removeCount) {
      // The next change in order: a removal before an addition of the same target (a relabel
      // removes the old instance and adds the new one).
      boolean removal = r < removeCount
          && (a == addCount || TargetOrder.compare(removes[r], adds[a]) <= 0);
      Target t = removal ? removes[r] : adds[a];
      int at = search(old, t, o, size);
      int stop = at >= 0 ? at : -at - 1;
      if (stop > o) {
        next.addAll(old.subList(o, stop));
      }
      o = stop;
      if (removal) {
        if (at < 0) {
          throw new IllegalStateException("a removal names a target the list does not hold");
        }
        o++;
        r++;
      } else {
        next.add(t);
        a++;
      }
    }
    if (o < size) {
      next.addAll(old.subList(o, size));
    }
    return next.build();
  }

  /**
   * The index of {@code t} in {@code list[from .. to)}, or {@code -(insertion point) - 1}, by
   * {@link TargetOrder}.
   */
  private static int search(List<Target> list, Target t, int from, int to) {
    int lo = from;
    int hi = to - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      int c = TargetOrder.compare(list.get(mid), t);
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return -lo - 1;
  }

}
