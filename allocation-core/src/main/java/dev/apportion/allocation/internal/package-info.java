/**
 * <b>Internal:</b> the allocation engine and the built-in strategies, not exported by the module.
 * Users reach the strategies by name through {@link dev.apportion.allocation.Allocators}; nothing
 * under this package is API, even where a type is public (public only so that the packages below
 * can use one another; on the class path, where the module's boundary does not hold, nothing here
 * is for users either).
 *
 * <p><b>Where things are.</b>
 * <ul>
 *   <li>{@code Providers} (here): the service-loader entry points that build an allocator from an
 *       {@link dev.apportion.allocation.AllocatorSpec}: an engine with a strategy's placer,
 *       wrapped in the partitioned layer or per-node as the spec asks. The only class that knows
 *       every strategy.
 *   <li>{@code engine}: what every strategy runs on. The store of known targets, the difference
 *       each {@code setTargets} and {@code setCollectors} call makes, the per-collector limit,
 *       publishing the immutable snapshot readers see, and the contract a strategy implements
 *       ({@code Placer}, {@code Assignment}, {@code Member}).
 *   <li>{@code chash}: {@code consistent-hashing}, the default strategy: the token ring, the load
 *       bounds, the bounded matching and its incremental form, the floor phase and the cost churn
 *       rule.
 *   <li>{@code rendezvous}, {@code leastweighted}: the other two placement strategies.
 *   <li>{@code pernode}: {@code per-node}, each target on its node's collector, with a fallback
 *       strategy for the rest.
 *   <li>{@code partition}: the layer that keeps targets inside their zone (or any label's
 *       partition) around any strategy.
 *   <li>{@code collections}, {@code hash}: leaves used by everything above: primitive lists and
 *       sorts, array sizing, the shape of passes over large arrays; the mixer and the ring's
 *       tokens.
 * </ul>
 *
 * <p>Dependencies point down that list: {@code Providers} uses every package; the strategies use
 * {@code engine} (and {@code partition} and {@code pernode} use any strategy only through the
 * {@code Placer} they are given); {@code engine} uses no strategy; the leaves use nothing of the
 * project.
 */
package dev.apportion.allocation.internal;
