package dev.apportion.allocation.internal;

import com.google.common.collect.ImmutableList;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.AbstractList;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.RandomAccess;
import java.util.Set;
import java.util.function.Consumer;

/**
 * One collector's part of a snapshot: its collector value and its targets, all in one array,
 * grouped by job in job-name order and each job's run in identity-hash order, with the jobs'
 * names and the ends of their runs beside it. Immutable. A change to the collector's targets
 * copies its array once (runs of untouched jobs as whole ranges) and, when no job came or went,
 * shares the names; other collectors' entries are shared.
 *
 * <p>Why one array, not a list per job: a collector holds about a hundred targets over a few jobs
 * to a few dozen; a list object and an array per job cost some 35 bytes of headers and
 * references per job, a third of what the whole snapshot keeps per target when jobs hold one or
 * two targets each, and a change that reaches a list reads the entry, its array of lists, the list
 * and the list's array, one cache miss after another. Here the run is found in the entry's arrays.
 *
 * <p>Reads: {@link #targets} is a binary search of the names and returns the job's list view,
 * made on the job's first read and kept (a race between readers makes it twice at worst: views
 * are immutable, their fields final), so repeated reads allocate nothing and no read copies.
 * {@link #jobs} returns a set view over the names, made once with them.
 */
final class JobLists {
  private static final String[] NO_JOBS = {};
  private static final int[] NO_ENDS = {};
  private static final Target[] NO_TARGETS = {};
  private static final List<?>[] NO_VIEWS = {};

  final Collector collector;
  /** Targets held, all jobs together: the length of {@link #targets}. */
  final int count;
  /** The jobs with targets, in name order, distinct. */
  private final String[] jobs;
  /** By job index: where its run in {@link #targets} ends (it starts where the last one ended). */
  private final int[] ends;
  private final Target[] targets;
  private final Set<String> jobSet;
  /** By job index: its list view once read; null until then. */
  private final List<Target>[] views;

  @SuppressWarnings("unchecked")
  private JobLists(Collector collector, String[] jobs, Set<String> jobSet, int[] ends,
      Target[] targets) {
    this.collector = collector;
    this.jobs = jobs;
    this.jobSet = jobSet;
    this.ends = ends;
    this.targets = targets;
    this.count = targets.length;
    this.views = (List<Target>[]) (jobs.length == 0 ? NO_VIEWS : new List<?>[jobs.length]);
  }

  /** A collector with no target. */
  static JobLists empty(Collector collector) {
    return new JobLists(collector, NO_JOBS, Set.of(), NO_ENDS, NO_TARGETS);
  }

  /**
   * A collector's targets as given.
   *
   * @param collector the collector
   * @param jobs its jobs with targets, sorted by name, distinct
   * @param ends by job index, the end of its run in {@code targets}; runs are non-empty
   * @param targets the targets, by job in the order of {@code jobs}, each run in identity-hash
   *     order; never written again
   */
  static JobLists of(Collector collector, String[] jobs, int[] ends, Target[] targets) {
    return new JobLists(collector, jobs, new JobSet(jobs), ends, targets);
  }

  /**
   * These jobs' names with other targets: {@code ends} and {@code targets} as in {@link #of}, for
   * the same jobs as this entry's.
   */
  JobLists withTargets(int[] newEnds, Target[] newTargets) {
    return new JobLists(collector, jobs, jobSet, newEnds, newTargets);
  }

  /** The same targets for a collector value with another node. */
  JobLists withCollector(Collector c) {
    return new JobLists(c, jobs, jobSet, ends, targets);
  }

  /** The targets of {@code job}, in identity-hash order; empty when none. */
  List<Target> targets(String job) {
    int i = Arrays.binarySearch(jobs, job);
    if (i < 0) {
      return ImmutableList.of();
    }
    List<Target> v = views[i];
    if (v == null) {
      v = new Run(targets, start(i), ends[i]);
      views[i] = v;
    }
    return v;
  }

  /** The jobs with at least one target, in name order: a view, not a copy. */
  Set<String> jobs() {
    return jobSet;
  }

  // For the publisher, which builds the next entry from this one's arrays; callers never write.

  /** How many jobs. */
  int jobCount() {
    return jobs.length;
  }

  /** The {@code i}th job's name, in name order. */
  String job(int i) {
    return jobs[i];
  }

  /** Where the {@code i}th job's run starts in {@link #all()}. */
  int start(int i) {
    return i == 0 ? 0 : ends[i - 1];
  }

  /** Where the {@code i}th job's run ends in {@link #all()}. */
  int end(int i) {
    return ends[i];
  }

  /** Every target, runs by job: read-only. */
  Target[] all() {
    return targets;
  }

  /** An unmodifiable list over a run of an array no one writes again. */
  private static final class Run extends AbstractList<Target> implements RandomAccess {
    private final Target[] array;
    private final int from;
    private final int to;

    Run(Target[] array, int from, int to) {
      this.array = array;
      this.from = from;
      this.to = to;
    }

    @Override
    public Target get(int index) {
      if (index < 0 || index >= to - from) {
        throw new IndexOutOfBoundsException("index " + index + ", size " + (to - from));
      }
      return array[from + index];
    }

    @Override
    public int size() {
      return to - from;
    }

    @Override
    public Object[] toArray() {
      return Arrays.copyOfRange(array, from, to, Object[].class);
    }

    @Override
    public Iterator<Target> iterator() {
      return new Iterator<>() {
        private int i = from;

        @Override
        public boolean hasNext() {
          return i < to;
        }

        @Override
        public Target next() {
          if (i >= to) {
            throw new NoSuchElementException();
          }
          return array[i++];
        }
      };
    }

    @Override
    public void forEach(Consumer<? super Target> action) {
      for (int i = from; i < to; i++) {
        action.accept(array[i]);
      }
    }
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
