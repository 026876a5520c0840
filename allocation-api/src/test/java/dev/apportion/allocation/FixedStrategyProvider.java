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

  /** For {@link java.util.ServiceLoader}. */
  public FixedStrategyProvider() {}

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
