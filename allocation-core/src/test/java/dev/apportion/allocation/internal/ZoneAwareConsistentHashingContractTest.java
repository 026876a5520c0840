package dev.apportion.allocation.internal;

import dev.apportion.allocation.Allocators;

/**
 * The shared contract, held by zone-aware {@code consistent-hashing}: partitioning is a layer
 * around the strategy, and must keep every promise the strategy makes (completeness, blips,
 * no-op re-sets).
 */
class ZoneAwareConsistentHashingContractTest extends AllocatorContractTest {
  @Override
  Allocators.Builder builder() {
    return Allocators.builder(Allocators.CONSISTENT_HASHING).zoneAware().maxSkew(2);
  }
}
