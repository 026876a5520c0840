/**
 * {@code consistent-hashing}, the default strategy: consistent hashing with bounded loads, a
 * pure function of the target and collector sets that moves few targets on a change. {@link
 * dev.apportion.allocation.internal.chash.ConsistentHashingPlacer} is the entry point and its
 * design note the place to start.
 *
 * <p><b>What lives here</b>, in the order a placement uses it:
 * <ul>
 *   <li>{@link dev.apportion.allocation.internal.chash.TokenRing}: the collectors' tokens on the
 *       ring (the positions {@code dev.apportion.allocation.internal.hash.RingTokens} defines),
 *       rebuilt incrementally when collectors change.
 *   <li>{@link dev.apportion.allocation.internal.chash.LoadBounds}: each collector's cap (and,
 *       for weighted placements, floor), drawn so that a drift of the load changes few caps.
 *   <li>{@link dev.apportion.allocation.internal.chash.BoundedMatching}: the placement from
 *       scratch, a deferred-acceptance matching in rounds: round 1 on the ring, then probe rounds
 *       for the rejected, then a clockwise walk for the few left.
 *   <li>{@link dev.apportion.allocation.internal.chash.IncrementalMatching}: the same result for
 *       a change, continued from the last matching's round 1 instead of recomputed, with
 *       {@link dev.apportion.allocation.internal.chash.KeptArcKeys} (the over-full collectors'
 *       sorted round-1 keys, kept and carried over changes) and {@link
 *       dev.apportion.allocation.internal.chash.ViewSearch} (positions in a view by hash).
 *   <li>{@link dev.apportion.allocation.internal.chash.FloorPhase}: for weighted placements, lets
 *       a collector under its floor extend its arcs until it reaches it.
 *   <li>{@link dev.apportion.allocation.internal.chash.CostChurnRule}: a change of costs alone
 *       moves nothing until a collector strays past its bound by more than a slack.
 *   <li>{@link dev.apportion.allocation.internal.chash.ViewScratch}: the per-position scratch
 *       arrays the passes above share.
 * </ul>
 *
 * <p>Uses the engine's contract ({@code engine.Placer}, {@code engine.Assignment}) and the
 * leaves; knows nothing of partitions or per-node, which wrap it as any other strategy.
 */
package dev.apportion.allocation.internal.chash;
