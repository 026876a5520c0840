package dev.apportion.allocation;

import dev.apportion.allocation.spi.AllocationStrategyProvider;
import dev.apportion.allocation.spi.AllocatorSpec;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The entry point: builds {@link Allocator}s for strategies found by name.
 *
 * <pre>{@code
 * Allocator allocator = Allocators.builder("per-node").build();
 * allocator.setCollectors(List.of(Collector.of("agent-x7k2p", "node-1")));
 * allocator.setTargets(discoveredTargets);
 * List<Target> mine = allocator.targetsFor("agent-x7k2p", "kubernetes-pods");
 * }</pre>
 *
 * <p>Strategies are provided through {@link AllocationStrategyProvider} and found with
 * {@link ServiceLoader} through the calling thread's context class loader; {@code
 * allocation-core} provides {@code consistent-hashing}, {@code rendezvous}, {@code
 * least-weighted} and {@code per-node}. What is found through the class loader that loaded this
 * class (the context class loader of a plain application) is kept after the first call, so that
 * building an allocator does not read the class path again; what any other context class loader
 * sees (a container's, a plugin's) is looked up on each call and not kept, so this class holds
 * no reference to it. Providers are stateless by contract, so sharing them is safe. A provider
 * that becomes visible to this class's own loader after its first lookup (a module layer defined
 * later, a jar appended to the class path at run time) is therefore not seen.
 *
 * @since 0.1.0
 */
public final class Allocators {
  /** The name of the built-in bounded-load consistent-hashing strategy. */
  public static final String CONSISTENT_HASHING = "consistent-hashing";
  /** The name of the built-in rendezvous (highest random weight) strategy. */
  public static final String RENDEZVOUS = "rendezvous";
  /** The name of the built-in sticky least-weighted strategy. */
  public static final String LEAST_WEIGHTED = "least-weighted";
  /** The name of the built-in node-local strategy. */
  public static final String PER_NODE = "per-node";

  /**
   * The partition key that stands for a target's or a collector's zone ({@link Target#zone()},
   * else its node's zone; {@link Collector#zone()}): {@value}. It is the Kubernetes label name,
   * which no Prometheus label can be (they cannot contain {@code .} or {@code /}), so it never
   * clashes with a label key.
   */
  public static final String ZONE = "topology.kubernetes.io/zone";

  /** The strategy used when a configuration names none, and {@code per-node}'s default fallback. */
  public static final String DEFAULT_STRATEGY = CONSISTENT_HASHING;

  /** The providers found through {@link #OWN_LOADER}, once looked up; null until then. */
  private static volatile SortedMap<String, AllocationStrategyProvider> ownProviders;

  /** The class loader that loaded this class. */
  private static final ClassLoader OWN_LOADER = Allocators.class.getClassLoader();

  private Allocators() {}

  /**
   * A builder for an allocator of {@code strategy}. Looks the strategy up (through
   * {@link ServiceLoader} on the first call for a class loader, so it may load provider classes;
   * see the class comment for what is kept) and fails fast when it is unknown. Thread-safe.
   *
   * @param strategy the strategy's name
   * @return a new builder
   * @throws NullPointerException if {@code strategy} is null
   * @throws IllegalArgumentException if no provider has that name; the message lists the known
   *     names
   */
  public static Builder builder(String strategy) {
    Objects.requireNonNull(strategy, "strategy must not be null");
    SortedMap<String, AllocationStrategyProvider> providers = providers();
    AllocationStrategyProvider provider = providers.get(strategy);
    if (provider == null) {
      throw unknown("strategy", strategy, providers);
    }
    return new Builder(provider, providers);
  }

  /**
   * The names of the strategies available on the module or class path.
   *
   * @return a new sorted set
   */
  public static SortedSet<String> strategies() {
    return new TreeSet<>(providers().keySet());
  }

  /**
   * The providers the thread's context class loader sees, by name: unmodifiable, and kept for
   * {@link #OWN_LOADER} only (a kept provider of another loader would keep that loader alive).
   */
  private static SortedMap<String, AllocationStrategyProvider> providers() {
    ClassLoader context = Thread.currentThread().getContextClassLoader();
    // ServiceLoader reads a null loader as the system class loader: so does this.
    ClassLoader loader = context != null ? context : ClassLoader.getSystemClassLoader();
    if (loader != OWN_LOADER) {
      return load(loader);
    }
    SortedMap<String, AllocationStrategyProvider> kept = ownProviders;
    if (kept == null) {
      // Two threads may both look up on the first call; either result is the same set.
      kept = load(loader);
      ownProviders = kept;
    }
    return kept;
  }

