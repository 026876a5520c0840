/**
 * <b>Internal:</b> the allocation engine and the built-in strategies ({@code consistent-hashing},
 * {@code rendezvous}, {@code least-weighted}, {@code per-node}). Not exported by the module, and
 * everything here is package-private except two types that must be public: the service-loader
 * {@link dev.apportion.allocation.internal.Providers} (the {@link java.util.ServiceLoader}
 * contract requires public provider classes) and
 * {@link dev.apportion.allocation.internal.LongSort} (the consistent ring, in another package,
 * sorts its tokens with it). Neither is API: they may change in any release, and on the class
 * path, where the module's boundary does not hold, nothing here is for users. Users reach the
 * strategies by name through {@link dev.apportion.allocation.Allocators}.
 */
package dev.apportion.allocation.internal;
