package dev.apportion.allocation;

import dev.apportion.allocation.spi.AllocationStrategyProvider;
import dev.apportion.allocation.spi.AllocatorSpec;

/**
 * Test-only provider that claims {@code test-fixed} too. Not registered in META-INF/services: only
 * {@link ServiceFileClassLoader} makes it visible, to test the duplicate-name check.
 */
public final class DuplicateFixedStrategyProvider implements AllocationStrategyProvider {

  /** For {@link java.util.ServiceLoader}. */
  public DuplicateFixedStrategyProvider() {}

  @Override
  public String name() {
    return FixedStrategyProvider.NAME;
  }

  @Override
  public Allocator create(AllocatorSpec spec) {
    return new RecordingAllocator(spec);
  }
}
