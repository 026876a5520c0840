package dev.apportion.allocation.internal.strategy;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.internal.engine.Engine;
import dev.apportion.allocation.internal.engine.Placer;
import dev.apportion.allocation.spi.AllocationStrategyProvider;
import dev.apportion.allocation.spi.AllocatorSpec;

/** The built-in strategies' providers, registered with {@link java.util.ServiceLoader}. */
public final class Providers {
  static final String CONSISTENT_HASHING = "consistent-hashing";
  static final String RENDEZVOUS = "rendezvous";
  static final String LEAST_WEIGHTED = "least-weighted";
  static final String PER_NODE = "per-node";

  /**
   * Virtual nodes of per-node's consistent-hashing fallback. Its pool (targets with no node, or
   * on a node with no collector) is usually a few percent of the targets, a handful per
   * collector, so the bounded-load cap decides its balance, not the arcs; 32 tokens a collector
   * instead of 256 make the ring it rebuilds on every collector change 8 times smaller.
   */
  static final int FALLBACK_VIRTUAL_NODES = 32;

  private Providers() {}

  static Allocator engine(AllocatorSpec spec, Placer placer) {
    return new Engine(spec.strategy(), placer, spec.listeners(), spec.movedShareWarning());
  }

  /** A placer for a strategy that can serve as per-node's fallback. */
  static Placer fallbackPlacer(String name, AllocatorSpec spec) {
    switch (name) {
      case CONSISTENT_HASHING:
        return new BoundedLoadPlacer(spec.loadFactor(), FALLBACK_VIRTUAL_NODES);
      case RENDEZVOUS:
        return new RendezvousPlacer();
      case LEAST_WEIGHTED:
        return new LeastWeightedPlacer();
      default:
        throw new IllegalArgumentException("per-node can fall back only to " + CONSISTENT_HASHING
            + ", " + RENDEZVOUS + " or " + LEAST_WEIGHTED + ", not '" + name + "'");
    }
  }

  /** {@code consistent-hashing}, the default strategy. */
  public static final class ConsistentHashing implements AllocationStrategyProvider {
    /** For {@link java.util.ServiceLoader}. */
    public ConsistentHashing() {}

    @Override
    public String name() {
      return CONSISTENT_HASHING;
    }

    @Override
    public Allocator create(AllocatorSpec spec) {
      return engine(spec, new BoundedLoadPlacer(spec.loadFactor()));
    }
  }

  /** {@code rendezvous}. */
  public static final class Rendezvous implements AllocationStrategyProvider {
    /** For {@link java.util.ServiceLoader}. */
    public Rendezvous() {}

    @Override
    public String name() {
      return RENDEZVOUS;
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
      return LEAST_WEIGHTED;
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
      return PER_NODE;
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
