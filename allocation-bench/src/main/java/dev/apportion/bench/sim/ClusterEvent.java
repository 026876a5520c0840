package dev.apportion.bench.sim;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.List;

/**
 * One step of a {@link ClusterScenario}: a change to the cluster, delivered to a {@link
 * dev.apportion.bench.Placement} as a full set.
 */
sealed interface ClusterEvent {
  /**
   * A new collector set.
   *
   * @param collectors the full set
   */
  record Collectors(List<Collector> collectors) implements ClusterEvent {}

  /**
   * A new target set.
   *
   * @param targets the full set
   */
  record Targets(List<Target> targets) implements ClusterEvent {}
}
