package dev.apportion.allocation.spi;

import dev.apportion.allocation.AllocationListener;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * What a user asked for when building an allocator, handed to an
 * {@link AllocationStrategyProvider}. Immutable.
 *
 * @since 0.1.0
 */
public final class AllocatorSpec {
  /**
   * The load factor used when none is given: no collector holds more than 1.2x the mean. The
   * point of the balance-against-movement frontier where {@code consistent-hashing} meets every
   * movement goal of {@code docs/strategies.md} (a collector change moves within 1.1x of the
   * minimum; replacing 1% of the targets moves under 0.1% of the others); 1.1 balances tighter
   * and moves about 1.4x the minimum.
   */
  public static final double DEFAULT_LOAD_FACTOR = 1.2;

  /**
   * The load factor of a weighted placement (targets with {@linkplain
   * dev.apportion.allocation.Target#cost() costs}, or collectors of mixed {@linkplain
   * dev.apportion.allocation.Collector#capacity() capacity}) when none is given: each collector's
   * cost stays within 15% of its capacity share, above and below. Tighter than the count default
   * because a cost is what a collector actually carries, and wider than it would have to be for
   * counts because heavy-tailed costs spread more: {@code docs/strategies.md} ("Cost and
   * capacity") shows the balance and the movement this buys. A load factor given to the builder
   * applies to both kinds of placement.
   *
   */
  public static final double DEFAULT_COST_LOAD_FACTOR = 1.15;

  private final String strategy;
  private final String fallback;
  private final boolean fallbackDisabled;
  private final double loadFactor;
  private final double costLoadFactor;
  private final double movedShareWarning;
  private final List<AllocationListener> listeners;
  private final String partitionKey;
  private final boolean partitioningDisabled;
  private final double maxSkew;
  private final int maxTargetsPerCollector;
  private final long maxCostPerCollector;
  private final int replicas;

  /** The most replicas a spec accepts: {@link #replicas()}. */
  public static final int MAX_REPLICAS = 8;

  /** The share of moved targets above which a change is logged as a warning, by default. */
  public static final double DEFAULT_MOVED_SHARE_WARNING = 0.5;

  /**
   * A builder of a spec for {@code strategy}, every option at its default: no fallback named, the
   * default load factors, a warning above {@value #DEFAULT_MOVED_SHARE_WARNING} of the targets
   * moved, no listener, no partitioning asked for, no skew limit, no per-collector limit. Does not
   * block; allocates the builder.
   *
   * @param strategy the strategy's name; not null
   * @return a new builder
   * @throws NullPointerException if {@code strategy} is null
   */
  public static Builder builder(String strategy) {
    return new Builder(strategy);
  }

  /**
   * A builder holding every option of this spec, to copy it with some options changed (the cost
   * load factor is carried as it is, whether the user gave it or not).
   *
   * @return a new builder
   */
  public Builder toBuilder() {
    return new Builder(strategy)
        .fallback(fallback)
        .fallbackDisabled(fallbackDisabled)
        .loadFactor(loadFactor)
        .costLoadFactor(costLoadFactor)
        .movedShareWarning(movedShareWarning)
        .listeners(listeners)
        .partitionKey(partitionKey)
        .partitioningDisabled(partitioningDisabled)
        .maxSkew(maxSkew)
        .maxTargetsPerCollector(maxTargetsPerCollector)
        .maxCostPerCollector(maxCostPerCollector)
        .replicas(replicas);
  }

