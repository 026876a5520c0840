package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import java.util.List;

/**
 * A strategy's placement logic, driven by the {@link Engine}. The engine finds the difference of
 * each call and hands the placer only what changed; the placer decides where targets go by
 * writing to the {@link Assignment}. Called on the writer thread only, one call at a time.
 */
public interface Placer {

  /**
   * Targets were added or removed. Added targets are in the assignment, unassigned; removed ones
   * are already gone from it. With no members, a placer only updates its own indexes.
   *
   * @param added new targets, identity-hash order
   * @param removed dropped targets, identity-hash order
   * @param members the current members; may be empty
   * @param assignment the view to place in
   */
  void targetsChanged(List<Target> added, List<Target> removed, Members members,
      Assignment assignment);

  /**
   * Known targets whose {@code __meta_*} labels changed so that their node changed. They are
   * equal to what they were (the engine keeps their collector and carries the new labels), but
   * a strategy that places by node must look at them again. Called after {@link #targetsChanged}
   * in the same operation; by default it does nothing.
   *
   * @param before the targets as they were, identity-hash order
   * @param after the same targets as they are now, in the same order
   * @param members the current members; may be empty
   * @param assignment the view to place in
   */
  default void nodesChanged(List<Target> before, List<Target> after, Members members,
      Assignment assignment) {}

  /**
   * The (non-empty) member set changed.
   *
   * @param change what changed; its orphans are already unassigned
   * @param assignment the view to place in
   */
  void collectorsChanged(CollectorChange change, Assignment assignment);
}
