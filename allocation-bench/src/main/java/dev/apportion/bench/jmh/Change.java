package dev.apportion.bench.jmh;

/**
 * A change the change benchmarks ({@link ReassignmentTimeChange}, {@link FreshTimeChange}) apply
 * to a placed cluster, chosen with {@code -p change=NAME}.
 */
public enum Change {
  /** A collector leaves (the next one in turn at each operation). */
  REMOVE_ONE,
  /** A collector joins, on a new node with no target on it. */
  ADD_ONE,
  /**
   * A rolling-restart step: a pod leaves and a pod with a new name arrives on the same node, in
   * one collector update.
   */
  REPLACE_ONE,
  /** 1% of the targets are replaced by new ones (pods rescheduled), in one target update. */
  REPLACE_TARGETS_1PCT,
  /**
   * The same targets again, as newly built objects equal to the placed ones with the same labels:
   * the call every embedding collector makes on a discovery refresh that found nothing new.
   */
  RESET_EQUAL;

  /**
   * Whether the change is a target update, not a collector update.
   *
   * @return true for the changes of targets
   */
  boolean ofTargets() {
    return this == REPLACE_TARGETS_1PCT || this == RESET_EQUAL;
  }
}
