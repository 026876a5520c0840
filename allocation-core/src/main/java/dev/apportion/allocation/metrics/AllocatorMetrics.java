package dev.apportion.allocation.metrics;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.AllocationListener;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Micrometer metrics for one {@link dev.apportion.allocation.Allocator}: how many targets each
 * collector holds, how many collectors and targets there are, how many targets are unassigned,
 * how long each write call took, and how many targets changes moved.
 *
 * <pre>{@code
 * Allocator allocator = Allocators.builder("per-node")
 *     .listener(AllocatorMetrics.of(registry))
 *     .build();
 * }</pre>
 *
 * <h2>Why a listener, not a builder argument</h2>
 * The API module ({@code dev.apportion.allocation}) has no third-party dependency, so
 * {@link Allocators.Builder} cannot take a {@link MeterRegistry}. Metrics attach through the
 * {@link AllocationListener} hook instead. An allocator built without this listener has no
 * listener at all and pays nothing: the engine does not even build the change object.
 *
 * <h2>Meters</h2>
 * Under a prefix ({@value #DEFAULT_PREFIX} unless {@link Builder#prefix(String)} says otherwise),
 * every meter tagged {@code strategy} plus the {@linkplain Builder#tags(Iterable) extra tags}:
 * <table>
 *   <caption>The meters</caption>
 *   <tr><th>name</th><th>type</th><th>extra tag</th><th>value</th></tr>
 *   <tr><td>{@code .targets.per.collector}</td><td>gauge</td><td>{@code collector}</td>
 *       <td>targets on that collector, every replica it holds counted; one gauge per live
 *       collector, removed with it</td></tr>
 *   <tr><td>{@code .cost.per.collector}</td><td>gauge</td><td>{@code collector}</td>
 *       <td>total {@linkplain dev.apportion.allocation.Target#cost() cost} of the targets on that
 *       collector ({@link Allocation#costOf}); equals the target count when no cost is
 *       attached; registered and removed with the targets gauge</td></tr>
 *   <tr><td>{@code .collectors.allocatable}</td><td>gauge</td><td></td>
 *       <td>collectors targets can be placed on</td></tr>
 *   <tr><td>{@code .targets}</td><td>gauge</td><td></td><td>known targets</td></tr>
 *   <tr><td>{@code .targets.unassigned}</td><td>gauge</td><td></td>
 *       <td>known targets placed nowhere (with replicas: on fewer collectors than
 *       {@code .replicas}): recounted after every change, 0 when none</td></tr>
 *   <tr><td>{@code .replicas}</td><td>gauge</td><td></td>
 *       <td>collectors each target is placed on when there are enough
 *       ({@link Allocation#replicas()}); 1 by default</td></tr>
 *   <tr><td>{@code .targets.outside.partition}</td><td>gauge</td><td></td>
 *       <td>targets placed outside their partition ({@link Allocation#outsidePartition()}): with
 *       zones, the cross-zone scrapes; 0 for a strategy that does not partition</td></tr>
 *   <tr><td>{@code .time.to.allocate}</td><td>timer</td>
 *       <td>{@code method} = {@code setTargets} | {@code setCollectors}</td>
 *       <td>one sample per write call, no-op calls included</td></tr>
 *   <tr><td>{@code .targets.moved}</td><td>counter</td><td></td>
 *       <td>targets moved from one collector to another, or to none, by changes
 *       ({@link AllocationChange#reassigned()}; with replicas, each replica's move): the churn a
 *       rollout causes</td></tr>
 * </table>
 * The meters are registered at the allocator's first write call (the listener learns the
 * strategy's name from it), and the gauges reflect the state after the latest call.
 *
 * <h2>One instance, one allocator</h2>
 * <b>Warning:</b> an instance holds the state of the one allocator it is registered with;
 * register a new instance with each allocator. Two allocators that report to one registry need a
 * distinguishing tag, e.g.
 * {@code AllocatorMetrics.builder(registry).tags(Tags.of("pool", "agents")).build()}. A metrics
 * problem never makes a write look failed: {@link #onChange} never throws. When the second
 * allocator's meters would collide with meters already in the registry (Micrometer would
 * otherwise hand back the first allocator's gauges and silently report its values), when an
 * instance is told about a change of another strategy than the first it saw (it is shared
 * between allocators), or when the registry throws, the instance logs one error saying what to
 * do and turns itself off: it publishes nothing more, and the allocator's writes carry on. When an allocator is replaced (say, on a configuration
 * reload), {@link #close()} its instance to remove its meters before the new allocator's first
 * call.
 *
 * <h2>Threads and cost</h2>
 * Called on the allocator's writer thread, while its writer lock is held (see
 * {@link AllocationListener}); the registry's readers may read the gauges at any time from other
 * threads and see the values of the latest change. Each call costs O(collectors) hash lookups
 * and allocates little (an iterator over the collectors, and a gauge for each new collector); it
 * blocks only on this instance's monitor, which only the allocator's writer and {@link #close()}
 * take, and on the registry while meters are registered or removed.
 *
 * @since 0.1.0
 */
public final class AllocatorMetrics implements AllocationListener, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AllocatorMetrics.class);

  /** The prefix of every meter's name unless {@link Builder#prefix(String)} sets another. */
  public static final String DEFAULT_PREFIX = "allocator";

  private static final String STRATEGY = "strategy";
  private static final String COLLECTOR = "collector";
  private static final String METHOD = "method";

  private final Meters meters;
  private final Tags extraTags;

  // Written on the allocator's writer thread only (and under this instance's monitor). The gauges'
  // values are volatile so that the registry's readers see the latest change.
  private String strategy;
  private Tags tags;
  private Timer setTargetsTimer;
  private Timer setCollectorsTimer;
  private Counter moved;
  private final Meters.Value collectors = new Meters.Value();
  private final Meters.Value targets = new Meters.Value();
  private final Meters.Value unassigned = new Meters.Value();
  private final Meters.Value outsidePartition = new Meters.Value();
  private final Meters.Value replicas = new Meters.Value();
  private final Map<String, CollectorGauge> perCollector = new HashMap<>();
  private long generation;
  private boolean closed;
  /** Set when a clash or a registry error turned this instance off: it publishes nothing more. */
  private boolean off;

  private AllocatorMetrics(MeterRegistry registry, String prefix, Tags extraTags) {
    this.meters = new Meters(registry, prefix);
    this.extraTags = extraTags;
  }

  /**
   * Metrics under the default prefix {@value #DEFAULT_PREFIX}, with no extra tags. Registers
   * nothing yet (see the class documentation).
   *
   * @param registry where to register the meters
   * @return a new listener, for one allocator
   * @throws NullPointerException if {@code registry} is null
   */
  public static AllocatorMetrics of(MeterRegistry registry) {
    return builder(registry).build();
  }

  /**
   * A builder, to set the prefix or add tags.
   *
   * @param registry where to register the meters
   * @return a new builder
   * @throws NullPointerException if {@code registry} is null
   */
  public static Builder builder(MeterRegistry registry) {
    return new Builder(Objects.requireNonNull(registry, "registry must not be null"));
  }

  /**
   * Updates the meters from {@code change}: records its duration, adds its reassigned targets to
   * the moved counter, and sets every gauge from {@link AllocationChange#after()}; registers a
   * gauge for each new collector and removes the gauge of each collector that left. At the first
   * call, registers the meters.
   *
   * @param change what the allocator did
   * @throws IllegalStateException if this instance already serves an allocator of another
   *     strategy, or, at the first call, if the registry already holds meters with these names
   *     and tags (another allocator's)
   */
  @Override
  public synchronized void onChange(AllocationChange change) {
    if (closed || off) {
      return;
    }
    try {
      record(change);
    } catch (RuntimeException e) {
      // A metrics problem must never make a write look failed: the change is applied already.
      turnOff("metrics for this allocator are off after an error from the registry; the "
          + "allocator is unaffected", e);
    }
  }

  /**
   * Stops publishing, once and for good, with one log line. Meters already registered stay (the
   * registry may be shared), so {@link #close()} still removes them.
   */
  private void turnOff(String why, RuntimeException cause) {
    off = true;
    if (cause == null) {
      LOG.error("AllocatorMetrics: {}", why);
    } else {
      LOG.error("AllocatorMetrics: {}", why, cause);
    }
  }

  private void record(AllocationChange change) {
    if (strategy == null) {
      String clash = clash(change.strategy());
      if (clash != null) {
        turnOff("the registry already has a meter " + clash + ", most likely another "
            + "allocator's: this allocator's metrics are off (its writes are unaffected). Give "
            + "each allocator's AllocatorMetrics a distinguishing tag, e.g. "
            + "AllocatorMetrics.builder(registry).tags(Tags.of(\"pool\", \"...\")) or another "
            + "prefix, or close() the AllocatorMetrics of the allocator this one replaces", null);
        return;
      }
      bind(change.strategy());
    } else if (!strategy.equals(change.strategy())) {
      turnOff("this AllocatorMetrics serves an allocator of strategy '" + strategy
          + "' and was told about a change of strategy '" + change.strategy() + "': register a "
          + "new AllocatorMetrics with each allocator; this instance publishes nothing more", null);
      return;
    }
    Timer timer = change.cause() == AllocationChange.Cause.SET_TARGETS
        ? setTargetsTimer : setCollectorsTimer;
    timer.record(change.durationNanos(), TimeUnit.NANOSECONDS);
    if (change.reassigned() > 0) {
      moved.increment(change.reassigned());
    }
    Allocation after = change.after();
    Set<Collector> live = after.collectors();
    collectors.value = live.size();
    targets.value = after.targets().size();
    unassigned.value = after.unassigned().size();
    outsidePartition.value = after.outsidePartition();
    replicas.value = after.replicas();
    long g = ++generation;
    for (Collector c : live) {
      CollectorGauge cg = perCollector.get(c.name());
      if (cg == null) {
        cg = new CollectorGauge();
        cg.gauge = meters.gauge(".targets.per.collector", cg,
            "Targets assigned to the collector", tags.and(COLLECTOR, c.name()));
        cg.cost = new Meters.Value();
        cg.costGauge = meters.gauge(".cost.per.collector", cg.cost,
            "Total cost (e.g. series per scrape) of the targets assigned to the collector",
            tags.and(COLLECTOR, c.name()));
        perCollector.put(c.name(), cg);
      }
      cg.value = after.targetCount(c.name());
      cg.cost.value = after.costOf(c.name());
      cg.generation = g;
    }
    if (perCollector.size() > live.size()) {
      for (Iterator<CollectorGauge> it = perCollector.values().iterator(); it.hasNext(); ) {
        CollectorGauge cg = it.next();
        if (cg.generation != g) {
          meters.remove(cg.gauge);
          meters.remove(cg.costGauge);
          it.remove();
        }
      }
    }
  }

  /**
   * Removes this instance's meters from the registry, for an allocator that is being discarded;
   * changes reported afterwards are ignored. Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (strategy == null) {
      return;
    }
    for (CollectorGauge cg : perCollector.values()) {
      meters.remove(cg.gauge);
      meters.remove(cg.costGauge);
    }
    perCollector.clear();
    meters.removeKept();
  }

  /** The id of a meter this instance would collide with, or null. */
  private String clash(String strategyName) {
    return meters.clash(extraTags.and(STRATEGY, strategyName), ".targets", ".targets.unassigned",
        ".collectors.allocatable", ".targets.outside.partition", ".replicas", ".targets.moved",
        ".time.to.allocate", ".targets.per.collector", ".cost.per.collector");
  }

  private void bind(String strategyName) {
    Tags t = extraTags.and(STRATEGY, strategyName);
    meters.keep(meters.gauge(".collectors.allocatable", collectors,
        "Collectors targets can be assigned to", t));
    meters.keep(meters.gauge(".targets", targets,
        "Targets known to the allocator, assigned or not", t));
    meters.keep(meters.gauge(".targets.unassigned", unassigned,
        "Known targets assigned to no collector (recounted after every change)", t));
    meters.keep(meters.gauge(".targets.outside.partition", outsidePartition,
        "Targets placed outside their partition (zone): their zone has no collector, or they "
            + "spilled over the skew limit; the cross-zone scrapes", t));
    meters.keep(meters.gauge(".replicas", replicas,
        "Collectors each target is placed on when there are enough (the configured replicas)",
        t));
    setTargetsTimer = meters.keep(timer(t, "setTargets"));
    setCollectorsTimer = meters.keep(timer(t, "setCollectors"));
    moved = meters.keep(meters.counter(".targets.moved",
        "Targets moved to another collector, or to none, by a change", t));
    this.tags = t;
    this.strategy = strategyName;
  }

  private Timer timer(Tags t, String method) {
    return meters.timer(".time.to.allocate",
        "Time a write call took to compute and publish the new allocation",
        t.and(METHOD, method));
  }

  /** One collector's gauge, and the last change that saw the collector alive. */
  private static final class CollectorGauge extends Meters.Value {
    Gauge gauge;
    Meters.Value cost;
    Gauge costGauge;
    long generation;
  }

  /**
   * Configures an {@link AllocatorMetrics}. Not thread-safe.
   *
   * @since 0.1.0
   */
  public static final class Builder {
    private final MeterRegistry registry;
    private String prefix = DEFAULT_PREFIX;
    private Tags tags = Tags.empty();

    private Builder(MeterRegistry registry) {
      this.registry = registry;
    }

    /**
     * The prefix of every meter's name, in Micrometer's dotted form. Default
     * {@value #DEFAULT_PREFIX}.
     *
     * @param prefix a non-empty name that neither starts nor ends with a dot
     * @return this builder
     * @throws NullPointerException if {@code prefix} is null
     * @throws IllegalArgumentException if {@code prefix} is empty or starts or ends with a dot
     */
    public Builder prefix(String prefix) {
      this.prefix = MeterNaming.checkPrefix(prefix);
      return this;
    }

    /**
     * Tags added to every meter, on top of those set before; e.g. one that tells two allocators
     * apart. The keys {@code strategy}, {@code collector} and {@code method} are this class's
     * own.
     *
     * @param extra the tags, e.g. {@code Tags.of("pool", "agents")}
     * @return this builder
     * @throws NullPointerException if {@code extra} or one of its tags is null
     * @throws IllegalArgumentException if a tag's key is {@code strategy}, {@code collector} or
     *     {@code method}
     */
    public Builder tags(Iterable<Tag> extra) {
      MeterNaming.checkTags(extra, Set.of(STRATEGY, COLLECTOR, METHOD), "AllocatorMetrics");
      this.tags = tags.and(extra);
      return this;
    }

    /**
     * A new listener with this configuration. Register it with one allocator only.
     *
     * @return the listener
     */
    public AllocatorMetrics build() {
      return new AllocatorMetrics(registry, prefix, tags);
    }
  }
}
