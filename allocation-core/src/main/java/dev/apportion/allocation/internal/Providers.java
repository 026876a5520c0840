package dev.apportion.allocation.internal;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.internal.chash.ConsistentHashingPlacer;
import dev.apportion.allocation.internal.engine.Engine;
import dev.apportion.allocation.internal.engine.NodeZones;
import dev.apportion.allocation.internal.engine.Placer;
import dev.apportion.allocation.internal.leastweighted.LeastWeightedPlacer;
import dev.apportion.allocation.internal.partition.PartitionKey;
import dev.apportion.allocation.internal.partition.PartitionedPlacer;
import dev.apportion.allocation.internal.pernode.PerNodePlacer;
import dev.apportion.allocation.internal.replica.ReplicaRule;
import dev.apportion.allocation.internal.replica.ReplicatedAllocator;
import dev.apportion.allocation.internal.rendezvous.RendezvousPlacer;
import dev.apportion.allocation.spi.AllocationStrategyProvider;
import dev.apportion.allocation.spi.AllocatorSpec;
import java.util.function.Function;
import java.util.function.Supplier;

/** The built-in strategies' providers, registered with {@link java.util.ServiceLoader}. */
public final class Providers {

  /**
   * Virtual nodes of per-node's consistent-hashing fallback. Its pool (targets with no node, or
   * on a node with no collector) is usually a few percent of the targets, a handful per
   * collector, so the bounded-load cap decides its balance, not the arcs; 32 tokens a collector
   * instead of 256 make the ring it rebuilds on every collector change 8 times smaller.
   */
  public static final int FALLBACK_VIRTUAL_NODES = 32;

  private Providers() {}

  static Allocator engine(AllocatorSpec spec, Placer placer, NodeZones zones) {
    return new Engine(spec.strategy(), placer, spec.listeners(), spec.movedShareWarning(), zones,
        spec.maxTargetsPerCollector().orElse(0), spec.maxCostPerCollector().orElse(0L));
  }

  /**
   * The allocator of {@code spec}: {@code one} builds it for one replica; for more, {@code one}
   * builds the primary's allocator and a {@link ReplicatedAllocator} places the further replicas.
   */
  static Allocator replicated(AllocatorSpec spec, ReplicaRule rule,
      Function<AllocatorSpec, Allocator> one) {
    if (spec.replicas() == 1) {
      return one.apply(spec);
    }
    return new ReplicatedAllocator(spec, rule, one);
  }

  /**
   * The strategy's placer, partitioned when the spec asks for it (off by default: the placer
   * alone, today's behaviour).
   */
  static Allocator allocator(AllocatorSpec spec, Supplier<Placer> placer) {
    NodeZones zones = new NodeZones();
    if (spec.partitionKey().isEmpty()) {
      if (spec.maxSkew().isPresent()) {
        throw new IllegalArgumentException("maxSkew applies to a partitioned strategy: add "
            + "zoneAware() or partitionBy(...) for " + spec.strategy());
      }
      return engine(spec, placer.get(), zones);
    }
    return engine(spec, partitioned(spec, spec.partitionKey().get(), placer, zones), zones);
  }

  private static Placer partitioned(AllocatorSpec spec, String key, Supplier<Placer> placer,
      NodeZones zones) {
    return new PartitionedPlacer(PartitionKey.of(key, zones), placer,
        spec.maxSkew().orElse(Double.NaN), spec.strategy());
  }

  /** New placers of a strategy that can serve as per-node's fallback. */
  static Supplier<Placer> fallbackPlacer(String name, AllocatorSpec spec) {
    double loadFactor = spec.loadFactor();
    double costLoadFactor = spec.costLoadFactor();
    return switch (name) {
      case Allocators.CONSISTENT_HASHING ->
          // One-sided in per-node's pool: its collectors carry their nodes' targets beside it.
          () -> new ConsistentHashingPlacer(loadFactor, costLoadFactor, FALLBACK_VIRTUAL_NODES,
              false);
      case Allocators.RENDEZVOUS -> RendezvousPlacer::new;
      case Allocators.LEAST_WEIGHTED -> LeastWeightedPlacer::new;
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
    public boolean supportsPartitioning() {
      return true;
    }

    @Override
    public boolean supportsReplicas() {
      return true;
    }

    @Override
    public Allocator create(AllocatorSpec spec) {
      return replicated(spec, ReplicaRule.DISTINCT, ConsistentHashing::one);
    }

    private static Allocator one(AllocatorSpec spec) {
      double loadFactor = spec.loadFactor();
      double costLoadFactor = spec.costLoadFactor();
      return allocator(spec, () -> new ConsistentHashingPlacer(loadFactor, costLoadFactor,
          ConsistentHashingPlacer.VIRTUAL_NODES, true));
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
    public boolean supportsPartitioning() {
      return true;
    }

    @Override
    public boolean supportsReplicas() {
      return true;
    }

    @Override
    public Allocator create(AllocatorSpec spec) {
      Function<AllocatorSpec, Allocator> one = s -> allocator(s, RendezvousPlacer::new);
      return replicated(spec, ReplicaRule.DISTINCT, one);
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
    public boolean supportsPartitioning() {
      return true;
    }

    @Override
    public boolean supportsReplicas() {
      return true;
    }

    @Override
    public Allocator create(AllocatorSpec spec) {
      Function<AllocatorSpec, Allocator> one = s -> allocator(s, LeastWeightedPlacer::new);
      return replicated(spec, ReplicaRule.DISTINCT, one);
    }
  }

  /**
   * {@code per-node}, falling back to {@code consistent-hashing} unless told otherwise; the
   * fallback stays in the target's zone unless {@code noPartitioning()}.
   */
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
    public boolean supportsPartitioning() {
      return true;
    }

    @Override
    public boolean supportsReplicas() {
      return true;
    }

    @Override
    public Allocator create(AllocatorSpec spec) {
      return replicated(spec, ReplicaRule.TARGET_ZONE, PerNode::one);
    }

    private static Allocator one(AllocatorSpec spec) {
      NodeZones zones = new NodeZones();
      if (spec.fallbackDisabled()) {
        if (spec.partitionKey().isPresent() || spec.maxSkew().isPresent()) {
          throw new IllegalArgumentException("per-node partitions only its fallback, and it "
              + "has none (noFallback()): drop partitionBy/zoneAware/maxSkew, or name a fallback");
        }
        return engine(spec, new PerNodePlacer(null), zones);
      }
      Supplier<Placer> fallback =
          fallbackPlacer(spec.fallback().orElse(Allocators.DEFAULT_STRATEGY), spec);
      if (spec.partitioningDisabled()) {
        if (spec.maxSkew().isPresent()) {
          throw new IllegalArgumentException("maxSkew applies to per-node's zone-aware "
              + "fallback, which noPartitioning() turned off");
        }
        return engine(spec, new PerNodePlacer(fallback.get()), zones);
      }
      // Zone-aware by default: with no zone anywhere every pool target is in the cluster-wide
      // group over every collector, exactly the fallback of before.
      String key = spec.partitionKey().orElse(Allocators.ZONE);
      return engine(spec, new PerNodePlacer(partitioned(spec, key, fallback, zones)), zones);
    }
  }
}
