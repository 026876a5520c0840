package dev.apportion.bench.sim;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.List;

/**
 * What the simulator drives: one strategy in one {@link Mode}. It receives the cluster's changes
 * as full sets, the way a collector source and service discovery deliver them, and shows the
 * resulting assignment. Single-threaded.
 */
public interface Subject {

  /**
   * The strategy's name.
   *
   * @return the name
   */
  String strategy();

  /**
   * Replaces the collector set.
   *
   * @param collectors the full set
   * @return how many known, assigned targets this call moved to another collector or unassigned
   */
  int setCollectors(List<Collector> collectors);

  /**
   * Replaces the target set.
   *
   * @param targets the full set
   * @return how many known, assigned targets this call moved to another collector or unassigned
   */
  int setTargets(List<Target> targets);

  /**
   * The assignment now.
   *
   * @return the current state
   */
  Allocation allocation();
}
