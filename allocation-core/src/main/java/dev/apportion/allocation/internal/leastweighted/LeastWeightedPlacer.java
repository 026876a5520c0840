package dev.apportion.allocation.internal.leastweighted;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.CollectorSetChange;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.engine.Placer;
import java.util.Arrays;

/**
 * {@code least-weighted}: sticky placement on the least-loaded collector, as in the OpenTelemetry
 * target allocator.
 *
 * <p><b>Design.</b> A target stays on its collector while that collector lives. A new or orphaned
 * target goes to the collector with the fewest targets; ties go to the one with the fewest
 * targets of the same job, then to the smaller name. Within one call, new targets are placed in
 * identity-hash order, so the input order never matters; across calls the result depends on
 * history (it is the one built-in strategy that is not a function of the two sets).
 *
 * <p>Finding that collector fast rests on one observation: every placement goes to a collector
 * of the least load {@code L}, and moves it to {@code L + 1}. So the collectors at load {@code L}
 * (the <em>level</em>) only leave it until it is empty, and while one is in the level its count of
 * each job is frozen (it would leave the level on receiving any target). For each job met at a
 * level, one pass collects, in name order, the level's collectors with the fewest targets of that
 * job; a placement takes the first of them still in the level, and only when all have left does
 * another pass collect the next fewest. When the level empties, the next one is the collectors
 * just promoted plus those already at {@code L + 1}.
 *
 * <p><b>Cost and capacity.</b> In general the least-loaded collector is the one with the least
 * {@link Member#cost()} relative to its {@link Member#capacity()}; ties go to the fewest targets
 * of the same job, then to the smaller name. When that order is the order by target count (every
 * target to place and every target held has the same cost, and the capacities are equal; always
 * so by default) the level design above runs, unchanged. Otherwise a binary heap over the
 * members keyed by {@code cost / capacity} (then index) gives the least; members tied with it
 * are compared by their count of the job. Within one call the weighted path places the
 * costliest targets first (ties in identity-hash order), so a collector ends at most one small
 * target above its share rather than one large one. Costs are read only when placing: a change of
 * cost alone never moves a target (the strategy never rebalances).
 *
 * <p><b>Guarantees.</b> Never moves a target whose collector lives: removing a collector moves
 * only its targets, adding one moves nothing (a new collector receives only new or orphaned
 * targets; it never rebalances). Spreads each job evenly when targets arrive together.
 *
 * <p><b>Cost.</b> Per call that places anything: O(c log c) to order the collectors by load.
 * Per placement: O(1) amortized, plus, once per job met at each level and per distinct count of
 * that job among the level's collectors, one pass over the level. A full placement of {@code n} targets over {@code c} collectors and {@code j}
 * jobs costs about O(n + (n / c) * j * c) = O(n * j) in the worst case, O(n) when the jobs are
 * few; upstream's costs O(n * c). The weighted path: O(log c) per placement, plus the members
 * tied with the least (all of them while many are empty).
 */
public final class LeastWeightedPlacer implements Placer {
  // Scratch, reused across calls.
  private boolean[] inLevel = new boolean[0];
  private int[] level = new int[0];
  private int levelSize;
  private int levelStamp;
  private int[][] jobOrder = new int[0][];
  private int[] jobStamp = new int[0];
  private int[] jobCursor = new int[0];
  private int[] jobCount = new int[0];
  private int[] jobMin = new int[0];
  private final IntList promoted = new IntList();
  // The weighted path's heap of member indices, keyed by load[i] = cost / capacity.
  private int[] heap = new int[0];
  private double[] heapKey = new double[0];
  private int heapSize;
  private final IntList tied = new IntList();

  @Override
  public void targetsChanged(IntList added, IntList removed, Members members,
      Assignment assignment) {
    if (!members.isEmpty()) {
      place(added, members, assignment);
    }
  }

  @Override
  public void collectorsChanged(CollectorSetChange change, Assignment assignment) {
    place(change.orphans(), change.after(), assignment);
  }

