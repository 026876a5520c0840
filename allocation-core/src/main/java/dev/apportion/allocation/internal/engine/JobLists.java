package dev.apportion.allocation.internal.engine;

import com.google.common.collect.ImmutableList;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * One collector's part of a snapshot: its collector value and its targets per job, as two
 * parallel arrays sorted by job name. Immutable. A change rebuilds only the lists it touches and
 * copies the two small arrays (one reference per job); the untouched lists are shared.
 *
 * <p>Reads never allocate: {@link #targets} is a binary search, {@link #jobs} returns a set view
 * over the array made once with the entry.
 */
final class JobLists {
  private static final String[] NO_JOBS = {};
  @SuppressWarnings("unchecked")
  private static final ImmutableList<Target>[] NO_LISTS =
      (ImmutableList<Target>[]) new ImmutableList<?>[0];

  final Collector collector;
  final int count;
  private final String[] jobs;
  private final ImmutableList<Target>[] lists;
  private final Set<String> jobSet;

  private JobLists(Collector collector, String[] jobs, ImmutableList<Target>[] lists,
      int count) {
    this.collector = collector;
    this.jobs = jobs;
    this.lists = lists;
    this.count = count;
    this.jobSet = new JobSet(jobs);
  }

  /** A collector with no target. */
  static JobLists empty(Collector collector) {
    return new JobLists(collector, NO_JOBS, NO_LISTS, 0);
  }

  /**
   * A collector's lists as given.
   *
   * @param collector the collector
   * @param jobs its jobs with targets, sorted by name, distinct
   * @param lists their lists, each non-empty and in identity-hash order
   * @param count the lists' total size
   */
  static JobLists of(Collector collector, String[] jobs, ImmutableList<Target>[] lists,
      int count) {
    return new JobLists(collector, jobs, lists, count);
  }

  /** The same lists for a collector value with another node. */
  JobLists withCollector(Collector c) {
    return new JobLists(c, jobs, lists, count);
  }

  /** The targets of {@code job}, in identity-hash order; empty when none. */
  List<Target> targets(String job) {
    int i = Arrays.binarySearch(jobs, job);
    return i < 0 ? ImmutableList.of() : lists[i];
  }

  /** The jobs with at least one target, in name order: a view, not a copy. */
  Set<String> jobs() {
    return jobSet;
  }

  /**
   * These lists with some jobs' lists replaced.
   *
   * @param changedJobs the jobs whose lists change, sorted by name, distinct
   * @param changedLists their new lists (empty ones are dropped)
   * @param n how many
   */
  JobLists with(String[] changedJobs, ImmutableList<Target>[] changedLists, int n) {
    // Count first, so the two arrays are allocated once at their size.
    int length = jobs.length;
    for (int c = 0; c < n; c++) {
      boolean existed = Arrays.binarySearch(jobs, changedJobs[c]) >= 0;
      boolean kept = !changedLists[c].isEmpty();
      length += (kept ? 1 : 0) - (existed ? 1 : 0);
    }
    String[] outJobs = new String[length];
    @SuppressWarnings("unchecked")
    ImmutableList<Target>[] outLists =
        (ImmutableList<Target>[]) new ImmutableList<?>[outJobs.length];
    int w = 0;
    int o = 0;
    // The count follows the changed lists alone: the untouched ones are not read.
    int total = count;
    for (int c = 0; c < n; c++) {
      String job = changedJobs[c];
      while (o < jobs.length && jobs[o].compareTo(job) < 0) {
        outJobs[w] = jobs[o];
        outLists[w++] = lists[o++];
      }
      if (o < jobs.length && jobs[o].equals(job)) {
        total -= lists[o].size();
        o++;
      }
      total += changedLists[c].size();
      if (!changedLists[c].isEmpty()) {
        outJobs[w] = job;
        outLists[w++] = changedLists[c];
      }
    }
    while (o < jobs.length) {
      outJobs[w] = jobs[o];
      outLists[w++] = lists[o++];
    }
    if (w != length) {
      throw new IllegalStateException("jobs " + w + ", counted " + length);
    }
    return new JobLists(collector, outJobs, outLists, total);
  }

  /** An unmodifiable set over a sorted array; contains() is a binary search. */
  private static final class JobSet extends AbstractSet<String> {
    private final String[] jobs;

    JobSet(String[] jobs) {
      this.jobs = jobs;
    }

    @Override
    public Iterator<String> iterator() {
      return new Iterator<>() {
        private int i;

        @Override
        public boolean hasNext() {
          return i < jobs.length;
        }

        @Override
        public String next() {
          if (i >= jobs.length) {
            throw new NoSuchElementException();
          }
          return jobs[i++];
        }
      };
    }

    @Override
    public int size() {
      return jobs.length;
    }

    @Override
    public boolean contains(Object o) {
      return o instanceof String && Arrays.binarySearch(jobs, o) >= 0;
    }
  }
}