  private AllocatorSpec(Builder b) {
    this.strategy = b.strategy;
    if (b.replicas < 1 || b.replicas > MAX_REPLICAS) {
      throw new IllegalArgumentException(
          "replicas must be between 1 and " + MAX_REPLICAS + ": " + b.replicas);
    }
    if (b.maxTargetsPerCollector < 0 || b.maxCostPerCollector < 0) {
      throw new IllegalArgumentException("per-collector limits must be positive, or 0 for none: "
          + b.maxTargetsPerCollector + ", " + b.maxCostPerCollector);
    }
    if (b.partitionKey != null && b.partitionKey.isBlank()) {
      throw new IllegalArgumentException("partition key must not be blank");
    }
    if (b.partitioningDisabled && b.partitionKey != null) {
      throw new IllegalArgumentException(
          "partition key '" + b.partitionKey + "' given while partitioning is disabled");
    }
    if (!Double.isNaN(b.maxSkew) && !(b.maxSkew >= 1.0 && !Double.isInfinite(b.maxSkew))) {
      throw new IllegalArgumentException("max skew must be a finite number >= 1: " + b.maxSkew);
    }
    if (b.fallbackDisabled && b.fallback != null) {
      throw new IllegalArgumentException("fallback '" + b.fallback + "' given while disabled");
    }
    double load = b.loadFactorGiven ? b.loadFactor : DEFAULT_LOAD_FACTOR;
    double costLoad = b.costLoadFactorGiven ? b.costLoadFactor
        : b.loadFactorGiven ? b.loadFactor : DEFAULT_COST_LOAD_FACTOR;
    if (!(load > 1.0) || Double.isInfinite(load)) {
      throw new IllegalArgumentException("load factor must be a finite number > 1: " + load);
    }
    if (!(costLoad > 1.0) || Double.isInfinite(costLoad)) {
      throw new IllegalArgumentException(
          "cost load factor must be a finite number > 1: " + costLoad);
    }
    if (!(b.movedShareWarning >= 0.0 && b.movedShareWarning <= 1.0)) {
      throw new IllegalArgumentException(
          "moved share warning must be between 0 and 1: " + b.movedShareWarning);
    }
    for (AllocationListener l : b.listeners) {
      Objects.requireNonNull(l, "listeners must not contain null");
    }
    this.fallback = b.fallback;
    this.fallbackDisabled = b.fallbackDisabled;
    this.loadFactor = load;
    this.costLoadFactor = costLoad;
    this.movedShareWarning = b.movedShareWarning;
    this.listeners = List.copyOf(b.listeners);
    this.partitionKey = b.partitionKey;
    this.partitioningDisabled = b.partitioningDisabled;
    this.maxSkew = b.maxSkew;
    this.maxTargetsPerCollector = b.maxTargetsPerCollector;
    this.maxCostPerCollector = b.maxCostPerCollector;
    this.replicas = b.replicas;
  }

  /**
   * A spec with no partitioning asked for (the strategy applies its default).
   *
   * @param strategy the strategy's name; not null
   * @param fallback the fallback strategy's name, or null when none was named
   * @param fallbackDisabled true when the user opted out of any fallback
   * @param loadFactor the bound on a collector's load relative to the mean, &gt; 1
   * @param movedShareWarning the share of targets (0 to 1) above which one change that moves
   *     them is logged as a warning
   * @param listeners the listeners to notify, in order; copied
   * @throws NullPointerException if {@code strategy} or {@code listeners} is null
   * @throws IllegalArgumentException if {@code fallback} is given while disabled, or a number is
   *     out of range
   * @deprecated positional arguments are easy to swap; use {@link #builder(String)}
   */
  @Deprecated
  public AllocatorSpec(String strategy, String fallback, boolean fallbackDisabled,
      double loadFactor, double movedShareWarning, List<AllocationListener> listeners) {
    this(strategy, fallback, fallbackDisabled, loadFactor, movedShareWarning, listeners, null,
        false, Double.NaN, 0, 0L,
        loadFactor == DEFAULT_LOAD_FACTOR ? DEFAULT_COST_LOAD_FACTOR : loadFactor);
  }

