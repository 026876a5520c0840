/**
 * Replicas: every target on k distinct collectors. {@link
 * dev.apportion.allocation.internal.replica.ReplicatedAllocator} runs the strategy's allocator for
 * the primaries (exactly as with one replica) and places each further replica on a ring of the
 * collectors under bounded loads ({@code ReplicaPlacement}, by the tiers of {@link
 * dev.apportion.allocation.internal.replica.ReplicaRule}, over a {@code ReplicaRing}), keeping
 * what it decided so that a change of collectors re-decides only what it touches; {@code
 * ReplicatedSnapshot} is the readers' view of the result, its owners in an {@code OwnerTable} that
 * snapshots share chunk by chunk.
 */
package dev.apportion.allocation.internal.replica;
