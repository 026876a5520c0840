package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.internal.collections.IntList;

/**
 * What a placer that places by partition hears and answers besides the {@link Placer} calls:
 * the partitioned layer, and {@code per-node} around a partitioned fallback. The engine asks a
 * placer for these only when it implements this interface; for any other placer nothing is
 * outside a partition.
 */
public interface Partitioned {

  /**
   * What the members hold outside this placer's view ({@link Assignment#heldOutside}) changed
   * while the view's targets did not: per-node's node-local targets came or went. A placer whose
   * placement reads it (a skew limit) places again.
   *
   * @param members the current members, not empty
   * @param assignment the view to place in
   */
  void heldOutsideChanged(Members members, Assignment assignment);

  /**
   * How many targets the last operation left outside their partition.
   *
   * @return the count
   */
  int outsidePartition();

  /**
   * Of targets the per-collector limit ({@link CollectorLimits}) placed after this placer ran,
   * how many sit outside their partition and are not already counted by
   * {@link #outsidePartition()}.
   *
   * @param placed slots of {@code assignment} (ids of per-node's pool view, for its fallback),
   *     each assigned
   * @param assignment the view the placer places in: the engine's, or per-node's pool view
   * @return the count
   */
  int outsideAmong(IntList placed, Assignment assignment);

  /**
   * As {@link #outsideAmong}, for targets outside this placer's view ({@code per-node}'s
   * node-local targets, around its fallback's pool): how many sit outside their partition, judged
   * by the partition key alone.
   *
   * @param placed slots of {@code assignment}, each assigned, none in this placer's view
   * @param assignment the caller's view
   * @return the count
   */
  int outsideAmongUnviewed(IntList placed, Assignment assignment);
}
