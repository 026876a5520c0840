/**
 * Replicas: every target on k distinct collectors. {@link
 * dev.apportion.allocation.internal.replica.ReplicatedAllocator} runs one allocator per replica
 * rank (rank 0 is the strategy exactly as with one replica) and decides from their choices where
 * each further replica goes ({@code ReplicaPlacement}, by the tiers of {@link
 * dev.apportion.allocation.internal.replica.ReplicaRule}); {@code ReplicatedSnapshot} is the
 * readers' view of the result.
 */
package dev.apportion.allocation.internal.replica;