  /**
   * A spec.
   *
   * @param strategy the strategy's name; not null
   * @param fallback the fallback strategy's name, or null when none was named
   * @param fallbackDisabled true when the user opted out of any fallback
   * @param loadFactor the bound on a collector's load relative to the mean, &gt; 1
   * @param movedShareWarning the share of targets (0 to 1) above which one change that moves
   *     them is logged as a warning
   * @param listeners the listeners to notify, in order; copied
   * @param partitionKey the partition key asked for ({@link
   *     dev.apportion.allocation.Allocators#ZONE} or a label name), or null when none was named
   * @param partitioningDisabled true when the user opted out of partitioning
   * @param maxSkew the skew limit, a finite number &ge; 1, or NaN for none
   * @throws NullPointerException if {@code strategy} or {@code listeners} is null
   * @throws IllegalArgumentException if {@code fallback} is given while disabled, a partition key
   *     while partitioning is disabled, a blank partition key, or a number is out of range
   * @deprecated positional arguments are easy to swap; use {@link #builder(String)}
   */
  @Deprecated
  public AllocatorSpec(String strategy, String fallback, boolean fallbackDisabled,
      double loadFactor, double movedShareWarning, List<AllocationListener> listeners,
      String partitionKey, boolean partitioningDisabled, double maxSkew) {
    this(strategy, fallback, fallbackDisabled, loadFactor, movedShareWarning, listeners,
        partitionKey, partitioningDisabled, maxSkew, 0, 0L,
        loadFactor == DEFAULT_LOAD_FACTOR ? DEFAULT_COST_LOAD_FACTOR : loadFactor);
  }

  /**
   * A spec with every option but the cost load factor, which is {@link #DEFAULT_COST_LOAD_FACTOR}
   * when {@code loadFactor} is {@link #DEFAULT_LOAD_FACTOR}, and {@code loadFactor} otherwise.
   *
   * @param strategy the strategy's name; not null
   * @param fallback the fallback strategy's name, or null when none was named
   * @param fallbackDisabled true when the user opted out of any fallback
   * @param loadFactor the bound on a collector's load relative to the mean, &gt; 1
   * @param movedShareWarning the share of targets (0 to 1) above which one change that moves
   *     them is logged as a warning
   * @param listeners the listeners to notify, in order; copied
   * @param partitionKey the partition key asked for ({@link
   *     dev.apportion.allocation.Allocators#ZONE} or a label name), or null when none was named
   * @param partitioningDisabled true when the user opted out of partitioning
   * @param maxSkew the skew limit, a finite number &ge; 1, or NaN for none
   * @param maxTargetsPerCollector the most targets a collector of capacity 1 may hold, or 0 for
   *     no limit
   * @param maxCostPerCollector the most cost a collector of capacity 1 may hold, or 0 for no
   *     limit
   * @throws NullPointerException if {@code strategy} or {@code listeners} is null
   * @throws IllegalArgumentException if {@code fallback} is given while disabled, a partition key
   *     while partitioning is disabled, a blank partition key, or a number is out of range
   *     (a limit below 0)
   * @deprecated positional arguments are easy to swap; use {@link #builder(String)}
   */
  @Deprecated
  public AllocatorSpec(String strategy, String fallback, boolean fallbackDisabled,
      double loadFactor, double movedShareWarning, List<AllocationListener> listeners,
      String partitionKey, boolean partitioningDisabled, double maxSkew,
      int maxTargetsPerCollector, long maxCostPerCollector) {
    this(strategy, fallback, fallbackDisabled, loadFactor, movedShareWarning, listeners,
        partitionKey, partitioningDisabled, maxSkew, maxTargetsPerCollector, maxCostPerCollector,
        loadFactor == DEFAULT_LOAD_FACTOR ? DEFAULT_COST_LOAD_FACTOR : loadFactor);
  }

