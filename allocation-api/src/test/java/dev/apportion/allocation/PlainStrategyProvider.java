package dev.apportion.allocation;

import dev.apportion.allocation.spi.AllocationStrategyProvider;
import dev.apportion.allocation.spi.AllocatorSpec;

/**
 * Test-only provider of strategy {@code test-plain}, which uses no fallback (it keeps the
 * interface's default {@code usesFallback()}). Registered in
 * {@code src/test/resources/META-INF/services}.
 */
public final class PlainStrategyProvider implements AllocationStrategyProvider {
  static final String NAME = "test-plain";

  /** For {@link java.util.ServiceLoader}. */
  public PlainStrategyProvider() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Allocator create(AllocatorSpec spec) {
    return new RecordingAllocator(spec);
  }
}
