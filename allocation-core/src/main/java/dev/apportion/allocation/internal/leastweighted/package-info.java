/**
 * {@code least-weighted}: {@link
 * dev.apportion.allocation.internal.leastweighted.LeastWeightedPlacer} keeps a target on its
 * collector while that collector lives and gives new or orphaned targets to the least-loaded
 * collector, as the OpenTelemetry target allocator does. The one built-in strategy whose
 * placement depends on history.
 */
package dev.apportion.allocation.internal.leastweighted;