  /**
   * A spec with every option, the cost load factor included.
   *
   * @param strategy the strategy's name; not null
   * @param fallback the fallback strategy's name, or null when none was named
   * @param fallbackDisabled true when the user opted out of any fallback
   * @param loadFactor the bound on a collector's load relative to the mean, &gt; 1
   * @param movedShareWarning the share of targets (0 to 1) above which one change that moves
   *     them is logged as a warning
   * @param listeners the listeners to notify, in order; copied
   * @param partitionKey the partition key asked for ({@link
   *     dev.apportion.allocation.Allocators#ZONE} or a label name), or null when none was named
   * @param partitioningDisabled true when the user opted out of partitioning
   * @param maxSkew the skew limit, a finite number &ge; 1, or NaN for none
   * @param maxTargetsPerCollector the most targets a collector of capacity 1 may hold, or 0 for
   *     no limit
   * @param maxCostPerCollector the most cost a collector of capacity 1 may hold, or 0 for no
   *     limit
   * @param costLoadFactor the two-sided bound of a weighted placement ({@link #costLoadFactor()}),
   *     &gt; 1
   * @throws NullPointerException if {@code strategy} or {@code listeners} is null
   * @throws IllegalArgumentException if {@code fallback} is given while disabled, a partition key
   *     while partitioning is disabled, a blank partition key, or a number is out of range
   *     (a limit below 0)
   * @deprecated positional arguments are easy to swap; use {@link #builder(String)}, and {@link
   *     #toBuilder()} to copy a spec
   */
  @Deprecated
  public AllocatorSpec(String strategy, String fallback, boolean fallbackDisabled,
      double loadFactor, double movedShareWarning, List<AllocationListener> listeners,
      String partitionKey, boolean partitioningDisabled, double maxSkew,
      int maxTargetsPerCollector, long maxCostPerCollector, double costLoadFactor) {
    this(builder(strategy)
        .fallback(fallback)
        .fallbackDisabled(fallbackDisabled)
        .loadFactor(loadFactor)
        .costLoadFactor(costLoadFactor)
        .movedShareWarning(movedShareWarning)
        .listeners(listeners)
        .partitionKey(partitionKey)
        .partitioningDisabled(partitioningDisabled)
        .maxSkew(maxSkew)
        .maxTargetsPerCollector(maxTargetsPerCollector)
        .maxCostPerCollector(maxCostPerCollector));
  }

  /**
   * The strategy's name.
   *
   * @return the name
   */
  public String strategy() {
    return strategy;
  }

  /**
   * The fallback strategy the user named.
   *
   * @return its name; empty when none was named (the strategy then applies its default) or when
   *     the fallback is {@linkplain #fallbackDisabled() disabled}
   */
  public Optional<String> fallback() {
    return Optional.ofNullable(fallback);
  }

  /**
   * Whether the user explicitly opted out of any fallback.
   *
   * @return true after {@code noFallback()} or {@code fallback("")}
   */
  public boolean fallbackDisabled() {
    return fallbackDisabled;
  }

  /**
   * The load factor of bounded-load strategies when no target has a cost and every collector the
   * same capacity: no collector holds more than {@code ceil(loadFactor * targets / collectors)}
   * targets. A weighted placement uses {@link #costLoadFactor()}.
   *
   * @return a finite number &gt; 1
   */
  public double loadFactor() {
    return loadFactor;
  }

  /**
   * The load factor of bounded-load strategies for a weighted placement (targets with costs, or
   * collectors of mixed capacity): each collector's cost stays within {@code costLoadFactor}
   * times its capacity share above, and {@code 2 - costLoadFactor} times it below.
   *
   * @return a finite number &gt; 1: the load factor the user gave, else {@link
   *     #DEFAULT_COST_LOAD_FACTOR}
   */
  public double costLoadFactor() {
    return costLoadFactor;
  }

  /**
   * The most targets a bounded-load strategy lets one collector hold: the larger of the even
   * share {@code ceil(targets / collectors)} and {@code ceil(loadFactor * targets / collectors)}
   * (the latter computed with a tolerance of 1e-9, so that {@code 1.1 * 100000 / 1000} is 110,
   * not 111 through floating-point error). The one home of this rule: the strategies and the
   * property kit's balance invariant both call it.
   *
   * @param loadFactor the load factor, &gt; 1
   * @param targets the number of targets, &ge; 0
   * @param collectors the number of collectors, &gt; 0
   * @return the cap
   * @throws IllegalArgumentException if {@code collectors} is not positive or {@code targets}
   *     is negative
   */
  public static int boundedLoadCap(double loadFactor, int targets, int collectors) {
    if (collectors <= 0 || targets < 0) {
      throw new IllegalArgumentException("need targets >= 0 and collectors > 0: " + targets
          + ", " + collectors);
    }
    int even = (int) ((targets + (long) collectors - 1) / collectors);
    int bounded = (int) Math.ceil(loadFactor * targets / collectors - 1e-9);
    return Math.max(even, bounded);
  }

