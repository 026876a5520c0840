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
   * @since 0.2.0
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
   */
  public AllocatorSpec(String strategy, String fallback, boolean fallbackDisabled,
      double loadFactor, double movedShareWarning, List<AllocationListener> listeners) {
    this(strategy, fallback, fallbackDisabled, loadFactor, movedShareWarning, listeners, null,
        false, Double.NaN);
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
   * @since 0.2.0
   */
  public AllocatorSpec(String strategy, String fallback, boolean fallbackDisabled,
      double loadFactor, double movedShareWarning, List<AllocationListener> listeners,
      String partitionKey, boolean partitioningDisabled, double maxSkew) {
    this(strategy, fallback, fallbackDisabled, loadFactor, movedShareWarning, listeners,
        partitionKey, partitioningDisabled, maxSkew, 0, 0L);
  }

  /**
   * A spec with every option.
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
   * @since 0.2.0
   */
  public AllocatorSpec(String strategy, String fallback, boolean fallbackDisabled,
      double loadFactor, double movedShareWarning, List<AllocationListener> listeners,
      String partitionKey, boolean partitioningDisabled, double maxSkew,
      int maxTargetsPerCollector, long maxCostPerCollector) {
    this(strategy, fallback, fallbackDisabled, loadFactor, movedShareWarning, listeners,
        partitionKey, partitioningDisabled, maxSkew, maxTargetsPerCollector, maxCostPerCollector,
        loadFactor == DEFAULT_LOAD_FACTOR ? DEFAULT_COST_LOAD_FACTOR : loadFactor);
  }

  /**
   * A spec with every option, the cost load factor included. The constructors without one take
   * {@link #DEFAULT_COST_LOAD_FACTOR} when {@code loadFactor} is {@link #DEFAULT_LOAD_FACTOR},
   * and {@code loadFactor} otherwise (a factor the user gave applies to both placements): they
   * cannot tell a 1.2 the user gave from the default, so code that copies a spec should use this
   * constructor and pass {@link #costLoadFactor()} on.
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
   * @since 0.2.0
   */
  public AllocatorSpec(String strategy, String fallback, boolean fallbackDisabled,
      double loadFactor, double movedShareWarning, List<AllocationListener> listeners,
      String partitionKey, boolean partitioningDisabled, double maxSkew,
      int maxTargetsPerCollector, long maxCostPerCollector, double costLoadFactor) {
    if (maxTargetsPerCollector < 0 || maxCostPerCollector < 0) {
      throw new IllegalArgumentException("per-collector limits must be positive, or 0 for none: "
          + maxTargetsPerCollector + ", " + maxCostPerCollector);
    }
    this.maxTargetsPerCollector = maxTargetsPerCollector;
    this.maxCostPerCollector = maxCostPerCollector;
    if (partitionKey != null && partitionKey.isBlank()) {
      throw new IllegalArgumentException("partition key must not be blank");
    }
    if (partitioningDisabled && partitionKey != null) {
      throw new IllegalArgumentException(
          "partition key '" + partitionKey + "' given while partitioning is disabled");
    }
    if (!Double.isNaN(maxSkew) && !(maxSkew >= 1.0 && !Double.isInfinite(maxSkew))) {
      throw new IllegalArgumentException("max skew must be a finite number >= 1: " + maxSkew);
    }
    this.partitionKey = partitionKey;
    this.partitioningDisabled = partitioningDisabled;
    this.maxSkew = maxSkew;
    this.strategy = Objects.requireNonNull(strategy, "strategy must not be null");
    if (fallbackDisabled && fallback != null) {
      throw new IllegalArgumentException("fallback '" + fallback + "' given while disabled");
    }
    if (!(loadFactor > 1.0) || Double.isInfinite(loadFactor)) {
      throw new IllegalArgumentException("load factor must be a finite number > 1: " + loadFactor);
    }
    if (!(costLoadFactor > 1.0) || Double.isInfinite(costLoadFactor)) {
      throw new IllegalArgumentException(
          "cost load factor must be a finite number > 1: " + costLoadFactor);
    }
    if (!(movedShareWarning >= 0.0 && movedShareWarning <= 1.0)) {
      throw new IllegalArgumentException(
          "moved share warning must be between 0 and 1: " + movedShareWarning);
    }
    this.fallback = fallback;
    this.fallbackDisabled = fallbackDisabled;
    this.loadFactor = loadFactor;
    this.costLoadFactor = costLoadFactor;
    this.movedShareWarning = movedShareWarning;
    this.listeners = List.copyOf(listeners);
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
   * @since 0.2.0
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
   * @since 0.2.0
   */
  public Optional<String> partitionKey() {
    return Optional.ofNullable(partitionKey);
  }

  /**
   * Whether the user explicitly opted out of partitioning (for {@code per-node}, of its
   * zone-aware fallback).
   *
   * @return true after {@code noPartitioning()} or {@code partitionBy("")}
   * @since 0.2.0
   */
  public boolean partitioningDisabled() {
    return partitioningDisabled;
  }

  /**
   * The skew limit: a partition's collectors carry on average at most this many times the
   * cluster-wide mean; targets past it spill over to other partitions.
   *
   * @return a finite number &ge; 1; empty for no limit (a partition never spills)
   * @since 0.2.0
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
   * The listeners to notify after each change, in registration order.
   *
   * @return an unmodifiable list
   */
  public List<AllocationListener> listeners() {
    return listeners;
  }
}
