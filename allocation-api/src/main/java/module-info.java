/**
 * Apportion's public API: the value types {@link dev.apportion.allocation.Collector} and
 * {@link dev.apportion.allocation.Target}, the {@link dev.apportion.allocation.Allocator} engine
 * contract, its {@link dev.apportion.allocation.Allocation} snapshots, and the
 * {@link dev.apportion.allocation.Allocators} factory that finds strategies by name.
 *
 * <p>This module has no third-party dependency. Strategies are provided through
 * {@link dev.apportion.allocation.spi.AllocationStrategyProvider}; {@code allocation-core}
 * provides the built-in ones.
 */
// "module": the qualified export names allocation-core, which this module is compiled without.
@SuppressWarnings("module")
module dev.apportion.allocation {
  exports dev.apportion.allocation;
  exports dev.apportion.allocation.spi;
  // Target identity's internals (the canonical encoding among them), for allocation-core only.
  exports dev.apportion.allocation.identity to dev.apportion.allocation.core;

  uses dev.apportion.allocation.spi.AllocationStrategyProvider;
}