  private void place(IntList slots, Members members, Assignment assignment) {
    if (slots.isEmpty()) {
      return;
    }
    if (!countsOrderLoads(slots, members, assignment)) {
      placeWeighted(slots, members, assignment);
      return;
    }
    int c = members.size();
    // Collectors by (load, index): the level and what rises into it.
    long[] byLoad = new long[c];
    for (int i = 0; i < c; i++) {
      byLoad[i] = ((long) members.get(i).load() << 32) | i;
    }
    Arrays.sort(byLoad);
    if (inLevel.length < c) {
      inLevel = new boolean[c];
      level = new int[c];
    }
    int next = 0;
    int load = (int) (byLoad[0] >>> 32);
    levelSize = 0;
    while (next < c && (int) (byLoad[next] >>> 32) == load) {
      enter((int) byLoad[next++]);
    }
    int remaining = levelSize;
    levelStamp++;
    promoted.clear();
    for (int i = 0; i < slots.size(); i++) {
      if (remaining == 0) {
        // The level is empty: the promoted collectors and those already one higher form the next.
        load++;
        levelSize = 0;
        int[] up = promoted.toArray();
        Arrays.sort(up);
        int u = 0;
        while (u < up.length || (next < c && (int) (byLoad[next] >>> 32) == load)) {
          int fromUp = u < up.length ? up[u] : Integer.MAX_VALUE;
          int fromRest = next < c && (int) (byLoad[next] >>> 32) == load
              ? (int) byLoad[next] : Integer.MAX_VALUE;
          if (fromUp < fromRest) {
            enter(fromUp);
            u++;
          } else {
            enter(fromRest);
            next++;
          }
        }
        remaining = levelSize;
        levelStamp++;
        promoted.clear();
      }
      int slot = slots.get(i);
      int job = assignment.job(slot);
      int chosen = take(job, members);
      Member m = members.get(chosen);
      assignment.place(slot, m);
      inLevel[chosen] = false;
      promoted.add(chosen);
      remaining--;
    }
    for (int i = 0; i < levelSize; i++) {
      inLevel[level[i]] = false;
    }
  }