  /**
   * The share of known targets above which a single change that reassigns them is logged as a
   * warning.
   *
   * @return a number from 0 to 1
   */
  public double movedShareWarning() {
    return movedShareWarning;
  }

  /**
   * The key the user asked to partition by: {@link dev.apportion.allocation.Allocators#ZONE} for
   * the zone, or a label name.
   *
   * @return the key; empty when none was named (the strategy applies its default) or when
   *     partitioning is {@linkplain #partitioningDisabled() disabled}
   */
  public Optional<String> partitionKey() {
    return Optional.ofNullable(partitionKey);
  }

  /**
   * Whether the user explicitly opted out of partitioning (for {@code per-node}, of its
   * zone-aware fallback).
   *
   * @return true after {@code noPartitioning()} or {@code partitionBy("")}
   */
  public boolean partitioningDisabled() {
    return partitioningDisabled;
  }

  /**
   * The skew limit: a partition's collectors carry on average at most this many times the
   * cluster-wide mean; targets past it spill over to other partitions.
   *
   * @return a finite number &ge; 1; empty for no limit (a partition never spills)
   */
  public OptionalDouble maxSkew() {
    return Double.isNaN(maxSkew) ? OptionalDouble.empty() : OptionalDouble.of(maxSkew);
  }

  /**
   * The most targets one collector of capacity 1 may hold; a collector of capacity {@code w} may
   * hold {@code floor(limit * w)} (at least 1). Targets that fit on no collector stay
   * unassigned.
   *
   * @return the limit, or empty for none
   * @since 0.1.0
   */
  public OptionalInt maxTargetsPerCollector() {
    return maxTargetsPerCollector == 0 ? OptionalInt.empty()
        : OptionalInt.of(maxTargetsPerCollector);
  }

  /**
   * The most {@linkplain dev.apportion.allocation.Target#cost() cost} one collector of capacity
   * 1 may hold; a collector of capacity {@code w} may hold {@code floor(limit * w)}.
   *
   * @return the limit, or empty for none
   * @since 0.1.0
   */
  public OptionalLong maxCostPerCollector() {
    return maxCostPerCollector == 0 ? OptionalLong.empty() : OptionalLong.of(maxCostPerCollector);
  }

  /**
   * How many distinct collectors hold each target: 1 (the default) places every target once; k
   * places it on k collectors, the first of them its primary. A provider that does not
   * {@linkplain AllocationStrategyProvider#supportsReplicas() support replicas} is only ever
   * given 1.
   *
   * @return a number from 1 to {@link #MAX_REPLICAS}
   */
  public int replicas() {
    return replicas;
  }

  /**
   * The listeners to notify after each change, in registration order.
   *
   * @return an unmodifiable list
   */
  public List<AllocationListener> listeners() {
    return listeners;
  }

  /**
   * Collects the options of an {@link AllocatorSpec}; {@link #build()} validates them together.
   * Each setter takes the value as the spec reports it (null, NaN or 0 for "none"), so that code
   * copying a spec passes values on unchanged. Not thread-safe; {@link #build()} may be called
   * more than once.
   */
  public static final class Builder {
    private final String strategy;
    private String fallback;
    private boolean fallbackDisabled;
    private double loadFactor;
    /** Whether a load factor was given: the defaults differ for counts and costs. */
    private boolean loadFactorGiven;
    private double costLoadFactor;
    /** Whether a cost load factor was given; if not, the load factor given, else the default. */
    private boolean costLoadFactorGiven;
    private double movedShareWarning = DEFAULT_MOVED_SHARE_WARNING;
    private List<AllocationListener> listeners = List.of();
    private String partitionKey;
    private boolean partitioningDisabled;
    private double maxSkew = Double.NaN;
    private int maxTargetsPerCollector;
    private long maxCostPerCollector;
    private int replicas = 1;

    private Builder(String strategy) {
      this.strategy = Objects.requireNonNull(strategy, "strategy must not be null");
    }

    /**
     * The fallback strategy the user named.
     *
     * @param name its name, or null when none was named
     * @return this builder
     */
    public Builder fallback(String name) {
      this.fallback = name;
      return this;
    }

