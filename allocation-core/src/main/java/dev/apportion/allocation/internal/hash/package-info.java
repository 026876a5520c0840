/**
 * The hash functions placement is derived from, each written once: SplitMix64's finalizer and
 * the consistent ring's tokens. A leaf: it uses nothing of the project, and both the exported
 * rings ({@code dev.apportion.allocation.ring}) and the engine's placers use it. Not exported;
 * what is here never changes its output, since placements would change with it.
 */
package dev.apportion.allocation.internal.hash;
