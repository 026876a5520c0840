/**
 * Apportion's property-testing kit: seeded generators of clusters, targets and operation
 * sequences, a model-based runner that checks named allocation invariants after every step and
 * shrinks a failure to a minimal sequence, and the invariants the built-in strategies are held to.
 * Add it with test scope to check your own {@link dev.apportion.allocation.Allocator}. Plain Java:
 * any test framework can call it.
 */
module dev.apportion.allocation.testkit {
  requires transitive dev.apportion.allocation;

  exports dev.apportion.allocation.testkit;
}