    /**
     * Whether the user opted out of any fallback; then no fallback may be named.
     *
     * @param disabled true to opt out
     * @return this builder
     */
    public Builder fallbackDisabled(boolean disabled) {
      this.fallbackDisabled = disabled;
      return this;
    }

    /**
     * The load factor ({@link AllocatorSpec#loadFactor()}); when no cost load factor is given,
     * it is the cost load factor too. Default {@link #DEFAULT_LOAD_FACTOR}.
     *
     * @param factor a finite number &gt; 1 (checked by {@link #build()})
     * @return this builder
     */
    public Builder loadFactor(double factor) {
      this.loadFactor = factor;
      this.loadFactorGiven = true;
      return this;
    }

    /**
     * The cost load factor ({@link AllocatorSpec#costLoadFactor()}). Default: the load factor
     * given, else {@link #DEFAULT_COST_LOAD_FACTOR}.
     *
     * @param factor a finite number &gt; 1 (checked by {@link #build()})
     * @return this builder
     */
    public Builder costLoadFactor(double factor) {
      this.costLoadFactor = factor;
      this.costLoadFactorGiven = true;
      return this;
    }

    /**
     * The share of targets above which one change that moves them is logged as a warning.
     * Default {@value #DEFAULT_MOVED_SHARE_WARNING}.
     *
     * @param share a number from 0 to 1 (checked by {@link #build()})
     * @return this builder
     */
    public Builder movedShareWarning(double share) {
      this.movedShareWarning = share;
      return this;
    }

    /**
     * The listeners to notify, in order; copied by {@link #build()}. Default none.
     *
     * @param all the listeners; not null, no null element (checked by {@link #build()})
     * @return this builder
     * @throws NullPointerException if {@code all} is null
     */
    public Builder listeners(List<AllocationListener> all) {
      this.listeners = Objects.requireNonNull(all, "listeners must not be null");
      return this;
    }

    /**
     * The partition key the user asked for.
     *
     * @param key {@link dev.apportion.allocation.Allocators#ZONE} or a label name, not blank; null
     *     when none was named
     * @return this builder
     */
    public Builder partitionKey(String key) {
      this.partitionKey = key;
      return this;
    }

    /**
     * Whether the user opted out of partitioning; then no partition key may be given.
     *
     * @param disabled true to opt out
     * @return this builder
     */
    public Builder partitioningDisabled(boolean disabled) {
      this.partitioningDisabled = disabled;
      return this;
    }

    /**
     * The skew limit. Default none.
     *
     * @param factor a finite number &ge; 1, or NaN for none (checked by {@link #build()})
     * @return this builder
     */
    public Builder maxSkew(double factor) {
      this.maxSkew = factor;
      return this;
    }

    /**
     * The most targets a collector of capacity 1 may hold. Default none.
     *
     * @param max a positive number, or 0 for no limit (checked by {@link #build()})
     * @return this builder
     */
    public Builder maxTargetsPerCollector(int max) {
      this.maxTargetsPerCollector = max;
      return this;
    }

    /**
     * The most cost a collector of capacity 1 may hold. Default none.
     *
     * @param max a positive number, or 0 for no limit (checked by {@link #build()})
     * @return this builder
     */
    public Builder maxCostPerCollector(long max) {
      this.maxCostPerCollector = max;
      return this;
    }

    /**
     * Sets {@link AllocatorSpec#replicas()}, checked by {@link #build()}.
     *
     * @param k how many collectors hold each target, 1 to {@link #MAX_REPLICAS}
     * @return this builder
     */
    public Builder replicas(int k) {
      this.replicas = k;
      return this;
    }

    /**
     * The spec. Does not block; allocates the spec and a copy of the listeners.
     *
     * @return a new, immutable spec
     * @throws NullPointerException if a listener is null
     * @throws IllegalArgumentException if a fallback is named while disabled, a partition key
     *     given while partitioning is disabled, the partition key is blank, or a number is out
     *     of range
     */
    public AllocatorSpec build() {
      return new AllocatorSpec(this);
    }
  }
}
