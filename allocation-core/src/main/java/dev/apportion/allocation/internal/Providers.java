package dev.apportion.allocation.internal;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.spi.AllocationStrategyProvider;
import dev.apportion.allocation.spi.AllocatorSpec;

/** The built-in strategies' providers, registered with {@link java.util.ServiceLoader}. */
public final class Providers {

  /**
   * Virtual nodes of per-node's consistent-hashing fallback. Its pool (targets with no node, or
   * on a node with no collector) is usually a few percent of the targets, a handful per
   * collector, so the bounded-load cap decides its balance, not the arcs; 32 tokens a collector
   * instead of 256 make the ring it rebuilds on every collector change 8 times smaller.
   */
  static final int FALLBACK_VIRTUAL_NODES = 32;

  private Providers() {}

  static Allocator engine(AllocatorSpec spec, Placer placer) {
    return new Engine(spec.strategy(), placer, spec.listeners(), spec.movedShareWarning(), -1L,
        spec.maxTargetsPerCollector().orElse(0), spec.maxCostPerCollector().orElse(0L));
  }

  /** A placer for a strategy that can serve as per-node's fallback. */
  static Placer fallbackPlacer(String name, AllocatorSpec spec) {
    return switch (name) {
      case Allocators.CONSISTENT_HASHING ->
          new ConsistentHashingPlacer(spec.loadFactor(), FALLBACK_VIRTUAL_NODES);
      case Allocators.RENDEZVOUS -> new RendezvousPlacer();
      case Allocators.LEAST_WEIGHTED -> new LeastWeightedPlacer();
      default -> throw new IllegalArgumentException("per-node can fall back only to "
          + Allocators.CONSISTENT_HASHING + ", " + Allocators.RENDEZVOUS + " or "
          + Allocators.LEAST_WEIGHTED + ", not '" + name + "'");
    };
  }

  /** {@code consistent-hashing}, the default strategy. */
  public static final class ConsistentHashing implements AllocationStrategyProvider {
    /** For {@link java.util.ServiceLoader}. */
    public ConsistentHashing() {}

    @Override
    public String name() {
      return Allocators.CONSISTENT_HASHING;
    }

    @Override
    public Allocator create(AllocatorSpec spec) {
      return engine(spec, new ConsistentHashingPlacer(spec.loadFactor()));
    }
  }

  /** {@code rendezvous}. */
  public static final class Rendezvous implements AllocationStrategyProvider {
    /** For {@link java.util.ServiceLoader}. */
    public Rendezvous() {}

    @Override
    public String name() {
      return Allocators.RENDEZVOUS;
    }

    @Override
    public Allocator create(AllocatorSpec spec) {
      return engine(spec, new RendezvousPlacer());
    }
  }

  /** {@code least-weighted}. */
  public static final class LeastWeighted implements AllocationStrategyProvider {
    /** For {@link java.util.ServiceLoader}. */
    public LeastWeighted() {}

    @Override
    public String name() {
      return Allocators.LEAST_WEIGHTED;
    }

    @Override
    public Allocator create(AllocatorSpec spec) {
      return engine(spec, new LeastWeightedPlacer());
    }
  }

  /** {@code per-node}, falling back to {@code consistent-hashing} unless told otherwise. */
  public static final class PerNode implements AllocationStrategyProvider {
    /** For {@link java.util.ServiceLoader}. */
    public PerNode() {}

    @Override
    public String name() {
      return Allocators.PER_NODE;
    }

    @Override
    public boolean usesFallback() {
      return true;
    }

    @Override
    public Allocator create(AllocatorSpec spec) {
      Placer fallback = spec.fallbackDisabled() ? null
          : fallbackPlacer(spec.fallback().orElse(Allocators.DEFAULT_STRATEGY), spec);
      return engine(spec, new PerNodePlacer(fallback));
    }
  }
}
