package dev.apportion.allocation.internal;

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
 * <p><b>Guarantees.</b> Never moves a target whose collector lives: removing a collector moves
 * only its targets, adding one moves nothing (a new collector receives only new or orphaned
 * targets; it never rebalances). Spreads each job evenly when targets arrive together.
 *
 * <p><b>Cost.</b> Per call that places anything: O(c log c) to order the collectors by load.
 * Per placement: O(1) amortized, plus, once per job met at each level and per distinct count of
 * that job among the level's collectors, one pass over the level. A full placement of {@code n} targets over {@code c} collectors and {@code j}
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
  private int[] jobCount = new int[0];
  private int[] jobMin = new int[0];
  private final IntList promoted = new IntList();

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