  /**
   * Whether ordering by cost relative to capacity is ordering by target count: equal capacities,
   * and every target to place and every target held costs the same.
   */
  private static boolean countsOrderLoads(IntList slots, Members members,
      Assignment assignment) {
    if (!members.uniformCapacity()) {
      return false;
    }
    long unit = assignment.cost(slots.get(0));
    for (int i = 1; i < slots.size(); i++) {
      if (assignment.cost(slots.get(i)) != unit) {
        return false;
      }
    }
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      if (m.cost() != m.load() * unit) {
        return false;
      }
    }
    return true;
  }

  private void placeWeighted(IntList slots, Members members, Assignment assignment) {
    int c = members.size();
    if (heap.length < c) {
      heap = new int[c];
      heapKey = new double[c];
    }
    double[] capacities = members.capacities();
    heapSize = 0;
    for (int i = 0; i < c; i++) {
      heapKey[i] = members.get(i).cost() / capacities[i];
      heap[heapSize++] = i;
    }
    for (int i = heapSize / 2 - 1; i >= 0; i--) {
      down(i);
    }
    int[] order = costliestFirst(slots, assignment);
    for (int k = 0; k < order.length; k++) {
      int slot = order[k];
      int job = assignment.job(slot);
      // The least key, and every member tied with it: the fewest of the job wins, then index.
      tied.clear();
      double least = heapKey[heap[0]];
      while (heapSize > 0 && heapKey[heap[0]] == least) {
        tied.add(pop());
      }
      int chosen = tied.get(0);
      int chosenJob = members.get(chosen).jobLoad(job);
      for (int t = 1; t < tied.size(); t++) {
        int idx = tied.get(t);
        int j = members.get(idx).jobLoad(job);
        if (j < chosenJob || (j == chosenJob && idx < chosen)) {
          chosen = idx;
          chosenJob = j;
        }
      }
      Member m = members.get(chosen);
      assignment.place(slot, m);
      heapKey[chosen] = m.cost() / capacities[chosen];
      for (int t = 0; t < tied.size(); t++) {
        push(tied.get(t));
      }
    }
  }

  /**
   * The slots to place, costliest first, ties in the given (identity-hash) order: greedy
   * placement in decreasing cost (Graham's LPT rule) leaves each collector at most one of the
   * smaller targets above its share, where identity-hash order could end one with a large target
   * on top. Deterministic: cost and identity hash only.
   */
  public static int[] costliestFirst(IntList slots, Assignment assignment) {
    int n = slots.size();
    int[] order = new int[n];
    if (n >= (1 << 23)) {
      // Beyond the packed key's index bits: identity-hash order, as given.
      for (int i = 0; i < n; i++) {
        order[i] = slots.get(i);
      }
      return order;
    }
    long[] keys = new long[n];
    for (int i = 0; i < n; i++) {
      long cost = assignment.cost(slots.get(i)); // at most Target.MAX_COST (Target.withCost)
      // Up to 2^63 + 2^23 - 1 (cost 0): ordered as unsigned numbers, by the flipped sign bit.
      keys[i] = (((Target.MAX_COST - cost) << 23) | i) ^ Long.MIN_VALUE;
    }
    Arrays.sort(keys);
    for (int i = 0; i < n; i++) {
      order[i] = slots.get((int) (keys[i] & ((1 << 23) - 1)));
    }
    return order;
  }

  private boolean less(int a, int b) {
    double ka = heapKey[a];
    double kb = heapKey[b];
    return ka < kb || (ka == kb && a < b);
  }

  private void down(int i) {
    int x = heap[i];
    while (true) {
      int l = 2 * i + 1;
      if (l >= heapSize) {
        break;
      }
      int r = l + 1;
      int m = r < heapSize && less(heap[r], heap[l]) ? r : l;
      if (!less(heap[m], x)) {
        break;
      }
      heap[i] = heap[m];
      i = m;
    }
    heap[i] = x;
  }

  private int pop() {
    int top = heap[0];
    heap[0] = heap[--heapSize];
    if (heapSize > 0) {
      down(0);
    }
    return top;
  }

  private void push(int x) {
    int i = heapSize++;
    while (i > 0) {
      int p = (i - 1) / 2;
      if (!less(x, heap[p])) {
        break;
      }
      heap[i] = heap[p];
      i = p;
    }
    heap[i] = x;
  }

  private void enter(int index) {
    level[levelSize++] = index;
    inLevel[index] = true;
  }

  /** The first collector of the level in (count of {@code job}, name) order. */
  private int take(int job, Members members) {
    if (job >= jobStamp.length) {
      int n = Math.max(job + 1, jobStamp.length * 2);
      jobStamp = Arrays.copyOf(jobStamp, n);
      jobCursor = Arrays.copyOf(jobCursor, n);
      jobCount = Arrays.copyOf(jobCount, n);
      jobMin = Arrays.copyOf(jobMin, n);
      jobOrder = Arrays.copyOf(jobOrder, n);
    }
    if (jobStamp[job] != levelStamp) {
      jobStamp[job] = levelStamp;
      collectLeast(job, members, -1);
    }
    while (true) {
      int[] order = jobOrder[job];
      for (int k = jobCursor[job]; k < jobCount[job]; k++) {
        if (inLevel[order[k]]) {
          jobCursor[job] = k + 1;
          return order[k];
        }
      }
      // Every collector of the least count has left the level: the level's remaining ones all
      // hold more of this job.
      collectLeast(job, members, jobMin[job]);
    }
  }

  /**
   * Collects, in name order, the collectors still in the level that hold the fewest targets of
   * {@code job} among those holding more than {@code above}: one pass over the level.
   */
  private void collectLeast(int job, Members members, int above) {
    int[] order = jobOrder[job];
    if (order == null || order.length < levelSize) {
      order = new int[Math.max(levelSize, 16)];
      jobOrder[job] = order;
    }
    int min = Integer.MAX_VALUE;
    int count = 0;
    for (int i = 0; i < levelSize; i++) {
      int idx = level[i];
      if (!inLevel[idx]) {
        continue;
      }
      int j = members.get(idx).jobLoad(job);
      if (j <= above || j > min) {
        continue;
      }
      if (j < min) {
        min = j;
        count = 0;
      }
      order[count++] = idx;
    }
    jobMin[job] = min;
    jobCount[job] = count;
    jobCursor[job] = 0;
  }
}
