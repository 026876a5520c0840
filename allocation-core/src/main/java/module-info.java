/**
 * Apportion's engine: the hash rings ({@code dev.apportion.allocation.ring}, usable on their
 * own) and the built-in strategies, provided to {@link dev.apportion.allocation.Allocators}
 * through the service loader. Everything under {@code dev.apportion.allocation.internal} is
 * internal and not exported.
 */
module dev.apportion.allocation.core {
  requires transitive dev.apportion.allocation;
  requires com.google.common;
  // @GuardedBy, checked at compile time by Error Prone; not needed at run time.
  requires static com.google.errorprone.annotations;
  requires org.slf4j;
  requires transitive micrometer.core;

  exports dev.apportion.allocation.ownership;
  exports dev.apportion.allocation.ring;
  exports dev.apportion.allocation.metrics;

  provides dev.apportion.allocation.spi.AllocationStrategyProvider with
      dev.apportion.allocation.internal.Providers.ConsistentHashing,
      dev.apportion.allocation.internal.Providers.Rendezvous,
      dev.apportion.allocation.internal.Providers.LeastWeighted,
      dev.apportion.allocation.internal.Providers.PerNode;
}
