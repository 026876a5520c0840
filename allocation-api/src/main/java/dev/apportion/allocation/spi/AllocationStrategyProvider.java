package dev.apportion.allocation.spi;

import dev.apportion.allocation.Allocator;

/**
 * Provides one allocation strategy, found by name by {@link dev.apportion.allocation.Allocators}
 * through {@link java.util.ServiceLoader}. Register an implementation with a {@code provides}
 * clause in {@code module-info.java} or a {@code META-INF/services} file.
 *
 * <p>Implementations must be stateless: every {@link #create} returns an allocator that shares no
 * mutable state with any other.
 *
 * @since 0.1.0
 */
public interface AllocationStrategyProvider {

  /**
   * The strategy's name, as users write it ({@code consistent-hashing}, {@code per-node}, ...).
   *
   * @return the name; not blank, unique among the providers on the module or class path
   */
  String name();

  /**
   * Whether this strategy places some targets through a fallback strategy. When false, asking
   * for a fallback is an error the factory reports.
   *
   * @return true when {@link AllocatorSpec#fallback()} is used
   */
  default boolean usesFallback() {
    return false;
  }

  /**
   * Whether this strategy can partition its collectors and targets by a key (see {@link
   * AllocatorSpec#partitionKey()}). When false, asking for partitioning is an error the factory
   * reports.
   *
   * @return true when {@link AllocatorSpec#partitionKey()} and {@link AllocatorSpec#maxSkew()}
   *     are used
   */
  default boolean supportsPartitioning() {
    return false;
  }

  /**
   * Whether this strategy can place each target on several collectors (see {@link
   * AllocatorSpec#replicas()}). When false, asking for more than one replica is an error the
   * factory reports, and {@link #create} is only given specs with one replica.
   *
   * @return true when {@link AllocatorSpec#replicas()} is used
   */
  default boolean supportsReplicas() {
    return false;
  }

  /**
   * A new allocator.
   *
   * @param spec what the user asked for; the factory has already checked that its strategy is
   *     this provider's and that a named fallback exists
   * @return a new allocator with its own state
   * @throws IllegalArgumentException if this strategy cannot honour {@code spec}
   */
  Allocator create(AllocatorSpec spec);
}
