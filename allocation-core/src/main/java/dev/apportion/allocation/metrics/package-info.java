/**
 * Micrometer metrics for an allocator: {@link dev.apportion.allocation.metrics.AllocatorMetrics},
 * attached as an {@link dev.apportion.allocation.AllocationListener}. See
 * {@code docs/observability.md} for the meters, their Prometheus names and the OpenTelemetry
 * target allocator metrics they correspond to.
 */
package dev.apportion.allocation.metrics;
