/**
 * {@code per-node}: {@link dev.apportion.allocation.internal.pernode.PerNodePlacer} puts every
 * target on the collector of its own node (the smallest name among the node's collectors), and
 * hands the rest, the <em>pool</em> (targets with no node, or whose node has no collector), to a
 * fallback strategy through {@link dev.apportion.allocation.internal.pernode.Pool}: which targets
 * are in the pool, the dense ids the fallback knows them by, and its view of the assignment that
 * holds only the pool.
 *
 * <p>The fallback is any {@code engine.Placer} (by default {@code consistent-hashing}, zone-aware
 * through the partitioned layer when asked); per-node passes the partitioned layer's
 * {@code engine.Partitioned} callbacks through, so that what the fallback leaves outside its
 * partition is counted.
 */
package dev.apportion.allocation.internal.pernode;
