package dev.apportion.allocation.internal.strategy;

import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.CollectorChange;
import dev.apportion.allocation.internal.engine.IntList;
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
 * level, the level's collectors are ordered once by (count of that job, name), with a counting
 * sort; a placement takes the first of that order still in the level. When the level empties, the
 * next one is the collectors just promoted plus those already at {@code L + 1}.
 *
 * <p><b>Guarantees.</b> Never moves a target whose collector lives: removing a collector moves
 * only its targets, adding one moves nothing (a new collector receives only new or orphaned
 * targets; it never rebalances). Spreads each job evenly when targets arrive together.
 *
 * <p><b>Cost.</b> Per call that places anything: O(c log c) to order the collectors by load.
 * Per placement: O(1) amortized, plus, once per job met at each level, O(level size) to order the
 * level for that job. A full placement of {@code n} targets over {@code c} collectors and {@code j}
 * jobs costs about O(n + (n / c) * j * c) = O(n * j) in the worst case, O(n) when the jobs are
 * few; upstream's costs O(n * c).
 */
final class LeastWeightedPlacer implements Placer {
  // Scratch, reused across calls.
  private boolean[] inLevel = new boolean[0];
  private int[] level = new int[0];
  private int levelSize;
  private int levelStamp;
  private int[][] jobOrder = new int[0][];
  private int[] jobStamp = new int[0];
  private int[] jobCursor = new int[0];
  private int[] counts = new int[0];
  private final IntList promoted = new IntList();

  @Override
  public void targetsChanged(IntList added, IntList removed, Members members,
      Assignment assignment) {
    if (!members.isEmpty()) {
      place(added, members, assignment);
    }
  }

  @Override
  public void collectorsChanged(CollectorChange change, Assignment assignment) {
    place(change.orphans(), change.after(), assignment);
  }

  private void place(IntList slots, Members members, Assignment assignment) {
    if (slots.isEmpty()) {
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
      jobOrder = Arrays.copyOf(jobOrder, n);
    }
    if (jobStamp[job] != levelStamp) {
      orderLevel(job, members);
      jobStamp[job] = levelStamp;
      jobCursor[job] = 0;
    }
    int[] order = jobOrder[job];
    int k = jobCursor[job];
    while (!inLevel[order[k]]) {
      k++;
    }
    jobCursor[job] = k + 1;
    return order[k];
  }

  /** Orders the level (name order) by count of {@code job}, stably: a counting sort. */
  private void orderLevel(int job, Members members) {
    int[] order = jobOrder[job];
    if (order == null || order.length < levelSize) {
      order = new int[Math.max(levelSize, 16)];
      jobOrder[job] = order;
    }
    int min = Integer.MAX_VALUE;
    int max = 0;
    for (int i = 0; i < levelSize; i++) {
      int j = members.get(level[i]).jobLoad(job);
      min = Math.min(min, j);
      max = Math.max(max, j);
    }
    int range = max - min + 1;
    if (range > 4 * levelSize + 64) {
      long[] keys = new long[levelSize];
      for (int i = 0; i < levelSize; i++) {
        keys[i] = ((long) members.get(level[i]).jobLoad(job) << 32) | level[i];
      }
      Arrays.sort(keys);
      for (int i = 0; i < levelSize; i++) {
        order[i] = (int) keys[i];
      }
      return;
    }
    if (counts.length < range + 1) {
      counts = new int[Math.max(range + 1, counts.length * 2)];
    }
    Arrays.fill(counts, 0, range + 1, 0);
    // The level is in name order: it is built from parts in name order, and only flags change.
    int[] sortedLevel = level;
    for (int i = 0; i < levelSize; i++) {
      counts[members.get(sortedLevel[i]).jobLoad(job) - min + 1]++;
    }
    for (int r = 1; r <= range; r++) {
      counts[r] += counts[r - 1];
    }
    for (int i = 0; i < levelSize; i++) {
      int idx = sortedLevel[i];
      order[counts[members.get(idx).jobLoad(job) - min]++] = idx;
    }
  }
}
