package dev.apportion.allocation.internal.engine;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSortedSet;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The immutable state readers see. A new snapshot shares everything a change did not touch with
 * the previous one: the {@link TargetTable} shards, the per-collector entries and their per-job
 * lists. Publishing one is a single volatile write in the {@link Engine}.
 */
final class Snapshot implements Allocation {
  static final Snapshot EMPTY = new Snapshot(NameIndex.EMPTY,
      new JobLists[0], TargetTable.EMPTY, ImmutableSortedSet.orderedBy(TargetOrder.HASH).build(),
      new long[0], 0);

  /** The collectors, in name order: a view over {@link #entries}, built with nothing. */
  private final Set<Collector> collectors;
  /** Collector name to its index in {@link #entries}; shared while the collector set stays. */
  final NameIndex indexByName;
  /** Per collector, in name order. */
  final JobLists[] entries;
  final TargetTable table;
  final ImmutableSortedSet<Target> unassigned;
  /** Per collector, in name order: the total cost it holds. Never written after construction. */
  final long[] costs;
  private final Set<Target> targetsView;
  private final int outsidePartition;

  Snapshot(NameIndex indexByName, JobLists[] entries, TargetTable table,
      ImmutableSortedSet<Target> unassigned, long[] costs, int outsidePartition) {
    this.costs = costs;
    this.outsidePartition = outsidePartition;
    this.collectors = new CollectorsView();
    this.indexByName = indexByName;
    this.entries = entries;
    this.table = table;
    this.unassigned = unassigned;
    this.targetsView = new TargetsView(table);
  }

  /** This snapshot with another {@link #outsidePartition()} count; shares everything else. */
  Snapshot withOutsidePartition(int count) {
    return new Snapshot(indexByName, entries, table, unassigned, costs, count);
  }

  @Override
  public int outsidePartition() {
    return outsidePartition;
  }

  @Override
  public Set<Collector> collectors() {
    return collectors;
  }

  @Override
  public Set<Target> targets() {
    return targetsView;
  }

  @Override
  public Optional<String> collectorOf(Target target) {
    Objects.requireNonNull(target, "target must not be null");
    return Optional.ofNullable(table.owner(target));
  }

  @Override
  public Set<Target> unassigned() {
    return unassigned;
  }

  /** The entry of a collector, or null. */
  JobLists entry(String collector) {
    Objects.requireNonNull(collector, "collector must not be null");
    int i = indexByName.get(collector);
    return i < 0 ? null : entries[i];
  }

  @Override
  public List<Target> targetsFor(String collector, String job) {
    Objects.requireNonNull(job, "job must not be null");
    JobLists e = entry(collector);
    return e == null ? ImmutableList.of() : e.targets(job);
  }

  @Override
  public Set<String> jobsFor(String collector) {
    JobLists e = entry(collector);
    return e == null ? ImmutableSortedSet.of() : e.jobs();
  }

  @Override
  public int targetCount(String collector) {
    JobLists e = entry(collector);
    return e == null ? 0 : e.count;
  }

  @Override
  public long costOf(String collector) {
    Objects.requireNonNull(collector, "collector must not be null");
    int i = indexByName.get(collector);
    return i < 0 ? 0L : costs[i];
  }

  /**
   * This snapshot with other per-collector cost totals, sharing everything else: what a write
   * that changed only costs publishes.
   */
  Snapshot withCosts(long[] newCosts) {
    return new Snapshot(indexByName, entries, table, unassigned, newCosts,
        outsidePartition);
  }

  @Override
  public String toString() {
    return "Allocation[" + collectors.size() + " collectors, " + table.size() + " targets, "
        + unassigned.size() + " unassigned]";
  }

  /** The collectors of {@link #entries}, in their (name) order; contains() looks up the name. */
  private final class CollectorsView extends AbstractSet<Collector> {
    @Override
    public Iterator<Collector> iterator() {
      return new Iterator<>() {
        private int i;

        @Override
        public boolean hasNext() {
          return i < entries.length;
        }

        @Override
        public Collector next() {
          if (i >= entries.length) {
            throw new NoSuchElementException();
          }
          return entries[i++].collector;
        }
      };
    }

    @Override
    public int size() {
      return entries.length;
    }

    @Override
    public boolean contains(Object o) {
      if (!(o instanceof Collector c)) {
        return false;
      }
      int i = indexByName.get(c.name());
      return i >= 0 && entries[i].collector.equals(c);
    }
  }

  /** An unmodifiable set view of the table; contains() is by identity. */
  private static final class TargetsView extends AbstractSet<Target> {
    private final TargetTable table;

    TargetsView(TargetTable table) {
      this.table = table;
    }

    @Override
    public Iterator<Target> iterator() {
      return table.iterator();
    }

    @Override
    public int size() {
      return table.size();
    }

    @Override
    public boolean contains(Object o) {
      return o instanceof Target t && table.instance(t) != null;
    }
  }
}
