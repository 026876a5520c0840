package dev.apportion.allocation.internal;

import dev.apportion.allocation.Allocators;

/**
 * The shared contract, held by zone-aware {@code least-weighted}: partitioning is a layer
 * around the strategy, and must keep every promise the strategy makes (completeness, blips,
 * no-op re-sets).
 */
class ZoneAwareLeastWeightedContractTest extends AllocatorContractTest {
  @Override
  Allocators.Builder builder() {
    return Allocators.builder(Allocators.LEAST_WEIGHTED).zoneAware().maxSkew(2);
  }

  @Override
  boolean deterministic() {
    return false; // least-weighted depends on history, within a partition as without one
  }
}
