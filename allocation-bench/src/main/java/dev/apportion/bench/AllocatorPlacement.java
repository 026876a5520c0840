package dev.apportion.bench;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.List;
import java.util.Map;

/** An Apportion {@link Allocator}, with a listener that counts what each call moved. */
final class AllocatorPlacement implements Placement {
  private final Allocator allocator;
  private int moved;

  AllocatorPlacement(String name, int replicas) {
    int at = name.indexOf(LOAD_FACTOR);
    String strategy = at < 0 ? name : name.substring(0, at);
    Allocators.Builder b;
    if (strategy.equals(PER_NODE_NO_ZONES)) {
      b = Allocators.builder(Allocators.PER_NODE).noPartitioning();
    } else if (strategy.endsWith(ZONES)) {
      b = Allocators.builder(strategy.substring(0, strategy.length() - ZONES.length()))
          .zoneAware().maxSkew(VARIANT_MAX_SKEW);
    } else {
      b = Allocators.builder(strategy);
    }
    if (replicas != 1) {
      b.replicas(replicas);
    }
    if (at >= 0) {
      b.loadFactor(Double.parseDouble(name.substring(at + 1)));
    }
    this.allocator = b
        // Benchmarks and simulations cause large moves on purpose (a whole rollout); the
        // engine's warning about them would only be noise here.
        .warnWhenMovedShareExceeds(1.0)
        .listener(this::record)
        .build();
  }

  @Override
  public void setNodeZones(Map<String, String> zoneByNode) {
    allocator.setNodeZones(zoneByNode);
  }

  private void record(AllocationChange change) {
    moved += change.reassigned();
  }

  @Override
  public int setCollectors(List<Collector> collectors) {
    moved = 0;
    allocator.setCollectors(collectors);
    return moved;
  }

  @Override
  public int setTargets(List<Target> targets) {
    moved = 0;
    allocator.setTargets(targets);
    return moved;
  }

  @Override
  public int lastMoved() {
    return moved;
  }

  @Override
  public List<Target> targetsFor(String collector, String job) {
    return allocator.targetsFor(collector, job);
  }

  @Override
  public Allocation allocation() {
    return allocator.snapshot();
  }
}