  private static SortedMap<String, AllocationStrategyProvider> load(ClassLoader loader) {
    SortedMap<String, AllocationStrategyProvider> byName = new TreeMap<>();
    for (AllocationStrategyProvider p
        : ServiceLoader.load(AllocationStrategyProvider.class, loader)) {
      AllocationStrategyProvider previous = byName.putIfAbsent(p.name(), p);
      if (previous != null && previous.getClass() != p.getClass()) {
        throw new IllegalStateException("two providers for strategy '" + p.name() + "': "
            + previous.getClass().getName() + " and " + p.getClass().getName());
      }
    }
    return Collections.unmodifiableSortedMap(byName);
  }

  private static IllegalArgumentException unknown(String what, String name,
      SortedMap<String, AllocationStrategyProvider> providers) {
    return new IllegalArgumentException("unknown allocation " + what + " '" + name
        + "'; known strategies: " + String.join(", ", providers.keySet())
        + (providers.isEmpty() ? "(none: is allocation-core on the class or module path?)" : ""));
  }

  /**
   * Configures one allocator. Not thread-safe; {@link #build()} may be called more than once and
   * returns an independent allocator each time.
   *
   * @since 0.1.0
   */
  public static final class Builder {
    private final AllocationStrategyProvider provider;
    private final SortedMap<String, AllocationStrategyProvider> providers;
    private String fallback;
    private boolean fallbackDisabled;
    /** NaN until given: the defaults differ for counts and costs. */
    private double loadFactor = Double.NaN;
    private double movedShareWarning = AllocatorSpec.DEFAULT_MOVED_SHARE_WARNING;
    private final List<AllocationListener> listeners = new ArrayList<>();
    private String partitionKey;
    private boolean partitioningDisabled;
    private double maxSkew = Double.NaN;
    private int maxTargetsPerCollector;
    private long maxCostPerCollector;
    private int replicas = 1;

    private Builder(AllocationStrategyProvider provider,
        SortedMap<String, AllocationStrategyProvider> providers) {
      this.provider = provider;
      this.providers = providers;
    }

    /**
     * The strategy that places the targets this strategy cannot place itself (for
     * {@code per-node}: targets with no node, or whose node has no collector). An empty name is
     * the same as {@link #noFallback()}, for configuration files.
     *
     * @param strategy the fallback strategy's name, or {@code ""} for none
     * @return this builder
     * @throws NullPointerException if {@code strategy} is null
     * @throws IllegalArgumentException if the strategy is unknown, is this builder's strategy, or
     *     this strategy uses no fallback
     */
    public Builder fallback(String strategy) {
      Objects.requireNonNull(strategy, "fallback strategy must not be null; use \"\" for none");
      if (strategy.isEmpty()) {
        return noFallback();
      }
      requireFallbackSupport();
      if (!providers.containsKey(strategy)) {
        throw unknown("fallback strategy", strategy, providers);
      }
      if (strategy.equals(provider.name())) {
        throw new IllegalArgumentException(
            "strategy '" + strategy + "' cannot be its own fallback");
      }
      this.fallback = strategy;
      this.fallbackDisabled = false;
      return this;
    }

    /**
     * No fallback: targets this strategy cannot place stay unassigned and are reported in
     * {@link Allocation#unassigned()}. This is the only way to opt out of the default fallback.
     *
     * @return this builder
     * @throws IllegalArgumentException if this strategy uses no fallback
     */
    public Builder noFallback() {
      requireFallbackSupport();
      this.fallback = null;
      this.fallbackDisabled = true;
      return this;
    }

    /**
     * The bound of bounded-load strategies ({@code consistent-hashing}, also as a fallback): no
     * collector holds more than {@code ceil(loadFactor * targets / collectors)} targets, or, when
     * targets carry {@linkplain Target#cost() costs} or collectors
     * {@linkplain Collector#capacity() capacities}, more than
     * {@code ceil(loadFactor * totalCost * capacity / totalCapacity)} cost and, as far as the
     * targets near its ring tokens allow, none less than {@code (2 - loadFactor) * totalCost *
     * capacity / totalCapacity} (no floor from a factor of 2 on; {@code per-node}'s pool has
     * none). Ignored by strategies that are not load-bounded. Default {@value AllocatorSpec#DEFAULT_LOAD_FACTOR} for counts and
     * {@value AllocatorSpec#DEFAULT_COST_LOAD_FACTOR} for costs and capacities ({@link
     * AllocatorSpec#DEFAULT_LOAD_FACTOR} and {@link AllocatorSpec#DEFAULT_COST_LOAD_FACTOR} say
     * why; {@code docs/strategies.md} shows what other factors trade); a factor given here
     * applies to both.
     *
     * @param loadFactor a finite number &gt; 1
     * @return this builder
     * @throws IllegalArgumentException if {@code loadFactor} is not a finite number &gt; 1
     */
    public Builder loadFactor(double loadFactor) {
      if (!(loadFactor > 1.0) || Double.isInfinite(loadFactor)) {
        throw new IllegalArgumentException(
            "load factor must be a finite number > 1: " + loadFactor);
      }
      this.loadFactor = loadFactor;
      return this;
    }

