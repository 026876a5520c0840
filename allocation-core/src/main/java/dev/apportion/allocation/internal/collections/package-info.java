/**
 * Primitive collections and helpers the engine and the strategies share: {@link
 * dev.apportion.allocation.internal.collections.IntList} (a growable {@code int[]}), {@link
 * dev.apportion.allocation.internal.collections.IntChunks} (an {@code int} array in chunks, for
 * arrays that would otherwise take a G1 region of their own), {@link
 * dev.apportion.allocation.internal.collections.LongSort} (a radix sort of {@code long}s),
 * {@link dev.apportion.allocation.internal.collections.Headroom} (how large to make an array
 * that must absorb a few percent of new elements without growing) and {@link
 * dev.apportion.allocation.internal.collections.Passes} (how a pass over a large array is cut
 * into calls so that the JIT compiles it early: the one place that explains such shaping).
 *
 * <p>A leaf: nothing here uses anything of the project. Not thread-safe; none of it allocates
 * except to grow.
 */
package dev.apportion.allocation.internal.collections;
