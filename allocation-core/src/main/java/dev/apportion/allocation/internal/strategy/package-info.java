/**
 * <b>Internal:</b> the built-in strategies ({@code consistent-hashing}, {@code rendezvous},
 * {@code least-weighted}, {@code per-node}) and their service-loader providers. Not exported by
 * the module; users reach them by name through {@link dev.apportion.allocation.Allocators}. May
 * change in any release.
 */
package dev.apportion.allocation.internal.strategy;
