package dev.apportion.allocation.server;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.apportion.allocation.Collector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The collector set of a fleet outside Kubernetes, learned from the collectors' own polls: a
 * collector that asked for its targets within the last {@linkplain Builder#expireAfter expiry
 * window} is a member.
 *
 * <h2>Debouncing</h2>
 *
 * <ul>
 *   <li><b>Joining</b> is batched: polls only record a time ({@link #heard} never blocks and never
 *       changes the set); the set is re-evaluated every {@linkplain Builder#settle settle interval}
 *       on one thread, so a fleet that starts together joins in one change, not one per
 *       collector. A new collector's first poll is answered before it is a member (with nothing,
 *       or with what it held before); it receives its targets from its next poll on.
 *   <li><b>Leaving</b> waits for the expiry window (default three settle intervals). A collector
 *       that restarts under the same name and polls again within the window never leaves, so a
 *       restart moves nothing. Choose a window of two to three of the collectors' refresh
 *       intervals: shorter, and one slow poll drops a member; longer, and a dead one's targets
 *       wait longer for a new owner.
 *   <li><b>Strict</b> ({@link Builder#expected}): nothing is published until that many
 *       collectors have polled within the window, so the first poller does not take every target
 *       only to hand most of them back as the others arrive. Unlike the ownership module's strict
 *       view, the gate holds at startup only: once published, a collector that leaves is dropped
 *       even below the count, because a central allocator that held a dead member would leave its
 *       targets unscraped.
 * </ul>
 *
 * The consumer (typically {@code allocator::setCollectors}) is called on the evaluation thread only,
 * with an immutable list sorted by name, and only when the set changed. Membership changes are
 * logged at INFO once per change. Several replicas of a server only agree when every collector
 * polls every replica; behind a load balancer they do not (docs/server.md).
 *
 * <p>Thread-safe.
 */
public final class PollMembership implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PollMembership.class);

  private final Consumer<? super List<Collector>> consumer;
  private final long settleNanos;
  private final long expireNanos;
  private final int expected;
  private final LongSupplier nanoTime;
  private final Pattern allow;
  private final Map<String, Heard> heard = new ConcurrentHashMap<>();
  private final Object lock = new Object();

  @GuardedBy("lock")
  private List<Collector> published;

  @GuardedBy("lock")
  private ScheduledExecutorService timer;

  private volatile List<Collector> current = List.of();
  private volatile boolean publishedOnce;
  private volatile boolean warnedFull;
  private volatile boolean warnedRefused;

  private record Heard(long at, String node) {}

  private PollMembership(Builder b) {
    this.consumer = b.consumer;
    this.settleNanos = b.settle.toNanos();
    this.expireNanos = (b.expireAfter != null ? b.expireAfter : b.settle.multipliedBy(3)).toNanos();
    this.expected = b.expected;
    this.nanoTime = b.nanoTime;
    this.allow = b.allow;
  }

  /**
   * A builder whose membership feeds {@code consumer}.
   *
   * @param consumer receives each new collector set; not null
   * @return a new builder
   */
  public static Builder builder(Consumer<? super List<Collector>> consumer) {
    return new Builder(Objects.requireNonNull(consumer, "consumer"));
  }

  /** The most distinct names remembered at once: polls name themselves, so the map is bounded. */
  static final int MAX_MEMBERS = 10_000;

  /**
   * Records a poll. Never blocks (one concurrent-map write) and changes nothing by itself. Past
   * {@value #MAX_MEMBERS} remembered names, polls from new names are ignored (logged once); so are
   * names the {@linkplain Builder#allow allow pattern} does not match (the first one logged once).
   *
   * @param collector the collector's name; ignored when null or blank
   * @param node its node, or null or blank for none
   */
  public void heard(String collector, String node) {
    if (collector == null || collector.isBlank()) {
      return;
    }
    if (allow != null && !allow.matcher(collector).matches()) {
      if (!warnedRefused) {
        warnedRefused = true;
        LOG.warn(
            "ignoring polls from collector names that do not match {} (the first: '{}'); logged once",
            allow.pattern(),
            collector.length() > 100 ? collector.substring(0, 100) + "..." : collector);
      }
      return;
    }
    if (heard.size() >= MAX_MEMBERS && !heard.containsKey(collector)) {
      if (!warnedFull) {
        warnedFull = true;
        LOG.warn("{} collectors polled within the expiry window; ignoring new names", MAX_MEMBERS);
      }
      return;
    }
    heard.put(collector, new Heard(nanoTime.getAsLong(), node == null || node.isBlank() ? null : node));
  }

  /**
   * Evaluates the membership now and publishes it if it changed (and the strict gate, if any, is
   * open). Blocks while the consumer runs; {@link #start()} calls it every settle interval.
   */
  public void evaluate() {
    synchronized (lock) {
      long now = nanoTime.getAsLong();
      heard.entrySet().removeIf(e -> now - e.getValue().at() > expireNanos);
      List<Collector> live = new ArrayList<>();
      heard.forEach((name, h) -> live.add(Collector.of(name, h.node())));
      live.sort((a, b) -> a.name().compareTo(b.name()));
      List<Collector> next = List.copyOf(live);
      if (published == null && next.size() < Math.max(1, expected)) {
        return;
      }
      if (next.equals(published)) {
        return;
      }
      LOG.info(
          "collectors from polls: {} (was {})",
          names(next),
          published == null ? "none published" : names(published));
      published = next;
      current = next;
      publishedOnce = true;
      consumer.accept(next);
    }
  }

  private static List<String> names(List<Collector> collectors) {
    List<String> out = new ArrayList<>(collectors.size());
    for (Collector c : collectors) {
      out.add(c.node().map(n -> c.name() + "@" + n).orElse(c.name()));
    }
    return out;
  }

  /**
   * The last published set. Never blocks.
   *
   * @return an immutable list sorted by name; empty before the first publication
   */
  public List<Collector> current() {
    return current;
  }

  /**
   * Whether a set has been published (in strict mode: the expected count was reached once).
   * Never blocks.
   *
   * @return true once published
   */
  public boolean hasPublished() {
    return publishedOnce;
  }

  /**
   * Starts evaluating every settle interval on a daemon thread. Does not block.
   *
   * @return this membership
   */
  public PollMembership start() {
    synchronized (lock) {
      if (timer == null) {
        timer =
            Executors.newSingleThreadScheduledExecutor(
                r -> {
                  Thread t = new Thread(r, "apportion-poll-membership");
                  t.setDaemon(true);
                  return t;
                });
        ScheduledFuture<?> unused = timer.scheduleWithFixedDelay(this::evaluateLogged, settleNanos, settleNanos, TimeUnit.NANOSECONDS);
      }
    }
    return this;
  }

  private void evaluateLogged() {
    try {
      evaluate();
    } catch (RuntimeException e) {
      LOG.warn("publishing the collectors from polls failed; retrying at the next evaluation", e);
    }
  }

  /** Stops evaluating. Does not wait for an evaluation in progress. */
  @Override
  public void close() {
    synchronized (lock) {
      if (timer != null) {
        timer.shutdownNow();
        timer = null;
      }
    }
  }

  /** Configures a {@link PollMembership}. Not thread-safe. */
  public static final class Builder {
    private final Consumer<? super List<Collector>> consumer;
    private Duration settle = Duration.ofSeconds(5);
    private Duration expireAfter;
    private int expected;
    private LongSupplier nanoTime = System::nanoTime;
    private Pattern allow;

    private Builder(Consumer<? super List<Collector>> consumer) {
      this.consumer = consumer;
    }

    /**
     * How often the set is re-evaluated, which is also how long joins are batched. Default 5 s.
     *
     * @param settle positive
     * @return this builder
     */
    public Builder settle(Duration settle) {
      if (settle.isNegative() || settle.isZero()) {
        throw new IllegalArgumentException("settle must be positive");
      }
      this.settle = settle;
      return this;
    }

    /**
     * How long after its last poll a collector stops being a member. Default three settle
     * intervals.
     *
     * @param expireAfter positive
     * @return this builder
     */
    public Builder expireAfter(Duration expireAfter) {
      if (expireAfter.isNegative() || expireAfter.isZero()) {
        throw new IllegalArgumentException("expireAfter must be positive");
      }
      this.expireAfter = expireAfter;
      return this;
    }

    /**
     * Strict mode: publish nothing until this many collectors have polled within the window.
     * Default 0 (publish from the first poll on).
     *
     * @param count at least 0
     * @return this builder
     */
    public Builder expected(int count) {
      if (count < 0) {
        throw new IllegalArgumentException("expected must not be negative");
      }
      this.expected = count;
      return this;
    }

    /**
     * Only names this pattern matches entirely can become members; polls from other names are
     * answered (with no targets) but never join. Without it (the default) any name that polls
     * joins, so a request with a made-up name makes a phantom member that takes targets until it
     * expires.
     *
     * @param pattern the names allowed, such as {@code prometheus-[0-9]+}; not null
     * @return this builder
     */
    public Builder allow(Pattern pattern) {
      this.allow = Objects.requireNonNull(pattern, "pattern");
      return this;
    }

    Builder nanoTime(LongSupplier nanoTime) {
      this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
      return this;
    }

    /**
     * A membership, not yet started.
     *
     * @return the membership
     */
    public PollMembership build() {
      return new PollMembership(this);
    }
  }
}