    /**
     * The share of known targets above which one change that reassigns them is logged as a
     * warning (a sign of churn an operator should look at). Default {@value
     * AllocatorSpec#DEFAULT_MOVED_SHARE_WARNING}.
     *
     * @param share a number from 0 to 1
     * @return this builder
     * @throws IllegalArgumentException if {@code share} is outside [0, 1]
     */
    public Builder warnWhenMovedShareExceeds(double share) {
      if (!(share >= 0.0 && share <= 1.0)) {
        throw new IllegalArgumentException("share must be between 0 and 1: " + share);
      }
      this.movedShareWarning = share;
      return this;
    }

    /**
     * Partitions collectors and targets by {@code key} and places each target on a collector of
     * its own partition, through this strategy restricted to that partition (so balance and
     * determinism hold within it); a target goes cluster-wide only when its partition has no
     * collector (counted by {@link Allocation#outsidePartition()}) or spills over the {@linkplain
     * #maxSkew skew limit}. Off by default for {@code consistent-hashing}, {@code rendezvous} and
     * {@code least-weighted}; {@code per-node} partitions its fallback by {@link Allocators#ZONE}
     * unless told otherwise. An empty key is the same as {@link #noPartitioning()}.
     *
     * @param key {@link Allocators#ZONE} for the zone, or a label name: a target's value of that
     *     label, a collector's {@linkplain Collector#withLabels label} of that name (targets or
     *     collectors without it are in no partition)
     * @return this builder
     * @throws NullPointerException if {@code key} is null
     * @throws IllegalArgumentException if {@code key} is blank but not empty, or this strategy
     *     cannot partition
     */
    public Builder partitionBy(String key) {
      Objects.requireNonNull(key, "partition key must not be null; use \"\" for none");
      if (key.isEmpty()) {
        return noPartitioning();
      }
      if (key.isBlank()) {
        throw new IllegalArgumentException("partition key must not be blank");
      }
      requirePartitioningSupport();
      this.partitionKey = key;
      this.partitioningDisabled = false;
      return this;
    }

    /**
     * A limit on how many targets one collector may hold, whatever the strategy:
     * {@code floor(max * capacity)} for a collector of {@linkplain Collector#capacity() capacity}
     * {@code capacity} (at least 1). A target the strategy would place on a full collector goes
     * to the collector with room that has the least cost relative to its capacity instead
     * ({@code consistent-hashing} keeps within the limit itself, as one of its caps); one that
     * fits on no collector stays in
     * {@link Allocation#unassigned()}, and a warning is logged once per episode. By default there
     * is no limit. See {@code docs/api.md}, "A limit per collector", for when it applies.
     *
     * @param max a number &gt; 0
     * @return this builder
     * @throws IllegalArgumentException if {@code max} is not positive
     * @since 0.1.0
     */
    public Builder maxTargetsPerCollector(int max) {
      if (max <= 0) {
        throw new IllegalArgumentException("max targets per collector must be > 0: " + max);
      }
      this.maxTargetsPerCollector = max;
      return this;
    }

    /**
     * A limit on how much {@linkplain Target#cost() cost} one collector may hold:
     * {@code floor(max * capacity)}; otherwise as {@link #maxTargetsPerCollector}. A target
     * costlier than every collector's limit fits only on an empty collector. The limit is
     * checked when a target is placed: a collector whose targets' costs grow past it keeps them
     * (the cost churn rule: a change of cost alone moves nothing here).
     *
     * @param max a number &gt; 0
     * @return this builder
     * @throws IllegalArgumentException if {@code max} is not positive
     * @since 0.1.0
     */
    public Builder maxCostPerCollector(long max) {
      if (max <= 0) {
        throw new IllegalArgumentException("max cost per collector must be > 0: " + max);
      }
      this.maxCostPerCollector = max;
      return this;
    }

