/**
 * Apportion's public API: {@link dev.apportion.allocation.Collector} and
 * {@link dev.apportion.allocation.Target} values, the {@link dev.apportion.allocation.Allocator}
 * contract, its {@link dev.apportion.allocation.Allocation} snapshots and the
 * {@link dev.apportion.allocation.Allocators} factory.
 */
package dev.apportion.allocation;
