package dev.apportion.allocation.internal.engine;

import com.google.common.collect.ImmutableList;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.collections.Passes;
import java.util.AbstractCollection;
import java.util.Arrays;
import java.util.Iterator;

/**
 * Every member's entry of a snapshot built from the state alone, for the {@link Publisher} when
 * most targets were touched (a first placement, a change of most owners): no delta, no merge,
 * nothing read from the previous snapshot. Keeps its scratch between operations. Writer-thread
 * only.
 */
final class FullEntries {
  private static final Target[] NO_TARGETS = {};
  /** By job id: targets counted, then next place. */
  private int[] jobCount = new int[16];
  /** One member's targets, grouped by job. */
  private Target[] byJob = new Target[16];
  private final ListSource source = new ListSource();
  /** The jobs' sort keys (rank, then id). */
  private long[] jobKeys = new long[16];

  /**
   * Every member's entry built from the state alone, when most targets were touched: the known
   * targets (already in {@link TargetOrder}) are grouped by owner, then each owner's by job, and
   * each list is copied once at its size. No delta, no merge, nothing read from the previous
   * snapshot. O(n + sum of each member's jobs log jobs).
   */
  @SuppressWarnings("unchecked")
  JobLists[] build(Members members, Slots slots, IntList scratch) {
    int m = members.size();
    int[] ids = members.ids();
    int[] indexById = new int[Math.max(0, members.maxId()) + 1];
    Arrays.fill(indexById, -1);
    for (int i = 0; i < m; i++) {
      indexById[ids[i]] = i;
    }
    // Group the known slots by owner, each group in TargetOrder (a stable counting sort).
    IntList order = slots.order();
    int n = order.size();
    int[] start = new int[m + 1];
    for (int i = 0; i < n; i++) {
      int id = slots.ownerId(order.get(i));
      if (id >= 0) {
        start[indexById[id] + 1]++;
      }
    }
    int maxLoad = 0;
    for (int i = 0; i < m; i++) {
      maxLoad = Math.max(maxLoad, start[i + 1]);
      start[i + 1] += start[i];
    }
    scratch.clear();
    scratch.ensureCapacity(start[m]);
    int[] g = scratch.array();
    int[] next = Arrays.copyOf(start, m);
    for (int i = 0; i < n; i++) {
      int s = order.get(i);
      int id = slots.ownerId(s);
      if (id >= 0) {
        g[next[indexById[id]]++] = s;
      }
    }
    // Job ids ranked by name: each entry lists its jobs in name order.
    int jobs = slots.jobCount();
    int[] rank = slots.jobRanks();
    if (jobCount.length < jobs) {
      jobCount = new int[Math.max(jobs, jobCount.length * 2)];
    }
    if (byJob.length < maxLoad) {
      byJob = new Target[Math.max(maxLoad, byJob.length * 2)];
    }
    int[] count = jobCount;
    // Zero whatever an earlier call left should it have thrown midway (a job count's slot is
    // zeroed as its list is built).
    Arrays.fill(count, 0, jobs, 0);
    Target[] grouping = byJob;
    // A member has at most min(jobs, maxLoad) distinct jobs: sized once (Passes).
    long[] present = jobKeys(Math.min(jobs, maxLoad));
    JobLists[] out = new JobLists[m];
    for (int i = 0; i < m; i++) {
      Member member = members.get(i);
      int from = start[i];
      int to = start[i + 1];
      if (from == to) {
        out[i] = JobLists.empty(member.collector());
        continue;
      }
      // The member's jobs, as rank << 32 | job id, so that a sort of longs orders them by name.
      int distinct = 0;
      for (int p = from; p < to; p++) {
        int job = slots.job(g[p]);
        if (count[job]++ == 0) {
          present[distinct++] = (long) rank[job] << 32 | job;
        }
      }
      Arrays.sort(present, 0, distinct);
      // Each job's first place in the member's run, then its targets scattered there in order.
      int place = 0;
      for (int d = 0; d < distinct; d++) {
        int job = (int) present[d];
        int c = count[job];
        count[job] = place;
        place += c;
      }
      for (int p = from; p < to; p++) {
        int s = g[p];
        grouping[count[slots.job(s)]++] = slots.target(s);
      }
      String[] names = new String[distinct];
      ImmutableList<Target>[] lists = (ImmutableList<Target>[]) new ImmutableList<?>[distinct];
      int first = 0;
      for (int d = 0; d < distinct; d++) {
        int job = (int) present[d];
        int end = count[job];
        names[d] = slots.jobName(job);
        lists[d] = source.copy(grouping, first, end);
        first = end;
        count[job] = 0;
      }
      Arrays.fill(grouping, 0, to - from, null);
      out[i] = JobLists.of(member.collector(), names, lists, to - from);
    }
    return out;
  }

  /**
   * A reusable view of an array range that {@link ImmutableList#copyOf(java.util.Collection)}
   * copies with one {@code toArray()}, which the list then wraps: one array at the list's size and
   * the list itself, nothing else allocated.
   */
  private static final class ListSource extends AbstractCollection<Target> {
    private Target[] array = NO_TARGETS;
    private int from;
    private int to;

    ImmutableList<Target> copy(Target[] a, int start, int end) {
      array = a;
      from = start;
      to = end;
      try {
        return ImmutableList.copyOf(this);
      } finally {
        array = NO_TARGETS;
      }
    }

    @Override
    public Object[] toArray() {
      return Arrays.copyOfRange(array, from, to, Object[].class);
    }

    @Override
    public Iterator<Target> iterator() {
      return Arrays.asList(array).subList(from, to).iterator();
    }

    @Override
    public int size() {
      return to - from;
    }
  }


  /** {@link #jobKeys}, grown (by doubling at least) to hold {@code n}. */
  private long[] jobKeys(int n) {
    if (jobKeys.length < n) {
      jobKeys = new long[Math.max(n, 2 * jobKeys.length)];
    }
    return jobKeys;
  }

  /** Drops a large grouping array after an operation, so a one-off large member is not kept. */
  void trim() {
    if (byJob.length > 1024) {
      byJob = new Target[16];
    }
  }
}