    /**
     * Places every target on {@code k} distinct collectors (1, the default, places it once). The
     * first is its primary, placed exactly as with one replica; each further replica is placed
     * by the strategy as a target of its own (for {@code per-node}: by its fallback, preferring
     * the target's zone), on a collector that holds no other replica of the target, on another
     * node whenever another node has a collector, and (but for {@code per-node}) in another zone
     * whenever another zone has one. Balance, the load factor, capacities and the per-collector
     * limits count every replica; a collector change moves only the replicas it must. A target
     * with fewer than {@code k} owners (fewer than {@code k} collectors, or limits) is in
     * {@link Allocation#unassigned()}; {@link Allocation#ownersOf} says which it has. Every
     * replica is scraped: deduplicate downstream (see {@code docs/replication.md}).
     *
     * @param k the number of collectors that hold each target, 1 to
     *     {@value dev.apportion.allocation.spi.AllocatorSpec#MAX_REPLICAS}
     * @return this builder
     * @throws IllegalArgumentException if {@code k} is out of range, or this strategy cannot
     *     place replicas and {@code k} &gt; 1
     */
    public Builder replicas(int k) {
      if (k < 1 || k > AllocatorSpec.MAX_REPLICAS) {
        throw new IllegalArgumentException(
            "replicas must be between 1 and " + AllocatorSpec.MAX_REPLICAS + ": " + k);
      }
      if (k > 1 && !provider.supportsReplicas()) {
        throw new IllegalArgumentException(
            "strategy '" + provider.name() + "' cannot place replicas");
      }
      this.replicas = k;
      return this;
    }

    /**
     * The same as {@code partitionBy(Allocators.ZONE)}: prefer a collector in the target's zone.
     *
     * @return this builder
     * @throws IllegalArgumentException if this strategy cannot partition
     */
    public Builder zoneAware() {
      return partitionBy(ZONE);
    }

    /**
     * No partitioning: for {@code per-node}, its fallback places over every collector, whatever
     * the zones.
     *
     * @return this builder
     * @throws IllegalArgumentException if this strategy cannot partition
     */
    public Builder noPartitioning() {
      requirePartitioningSupport();
      this.partitionKey = null;
      this.partitioningDisabled = true;
      return this;
    }

    /**
     * The skew limit of a partitioned placement: a partition's collectors carry on average at most
     * {@code factor} times the cluster-wide mean (targets over collectors); the targets past that
     * (the last in identity-hash order) spill over to the collectors of partitions under the
     * limit. Without it (the default) a partition never spills, however few collectors it has.
     *
     * @param factor a finite number &ge; 1
     * @return this builder
     * @throws IllegalArgumentException if {@code factor} is not a finite number &ge; 1, or this
     *     strategy cannot partition
     */
    public Builder maxSkew(double factor) {
      if (!(factor >= 1.0) || Double.isInfinite(factor)) {
        throw new IllegalArgumentException("max skew must be a finite number >= 1: " + factor);
      }
      requirePartitioningSupport();
      this.maxSkew = factor;
      return this;
    }

    /**
     * Adds a listener told about every change (see {@link AllocationListener} for when and on
     * which thread).
     *
     * @param listener the listener
     * @return this builder
     * @throws NullPointerException if {@code listener} is null
     */
    public Builder listener(AllocationListener listener) {
      listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
      return this;
    }

    /**
     * A new allocator with its own state.
     *
     * @return the allocator
     * @throws IllegalArgumentException if the strategy cannot honour this configuration (for
     *     example a {@link #maxSkew} with partitioning off)
     */
    public Allocator build() {
      AllocatorSpec.Builder spec = AllocatorSpec.builder(provider.name());
      if (!Double.isNaN(loadFactor)) {
        spec.loadFactor(loadFactor);
      }
      return provider.create(spec
          .fallback(fallback)
          .fallbackDisabled(fallbackDisabled)
          .movedShareWarning(movedShareWarning)
          .listeners(listeners)
          .partitionKey(partitionKey)
          .partitioningDisabled(partitioningDisabled)
          .maxSkew(maxSkew)
          .maxTargetsPerCollector(maxTargetsPerCollector)
          .maxCostPerCollector(maxCostPerCollector)
          .replicas(replicas)
          .build());
    }

    private void requirePartitioningSupport() {
      if (!provider.supportsPartitioning()) {
        throw new IllegalArgumentException(
            "strategy '" + provider.name() + "' cannot partition its collectors");
      }
    }

    private void requireFallbackSupport() {
      if (!provider.usesFallback()) {
        throw new IllegalArgumentException(
            "strategy '" + provider.name() + "' uses no fallback strategy");
      }
    }
  }
}
