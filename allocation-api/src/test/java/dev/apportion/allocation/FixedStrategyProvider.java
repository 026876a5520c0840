package dev.apportion.allocation;

import dev.apportion.allocation.spi.AllocationStrategyProvider;
import dev.apportion.allocation.spi.AllocatorSpec;

/**
 * Test-only provider of strategy {@code test-fixed}, which uses a fallback and
 * can partition. Registered in
 * {@code src/test/resources/META-INF/services}.
 */
public final class FixedStrategyProvider implements AllocationStrategyProvider {
  static final String NAME = "test-fixed";

  /** How many instances {@link java.util.ServiceLoader} made, for the test of what is kept. */
  static final java.util.concurrent.atomic.AtomicInteger INSTANCES =
      new java.util.concurrent.atomic.AtomicInteger();

  /** For {@link java.util.ServiceLoader}. */
  public FixedStrategyProvider() {
    INSTANCES.incrementAndGet();
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public boolean usesFallback() {
    return true;
  }

  @Override
  public boolean supportsPartitioning() {
    return true;
  }

  @Override
  public Allocator create(AllocatorSpec spec) {
    return new RecordingAllocator(spec);
  }
}
