package dev.apportion.bench;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.List;

/**
 * The one facade over an allocator that the JMH benchmarks and the simulator both drive: the
 * write calls, fed full sets the way a collector source and service discovery deliver them, and
 * how many targets each call moved. Single-threaded.
 *
 * <p>{@link #of} gives an Apportion strategy; the benchmarks add their do-it-yourself baselines
 * ({@code dev.apportion.bench.jmh.Contender}) behind the same interface.
 */
public interface Placement {

  /**
   * A fresh placement running an Apportion strategy, with no collectors and no targets.
   *
   * @param strategy a strategy's name, as {@link dev.apportion.allocation.Allocators#strategies()}
   *     lists them
   * @return the placement
   * @throws IllegalArgumentException if the strategy is unknown
   */
  static Placement of(String strategy) {
    return new AllocatorPlacement(strategy, 1);
  }

  /**
   * A fresh placement running an Apportion strategy with every target on {@code replicas}
   * collectors; its moves count every replica's.
   *
   * @param strategy a strategy's name, as {@link #of(String)} takes it
   * @param replicas replicas per target, 1 to 8
   * @return the placement
   * @throws IllegalArgumentException if the strategy is unknown or cannot place replicas
   */
  static Placement of(String strategy, int replicas) {
    return new AllocatorPlacement(strategy, replicas);
  }

  /**
   * Before a load factor that ends a strategy's name: {@code consistent-hashing@1.15}, {@code
   * consistent-hashing:zones@1.1} (what {@code Builder.loadFactor} sets).
   */
  String LOAD_FACTOR = "@";

  /** The suffix of a zone-aware variant: {@code consistent-hashing:zones} and so on. */
  String ZONES = ":zones";
  /** {@code per-node} with its fallback cluster-wide (no zone partitioning): the old default. */
  String PER_NODE_NO_ZONES = "per-node:no-zones";
  /** The skew limit of the zone-aware variants. */
  double VARIANT_MAX_SKEW = 2.0;

  /**
   * The variants the simulator compares besides the plain strategies: zone-aware
   * {@code consistent-hashing}, {@code rendezvous} and {@code least-weighted} (skew limit
   * {@value #VARIANT_MAX_SKEW}), and {@code per-node} without its zone-aware fallback.
   *
   * @return the names, in the order to print them
   */
  static java.util.List<String> variants() {
    return java.util.List.of(dev.apportion.allocation.Allocators.CONSISTENT_HASHING + ZONES,
        dev.apportion.allocation.Allocators.LEAST_WEIGHTED + ZONES, PER_NODE_NO_ZONES,
        dev.apportion.allocation.Allocators.RENDEZVOUS + ZONES);
  }

  /**
   * Replaces the node-to-zone topology, for strategies that partition by zone; by default it is
   * ignored.
   *
   * @param zoneByNode node to zone
   */
  default void setNodeZones(java.util.Map<String, String> zoneByNode) {}

  /**
   * Replaces the collector set.
   *
   * @param collectors the full set
   * @return how many known, assigned targets this call moved to another collector or unassigned
   */
  int setCollectors(List<Collector> collectors);

  /**
   * Replaces the target set.
   *
   * @param targets the full set
   * @return how many known, assigned targets this call moved to another collector or unassigned
   */
  int setTargets(List<Target> targets);

  /**
   * What the last call moved: the value it returned.
   *
   * @return the count
   */
  int lastMoved();

  /**
   * The targets of {@code job} on {@code collector}.
   *
   * @param collector a collector's name
   * @param job a job
   * @return the targets
   */
  List<Target> targetsFor(String collector, String job);

  /**
   * The whole assignment now (optional operation).
   *
   * @return the current state
   * @throws UnsupportedOperationException if this placement keeps no whole-state view
   */
  Allocation allocation();
}
