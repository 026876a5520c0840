package dev.apportion.allocation;

import java.util.List;

/**
 * One change an {@link Allocator} applied: the call that caused it, the snapshots before and
 * after, and every target whose placement changed. Immutable.
 *
 * @since 0.1.0
 */
public interface AllocationChange {

  /** The write call that caused a change. */
  enum Cause {
    /** {@link Allocator#setTargets}. */
    SET_TARGETS,
    /**
     * {@link Allocator#setCollectors}, or {@link Allocator#setNodeZones} (the collectors'
     * topology: it moves targets the way a collector change does).
     */
    SET_COLLECTORS
  }

  /**
   * The call that caused this change.
   *
   * @return the cause
   */
  Cause cause();

  /**
   * The strategy of the allocator that applied it.
   *
   * @return the strategy's name
   */
  String strategy();

  /**
   * The state before the change.
   *
   * @return the previous snapshot
   */
  Allocation before();

  /**
   * The state after the change (the one now published).
   *
   * @return the new snapshot
   */
  Allocation after();

  /**
   * Every target whose collector changed, in identity-hash order: targets placed on a collector
   * for the first time or after being unassigned (no {@linkplain Move#from() from}), targets
   * dropped or made unassigned (no {@linkplain Move#to() to}), and targets reassigned from one
   * collector to another. A new target that stays unassigned is not a move (it is in
   * {@link Allocation#unassigned()}), nor is a target whose only change is its labels (see
   * {@link #relabeled()}).
   *
   * @return an unmodifiable list
   */
  List<Move> moves();

  /**
   * Every known target whose labels changed in this call (its {@code __meta_*} labels: its
   * identity did not), with its new labels, in identity-hash order: what a collector needs to
   * re-run its relabeling rules without diffing snapshots. A relabeled target that also moved is
   * in {@link #moves()} too.
   *
   * @return an unmodifiable list; empty for collector changes
   */
  List<Target> relabeled();

  /**
   * How many targets that were assigned before the change, and are still known after it, are now
   * on another collector or unassigned: the churn a rollout causes. New and removed targets do
   * not count.
   *
   * @return the count
   */
  int reassigned();

  /**
   * How long the allocator took to compute and publish the change, in nanoseconds (listeners
   * excluded).
   *
   * @return the duration
   */
  long durationNanos();
}
