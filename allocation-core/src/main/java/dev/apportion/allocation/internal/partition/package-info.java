/**
 * Partitioned placement: {@link dev.apportion.allocation.internal.partition.PartitionedPlacer}
 * keeps each target inside its partition (its zone by default, or any label's value: {@link
 * dev.apportion.allocation.internal.partition.PartitionKey}) by running one instance of the
 * wrapped strategy per partition, over the partition's collectors and targets, and one more
 * cluster-wide for the targets no partition takes. It is the opt-in zone-aware form of every
 * placement strategy and {@code per-node}'s zone-aware fallback.
 *
 * <p>Beside the layer: {@link dev.apportion.allocation.internal.partition.PartitionGroup} (one
 * partition, or the cluster-wide group: its placer, its members and its view of the targets),
 * {@link dev.apportion.allocation.internal.partition.MemberPartitions} (the collectors grouped by
 * key value) and {@link dev.apportion.allocation.internal.partition.SlotGroups} (each target's
 * group, by slot).
 *
 * <p>Wraps any {@code engine.Placer} it is given and implements {@code engine.Partitioned}, the
 * callbacks only a partitioned layer needs (what sits outside its partition). Uses no strategy
 * by name.
 */
package dev.apportion.allocation.internal.partition;
