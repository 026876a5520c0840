package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.IntList;

/**
 * A strategy's placement logic, driven by the {@link Engine}. The engine finds the difference of
 * each call and hands the placer only what changed, as slots (see {@link Assignment}); the placer
 * decides where targets go by writing to the assignment. Called on the writer thread only, one
 * call at a time.
 *
 * <p>These are the callbacks every strategy hears. A layer that places by partition implements
 * {@link Partitioned} besides; a placer that continues from state it keeps about its view
 * implements {@link Continuing}.
 */
public interface Placer {

  /**
   * Whether a relabel of a known target may change where this strategy places it, so that the
   * engine hands it to {@link #nodesChanged}. By default: its node changed.
   *
   * @param from the target with its previous labels
   * @param to the same target with its new labels
   * @return true to have it looked at again
   */
  default boolean placementLabelsChanged(Target from, Target to) {
    return !from.node().equals(to.node());
  }

  /**
   * The caller's node-to-zone topology changed ({@link NodeZones} already has it). A strategy
   * that places by zone re-places the targets whose zone changed; by default it does nothing.
   *
   * @param members the current members, not empty
   * @param assignment the view to place in
   */
  default void topologyChanged(Members members, Assignment assignment) {}

  /**
   * Targets were added or removed. Added targets are in the assignment, unassigned; removed ones
   * are already unassigned and gone from the assignment's order, but their slots still answer
   * {@link Assignment#target} until the operation ends. With no members, a placer only updates
   * its own indexes.
   *
   * @param added new targets' slots, identity-hash order
   * @param removed dropped targets' slots, identity-hash order
   * @param members the current members; may be empty
   * @param assignment the view to place in
   */
  void targetsChanged(IntList added, IntList removed, Members members, Assignment assignment);

  /**
   * Known targets whose {@code __meta_*} labels changed so that their node changed. They keep
   * their slot and their collector (the engine carries the new labels), but a strategy that
   * places by node must look at them again. Called after {@link #targetsChanged} in the same
   * operation; by default it does nothing.
   *
   * @param renoded the slots, identity-hash order
   * @param members the current members; may be empty
   * @param assignment the view to place in
   */
  default void nodesChanged(IntList renoded, Members members, Assignment assignment) {}

  /**
   * Known targets whose {@linkplain Assignment#cost cost} changed (and nothing else, or also their
   * labels). The engine has already updated {@link Assignment#cost} and the owners'
   * {@link Member#cost()} totals; the targets keep their collectors unless the placer moves them.
   * The cost churn rule every placer follows: a change of cost alone moves a target only when a
   * collector's bound is exceeded (hysteresis allowed). Called after {@link #targetsChanged} and
   * {@link #nodesChanged} in the same operation, only when members exist; by default it does
   * nothing (placement that does not read costs after placing, or that re-places on every change
   * anyway, needs nothing here).
   *
   * @param recosted the slots, identity-hash order
   * @param members the current members, not empty
   * @param assignment the view to place in
   */
  default void costsChanged(IntList recosted, Members members, Assignment assignment) {}

  /**
   * The (non-empty) member set changed.
   *
   * @param change what changed; its orphans are already unassigned
   * @param assignment the view to place in
   */
  void collectorsChanged(CollectorSetChange change, Assignment assignment);
}
