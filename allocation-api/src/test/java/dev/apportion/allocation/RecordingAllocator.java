package dev.apportion.allocation;

import dev.apportion.allocation.spi.AllocatorSpec;
import java.util.Collection;
import java.util.List;

/** A stub allocator that only records the spec it was created with. */
final class RecordingAllocator implements Allocator {
  private final AllocatorSpec spec;

  RecordingAllocator(AllocatorSpec spec) {
    this.spec = spec;
  }

  AllocatorSpec spec() {
    return spec;
  }

  @Override
  public void setTargets(Collection<Target> targets) {
    throw new UnsupportedOperationException("stub");
  }

  @Override
  public void setCollectors(Collection<Collector> collectors) {
    throw new UnsupportedOperationException("stub");
  }

  @Override
  public List<Target> targetsFor(String collector, String job) {
    return List.of();
  }

  @Override
  public Allocation snapshot() {
    throw new UnsupportedOperationException("stub");
  }

  @Override
  public String strategy() {
    return spec.strategy();
  }
}
