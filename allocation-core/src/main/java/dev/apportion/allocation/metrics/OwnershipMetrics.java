package dev.apportion.allocation.metrics;

import dev.apportion.allocation.ownership.Ownership;
import dev.apportion.allocation.ownership.OwnershipChange;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Micrometer metrics for one replica's decentralized {@link Ownership}: its state, the members it
 * sees, the targets it owns, and the fingerprint of its view, so that an operator can see two
 * replicas disagreeing (the silent failure of replicas that each think their own member list is
 * the truth: some targets scraped twice, some by no one).
 *
 * <pre>{@code
 * OwnershipMetrics metrics = OwnershipMetrics.of(registry);
 * Ownership view = Ownership.of(self, peers);
 * metrics.record(view, view.owned(targets).size());
 * // on every membership or target change:
 * OwnershipChange change = view.update(peers, targets);
 * view = change.after();
 * metrics.record(change, view.owned(targets).size());
 * }</pre>
 *
 * <h2>Why calls, not a listener</h2>
 * An {@link Ownership} is an immutable value with no listener hook (a replica builds a new one
 * on every change), so the replica tells the metrics what it now holds, as it tells its scraper.
 *
 * <h2>Meters</h2>
 * Under a prefix ({@value #DEFAULT_PREFIX} unless {@link Builder#prefix(String)} says otherwise),
 * each with the {@linkplain Builder#tags extra tags}:
 * <table>
 *   <caption>The meters</caption>
 *   <tr><th>name</th><th>type</th><th>extra tag</th><th>value</th></tr>
 *   <tr><td>{@code .state}</td><td>gauge</td><td>{@code state} = {@code SHARED} |
 *       {@code ALONE} | {@code FAIL_SAFE} | {@code WAITING}</td>
 *       <td>1 for the current state, 0 for the three others (one series per state, so an alert
 *       is {@code ownership_state{state="FAIL_SAFE"} == 1})</td></tr>
 *   <tr><td>{@code .members}</td><td>gauge</td><td></td><td>members in the view's list</td></tr>
 *   <tr><td>{@code .targets.owned}</td><td>gauge</td><td></td>
 *       <td>targets the replica owns, as last recorded</td></tr>
 *   <tr><td>{@code .fingerprint}</td><td>gauge</td><td></td>
 *       <td>the top 52 bits of {@link Ownership#fingerprint()} (a metric value is a double, exact
 *       up to 2<sup>53</sup>): replicas whose views agree show the same value, so
 *       {@code count(count_values("fp", ownership_fingerprint)) > 1} means they disagree</td></tr>
 *   <tr><td>{@code .targets.gained}, {@code .targets.lost}</td><td>counter</td><td></td>
 *       <td>targets an {@link OwnershipChange} gave or took</td></tr>
 * </table>
 *
 * <h2>Threads and cost</h2>
 * {@link #record} may be called from any thread; calls are serialized on this instance's
 * monitor. Each costs a few volatile writes; the meters are registered by the first call. A
 * metrics problem never fails the caller: like {@link AllocatorMetrics}, a clash with meters
 * already in the registry, or an error from the registry, is logged once and turns the instance
 * off.
 *
 * @since 0.1.0
 */
public final class OwnershipMetrics implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(OwnershipMetrics.class);

  /** The prefix of every meter's name unless {@link Builder#prefix(String)} sets another. */
  public static final String DEFAULT_PREFIX = "ownership";

  private final Meters meters;
  private final Tags tags;

  private final Map<Ownership.State, Meters.Value> states = new EnumMap<>(Ownership.State.class);
  private final Meters.Value members = new Meters.Value();
  private final Meters.Value owned = new Meters.Value();
  private final Meters.Value fingerprint = new Meters.Value();
  private Counter gained;
  private Counter lost;
  private boolean bound;
  private boolean off;
  private boolean closed;

  private OwnershipMetrics(MeterRegistry registry, String prefix, Tags tags) {
    this.meters = new Meters(registry, prefix);
    this.tags = tags;
    for (Ownership.State s : Ownership.State.values()) {
      states.put(s, new Meters.Value());
    }
  }

  /**
   * Metrics under the default prefix, with no extra tags.
   *
   * @param registry where the meters go; not null
   * @return the metrics, with no meter registered yet
   * @throws NullPointerException if {@code registry} is null
   */
  public static OwnershipMetrics of(MeterRegistry registry) {
    return builder(registry).build();
  }

  /**
   * A builder, for another prefix or extra tags (one replica's metrics in a registry shared by
   * several: tag them apart).
   *
   * @param registry where the meters go; not null
   * @return the builder
   * @throws NullPointerException if {@code registry} is null
   */
  public static Builder builder(MeterRegistry registry) {
    return new Builder(Objects.requireNonNull(registry, "registry must not be null"));
  }

  /**
   * Records the view a replica now holds and how many targets it owns. Never throws for a
   * metrics problem (see the class documentation).
   *
   * @param view the replica's current view; not null
   * @param targetsOwned how many targets it owns, e.g. {@code view.owned(targets).size()}
   * @throws NullPointerException if {@code view} is null
   * @throws IllegalArgumentException if {@code targetsOwned} is negative
   */
  public synchronized void record(Ownership view, int targetsOwned) {
    Objects.requireNonNull(view, "view must not be null");
    if (targetsOwned < 0) {
      throw new IllegalArgumentException("targets owned must not be negative: " + targetsOwned);
    }
    if (closed || off) {
      return;
    }
    try {
      if (!bound && !bind()) {
        return;
      }
      for (Map.Entry<Ownership.State, Meters.Value> e : states.entrySet()) {
        e.getValue().value = e.getKey() == view.state() ? 1 : 0;
      }
      members.value = view.members().size();
      owned.value = targetsOwned;
      fingerprint.value = view.fingerprint() >>> 12;
    } catch (RuntimeException e) {
      off = true;
      LOG.error("OwnershipMetrics: metrics are off after an error from the registry; ownership "
          + "is unaffected", e);
    }
  }

  /**
   * Records a change: its view, the targets it gave and took, and how many the replica now owns.
   *
   * @param change what {@link Ownership#update} returned; not null
   * @param targetsOwned how many targets the replica owns after it
   * @throws NullPointerException if {@code change} is null
   * @throws IllegalArgumentException if {@code targetsOwned} is negative
   */
  public synchronized void record(OwnershipChange change, int targetsOwned) {
    Objects.requireNonNull(change, "change must not be null");
    record(change.after(), targetsOwned);
    if (bound && !off && !closed) {
      gained.increment(change.gained().size());
      lost.increment(change.lost().size());
    }
  }

  private boolean bind() {
    String clash = meters.clash(tags, ".state", ".members", ".targets.owned", ".fingerprint",
        ".targets.gained", ".targets.lost");
    if (clash != null) {
      off = true;
      LOG.error("OwnershipMetrics: the registry already has a meter {}, most likely another "
          + "replica's or view's: these metrics are off (ownership is unaffected). Give each "
          + "OwnershipMetrics a distinguishing tag, e.g. OwnershipMetrics.builder(registry)"
          + ".tags(Tags.of(\"replica\", \"...\")), or close() the one this replaces", clash);
      return false;
    }
    for (Map.Entry<Ownership.State, Meters.Value> e : states.entrySet()) {
      meters.keep(meters.gauge(".state", e.getValue(),
          "1 for the replica's current ownership state, 0 for the others",
          tags.and("state", e.getKey().name())));
    }
    meters.keep(meters.gauge(".members", members, "Members in the replica's view", tags));
    meters.keep(meters.gauge(".targets.owned", owned, "Targets the replica owns", tags));
    meters.keep(meters.gauge(".fingerprint", fingerprint,
        "Top 52 bits of the view's fingerprint: equal on replicas that agree", tags));
    gained = meters.keep(meters.counter(".targets.gained", "Targets a change gave the replica",
        tags));
    lost = meters.keep(meters.counter(".targets.lost", "Targets a change took from the replica",
        tags));
    bound = true;
    return true;
  }

  /** Removes this instance's meters from the registry; later calls record nothing. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    meters.removeKept();
  }

  /** Configures an {@link OwnershipMetrics}. Not thread-safe; build once. */
  public static final class Builder {
    private final MeterRegistry registry;
    private String prefix = DEFAULT_PREFIX;
    private Tags tags = Tags.empty();

    private Builder(MeterRegistry registry) {
      this.registry = registry;
    }

    /**
     * The prefix of every meter's name.
     *
     * @param prefix non-empty, neither starting nor ending with a dot
     * @return this builder
     * @throws NullPointerException if {@code prefix} is null
     * @throws IllegalArgumentException if {@code prefix} is empty or starts or ends with a dot
     */
    public Builder prefix(String prefix) {
      this.prefix = MeterNaming.checkPrefix(prefix);
      return this;
    }

    /**
     * Tags added to every meter; the key {@code state} is reserved.
     *
     * @param extra the tags; not null
     * @return this builder
     * @throws NullPointerException if {@code extra} or a tag is null
     * @throws IllegalArgumentException if a tag's key is {@code state}
     */
    public Builder tags(Iterable<Tag> extra) {
      MeterNaming.checkTags(extra, Set.of("state"), "OwnershipMetrics");
      this.tags = tags.and(extra);
      return this;
    }

    /**
     * The metrics.
     *
     * @return a new instance; no meter is registered before its first {@link #record}
     */
    public OwnershipMetrics build() {
      return new OwnershipMetrics(registry, prefix, tags);
    }
  }
}
