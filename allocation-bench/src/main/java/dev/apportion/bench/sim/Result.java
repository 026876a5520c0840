package dev.apportion.bench.sim;

/**
 * What one strategy did in one scenario, measured on the state the scenario ends in (balance,
 * locality, unassigned) and over its steps (moves, time).
 *
 * @param strategy the strategy's name
 * @param scenario the scenario
 * @param collectors collectors at the end
 * @param targets targets known at the end
 * @param loads targets per collector at the end, highest first
 * @param idle collectors with no target
 * @param crossNode assigned targets whose node differs from their collector's node
 * @param nodeKnown assigned targets for which both nodes are known (the base of
 *     {@code crossNode})
 * @param crossZone assigned targets whose zone differs from their collector's zone
 * @param zoneKnown assigned targets for which both zones are known (the base of {@code crossZone})
 * @param moved targets the scenario's steps reassigned, summed over the steps (a target moved
 *     twice counts twice)
 * @param minimumMoved targets that had to move at least once: known at the end, assigned at the
 *     start to a collector that is gone at the end
 * @param unassigned targets assigned to no collector at the end
 * @param nanos wall time of the scenario's allocator calls, summed
 * @param costShares per collector, its cost relative to its capacity over the mean of that
 *     ({@code (cost / capacity) / (total cost / total capacity)}), highest first: 1.0 everywhere
 *     is each collector carrying exactly its capacity's share of the cost
 * @param countShares per collector, its target count relative to its capacity over the mean of
 *     that ({@code (count / capacity) / (assigned / total capacity)}), highest first: with equal
 *     capacities, the load over the mean load
 * @param worstStep over the steps that remove or add exactly one collector, the largest ratio of
 *     the step's moves to its own minimum (what the leaver held; for a join, its capacity's
 *     share of the assigned targets); NaN when no step did
 */
public record Result(String strategy, ClusterScenario scenario, int collectors, int targets,
    // Built once by the simulator, then only read; a List<Integer> would box 1000s of loads.
    @SuppressWarnings("ArrayRecordComponent") int[] loads, int idle, int crossNode, int nodeKnown, int crossZone, int zoneKnown, int moved,
    int minimumMoved, int unassigned, long nanos,
    @SuppressWarnings("ArrayRecordComponent") double[] costShares,
    @SuppressWarnings("ArrayRecordComponent") double[] countShares, double worstStep) {

  /**
   * Targets assigned to some collector.
   *
   * @return the count
   */
  public int assigned() {
    int sum = 0;
    for (int l : loads) {
      sum += l;
    }
    return sum;
  }

  /**
   * The busiest collector's target count, relative to its capacity, over the mean of that (with
   * equal capacities: its load over the mean load).
   *
   * @return the ratio, 0 when nothing is assigned
   */
  public double peakOverMean() {
    return countShares.length == 0 ? 0 : countShares[0];
  }

  /**
   * The idlest collector's target count, relative to its capacity, over the mean of that.
   *
   * @return the ratio, 0 when nothing is assigned
   */
  public double minOverMean() {
    return countShares.length == 0 ? 0 : countShares[countShares.length - 1];
  }

  /**
   * The busiest collector's cost (relative to its capacity) over the mean.
   *
   * @return the ratio, 0 when nothing is assigned
   */
  public double costPeakOverMean() {
    return costShares.length == 0 ? 0 : costShares[0];
  }

  /**
   * The idlest collector's cost (relative to its capacity) over the mean.
   *
   * @return the ratio, 0 when nothing is assigned
   */
  public double costMinOverMean() {
    return costShares.length == 0 ? 0 : costShares[costShares.length - 1];
  }
}
