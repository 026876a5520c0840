package dev.apportion.allocation.server;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import dev.apportion.allocation.Collector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
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
 *       collector. A name joins only once it has polled <em>twice, at least one settle interval
 *       apart</em> (a scraper polls again at its refresh interval; a one-off request never joins),
 *       and at most {@linkplain Builder#maxJoins a bounded number} of names join per evaluation,
 *       those waiting longest first. A new collector is answered (with nothing) until it is a
 *       member; it receives its targets from the poll after it joined.
 *   <li><b>Joining at the first poll</b>: with an {@linkplain Builder#allow allow pattern} the
 *       operator has named the fleet, so one poll from an allowed name is enough, and a name's
 *       first poll places it before that poll is answered ({@link #heard} runs the consumer on the
 *       calling thread): a collector scrapes from its first poll, rather than one of its refresh
 *       intervals later. At most {@linkplain Builder#maxJoins the same bound} of names join that
 *       way per settle interval; past it they join at the next evaluation. In strict mode nothing
 *       joins that way before the first publication.
 *   <li><b>Floods</b>: names that are not members yet are remembered up to {@value #MAX_MEMBERS};
 *       past that new names are ignored until some expire, but members are never pushed out, so a
 *       flood of made-up names cannot take targets from the collectors that poll. What a flood can
 *       still do: delay the joining of a genuinely new collector while it lasts, and, with names
 *       it repeats at the scrapers' pace, add at most {@linkplain Builder#maxJoins} phantoms per
 *       interval (set {@linkplain Builder#allow allow} to stop that).
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
 * logged at INFO once per change, as counts and a bounded sample of the names (escaped: names come
 * from requests). Several replicas of a server only agree when every collector
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
  private final String allowRegex;
  private final int maxJoins;
  private final Map<String, Heard> heard = new ConcurrentHashMap<>();
  private final Object lock = new Object();

  @GuardedBy("lock")
  private List<Collector> published;

  /** The names of the published set; written under the lock, read by {@link #heard}. */
  private volatile Set<String> members = Set.of();

  @GuardedBy("lock")
  private ScheduledExecutorService timer;

  /** Names that announced they are leaving, and since when they hold nothing (or NONE). */
  @GuardedBy("lock")
  private final Map<String, Long> leaving = new HashMap<>();

  /** Read without the lock by {@link #heard}: the names of {@link #leaving}. */
  private volatile Set<String> leavingNames = Set.of();

  private static final long NONE = Long.MIN_VALUE;

  /** What a collector is answered, with a 503, while membership settles after a start. */
  static final String SETTLING =
      "membership is settling after a start: keep your last targets and ask again";

  private final Predicate<String> drained;
  private volatile long startedAt;
  private volatile boolean settled;

  /**
   * Settled on time alone, nobody heard since the start (a standby replica, say): the first poll
   * starts the settling again, since its sender may hold targets another replica gave it.
   */
  private volatile boolean settledIdle;

  private volatile List<Collector> current = List.of();
  private volatile boolean publishedOnce;
  private volatile boolean warnedFull;
  private volatile boolean warnedRefused;

  /** When the current settle interval's budget of joins at a first poll started, and its use. */
  @GuardedBy("lock")
  private long firstPollWindow;

  @GuardedBy("lock")
  private int firstPollJoins;

  /** When a name first and last polled (within the expiry window), and its node. */
  private record Heard(long first, long at, String node) {}

  private PollMembership(Builder b) {
    this.consumer = b.consumer;
    this.settleNanos = b.settle.toNanos();
    this.expireNanos = (b.expireAfter != null ? b.expireAfter : b.settle.multipliedBy(3)).toNanos();
    this.expected = b.expected;
    this.nanoTime = b.nanoTime;
    this.allow = b.allow;
    this.allowRegex = b.allowRegex;
    this.maxJoins = b.maxJoins;
    this.drained = b.drained != null ? b.drained : name -> !members.contains(name);
    this.startedAt = nanoTime.getAsLong();
    this.settled = !b.holdAtStart;
  }

  /**
   * The pattern a name must match entirely, as Prometheus anchors its regular expressions: {@code
   * ^(?s:REGEX)$}, in RE2 syntax, matched in linear time (RE2J), so no name can make a match run
   * long.
   *
   * @param regex the expression, such as {@code prometheus-[0-9]+}
   * @return the compiled, anchored pattern
   * @throws IllegalArgumentException if {@code regex} is not valid RE2 syntax
   */
  static Pattern compileAllow(String regex) {
    Objects.requireNonNull(regex, "regex");
    try {
      return Pattern.compile("^(?s:" + regex + ")$");
    } catch (PatternSyntaxException e) {
      throw new IllegalArgumentException(e.getDescription() + " in '" + regex + "'", e);
    }
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

  /**
   * The most names that are not members remembered at once: polls name themselves, so the map is
   * bounded; members are not counted.
   */
  static final int MAX_MEMBERS = 10_000;

  /**
   * Records a poll. Past {@value #MAX_MEMBERS} remembered names that are not members, polls from
   * new names are ignored (logged once); so are names the {@linkplain Builder#allow allow pattern}
   * does not match (the first one logged once, escaped). Without an allow pattern it never blocks
   * (one concurrent-map write) and changes nothing by itself, except that the first poll after a
   * start that settled with nobody polling starts the settling again ({@link #settled}; it takes
   * the lock once). With one, the first poll of an
   * allowed name that is not a member places it: this blocks while the consumer runs, within the
   * per-interval budget of {@linkplain Builder#maxJoins joins}; every other poll never blocks.
   *
   * @param collector the collector's name; ignored when null or blank
   * @param node its node, or null or blank for none
   */
  public void heard(String collector, String node) {
    if (collector == null || collector.isBlank()) {
      return;
    }
    if (allow != null && !allow.matches(collector)) {
      if (!warnedRefused) {
        warnedRefused = true;
        LOG.warn(
            "ignoring polls from collector names that do not match {} (the first: '{}'); logged once",
            LogSafe.text(allowRegex),
            LogSafe.text(collector));
      }
      return;
    }
    if (leavingNames.contains(collector)) {
      return; // it announced its leave: its polls do not make it a member again for now
    }
    String n = node == null || node.isBlank() ? null : node;
    long now = nanoTime.getAsLong();
    Heard before = heard.get(collector);
    if (before == null && heard.size() - members.size() >= MAX_MEMBERS) {
      if (!warnedFull) {
        warnedFull = true;
        LOG.warn(
            "{} names that are not members yet polled within the expiry window; ignoring new names"
                + " until some expire (members are kept); logged once",
            MAX_MEMBERS);
      }
      return;
    }
    heard.merge(collector, new Heard(now, now, n), (old, fresh) -> new Heard(old.first(), now, n));
    if (settledIdle && allow == null) {
      settleAgain(now);
    }
    if (allow != null && before == null && !members.contains(collector)) {
      joinAtFirstPoll(collector, n, now);
    }
  }

  /**
   * Places an allowed name at its first poll, so that the poll is answered with its targets: within
   * the budget of {@link Builder#maxJoins} such joins per settle interval, and (strict mode) only
   * once a set was published.
   */
  private void joinAtFirstPoll(String collector, String node, long now) {
    synchronized (lock) {
      if ((published == null && expected > 0) || members.contains(collector)) {
        return;
      }
      if (now - firstPollWindow >= settleNanos) {
        firstPollWindow = now;
        firstPollJoins = 0;
      }
      if (firstPollJoins >= maxJoins) {
        return;
      }
      firstPollJoins++;
      List<Collector> live = new ArrayList<>(published == null ? List.of() : published);
      live.add(Collector.of(collector, node));
      live.sort((a, b) -> a.name().compareTo(b.name()));
      publish(List.copyOf(live));
    }
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
      List<Map.Entry<String, Heard>> waiting = new ArrayList<>();
      for (Map.Entry<String, Heard> e : heard.entrySet()) {
        Heard h = e.getValue();
        if (members.contains(e.getKey())) {
          live.add(Collector.of(e.getKey(), h.node()));
        } else if (allow != null || h.at() - h.first() >= settleNanos) {
          waiting.add(e);
        }
      }
      waiting.sort(
          Comparator.comparingLong((Map.Entry<String, Heard> e) -> e.getValue().first())
              .thenComparing(Map.Entry::getKey));
      for (int i = 0; i < waiting.size() && i < maxJoins; i++) {
        live.add(Collector.of(waiting.get(i).getKey(), waiting.get(i).getValue().node()));
      }
      live.sort((a, b) -> a.name().compareTo(b.name()));
      List<Collector> next = List.copyOf(live);
      lapseLeaves(now);
      boolean allJoined = waiting.size() <= maxJoins;
      boolean allHeardAreMembers = allJoined && next.size() == heard.size();
      if (published == null && next.size() < Math.max(1, expected)) {
        // nobody to protect: settle on time alone when nothing was heard (strict mode waits)
        settleIfDue(now, allJoined, allHeardAreMembers, expected == 0 && heard.isEmpty());
        return;
      }
      settleIfDue(now, allJoined, allHeardAreMembers, true);
      if (next.equals(published)) {
        return;
      }
      publish(next);
    }
  }

  @GuardedBy("lock")
  private void publish(List<Collector> next) {
    LOG.info("{}", change(published, next));
    published = next;
    Set<String> names = new HashSet<>();
    next.forEach(c -> names.add(c.name()));
    members = names;
    current = next;
    publishedOnce = true;
    consumer.accept(next);
  }

  /**
   * Settled once the expiry window has passed since the start (everyone alive has polled by then)
   * and this evaluation joined every name waiting, with a set published; or, in strict mode, once
   * the set is published and every name heard is a member.
   */
  @GuardedBy("lock")
  private void settleIfDue(long now, boolean allJoined, boolean allHeardAreMembers, boolean publishing) {
    if (settled || !publishing) {
      return;
    }
    boolean windowPassed = now - startedAt >= expireNanos && allJoined;
    boolean allExpected = expected > 0 && allHeardAreMembers;
    if (windowPassed || allExpected) {
      settled = true;
      settledIdle = published == null && heard.isEmpty();
      LOG.info("collector membership settled; answering every collector");
    }
  }

  /**
   * The first poll since a start that settled with nobody polling: this server may be a replica
   * the collectors were moved to, each holding targets another replica gave it, so it settles again
   * from now (answering 503 for the expiry window, while every collector alive polls) rather than
   * answer the first ones with nothing before they joined. Without it a standby replica taking over
   * would empty every collector until it had joined.
   */
  private void settleAgain(long now) {
    synchronized (lock) {
      if (!settledIdle) {
        return;
      }
      settledIdle = false;
      settled = false;
      startedAt = now;
      LOG.info("the first poll since a start nobody polled: settling again for the expiry window");
    }
  }

  /** Ends the leaves of names that have held nothing for the expiry window. */
  @GuardedBy("lock")
  private void lapseLeaves(long now) {
    if (leaving.isEmpty()) {
      return;
    }
    boolean changed = false;
    for (Iterator<Map.Entry<String, Long>> it = leaving.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Long> e = it.next();
      if (!drained.test(e.getKey())) {
        e.setValue(NONE);
      } else if (e.getValue() == NONE) {
        e.setValue(now);
      } else if (now - e.getValue() >= expireNanos) {
        it.remove();
        changed = true;
      }
    }
    if (changed) {
      leavingNames = Set.copyOf(leaving.keySet());
    }
  }

  /**
   * Records that {@code collector} is going away on purpose: it leaves the set now (published at
   * once), so its targets move while it still runs; its polls are ignored until it has held
   * nothing for the expiry window. Blocks while the consumer runs.
   *
   * @param collector the name
   * @return false when the name is blank or not allowed
   */
  public boolean leave(String collector) {
    if (collector == null || collector.isBlank() || (allow != null && !allow.matches(collector))) {
      return false;
    }
    synchronized (lock) {
      if (!members.contains(collector) && !heard.containsKey(collector)) {
        return true; // not a member, nothing to hand over; nothing remembered for made-up names
      }
      leaving.put(collector, NONE);
      leavingNames = Set.copyOf(leaving.keySet());
      heard.remove(collector);
      LOG.info("collector '{}' announced its leave", LogSafe.text(collector));
    }
    evaluate();
    return true;
  }

  /**
   * Whether membership has settled since the start: until then collectors are answered 503 (a
   * client keeps its last targets on a failed refresh) and readiness is false, so a restarted
   * server never answers a collector with less than it had. A start that settled on time alone,
   * nobody polling (without an allow pattern), settles again from the first poll: a standby replica
   * that the collectors are moved to answers them 503 until it has heard them all, not nothing. A
   * reload continues the settling of the membership it replaces. Never blocks.
   *
   * @return true once settled
   */
  public boolean settled() {
    return settled;
  }

  /**
   * Whether {@code collector} is answered its targets now: always once settled; before that, in
   * strict mode, the members of the published set. Never blocks.
   *
   * @param collector the name
   * @return false while it must be answered 503
   */
  boolean answering(String collector) {
    return settled || (expected > 0 && publishedOnce && members.contains(collector));
  }

  /**
   * Starts from {@code collectors} as members, published at once: a reloaded service keeps the
   * collectors that were polling, and continues its settling (settled if it was, else from the
   * same start). Blocks while the consumer runs.
   *
   * @param collectors the members, sorted by name
   * @param previous the membership it continues
   */
  void seed(List<Collector> collectors, PollMembership previous) {
    synchronized (lock) {
      startedAt = previous.startedAt;
      if (previous.settled) {
        settled = true;
        settledIdle = previous.settledIdle && collectors.isEmpty();
      }
      if (collectors.isEmpty()) {
        return;
      }
      long now = nanoTime.getAsLong();
      Set<String> names = new HashSet<>();
      for (Collector c : collectors) {
        heard.put(c.name(), new Heard(now, now, c.node().orElse(null)));
        names.add(c.name());
      }
      List<Collector> next = List.copyOf(collectors);
      published = next;
      members = names;
      current = next;
      publishedOnce = true;
      consumer.accept(next);
    }
  }

  /**
   * The one log line of a membership change: counts, and a bounded, escaped sample of the names
   * that joined and left (a change of 40,000 names is one short line, not every name twice).
   */
  static String change(List<Collector> before, List<Collector> after) {
    Set<String> was = new HashSet<>();
    if (before != null) {
      before.forEach(c -> was.add(label(c)));
    }
    Set<String> now = new HashSet<>();
    after.forEach(c -> now.add(label(c)));
    List<String> joined = new ArrayList<>();
    for (Collector c : after) {
      if (!was.contains(label(c))) {
        joined.add(label(c));
      }
    }
    List<String> left = new ArrayList<>();
    if (before != null) {
      for (Collector c : before) {
        if (!now.contains(label(c))) {
          left.add(label(c));
        }
      }
    }
    return "collectors from polls: "
        + after.size()
        + (before == null ? " (first publication)" : " (was " + before.size() + ")")
        + "; joined "
        + joined.size()
        + " "
        + LogSafe.sample(joined)
        + "; left "
        + left.size()
        + " "
        + LogSafe.sample(left);
  }

  private static String label(Collector c) {
    return c.node().map(n -> c.name() + "@" + n).orElse(c.name());
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
    private String allowRegex;
    private int maxJoins = 100;
    private Predicate<String> drained;
    private boolean holdAtStart = true;

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
     * Only names this regular expression matches entirely can become members; polls from other
     * names are answered (with no targets) but never join. The expression is RE2 syntax, anchored
     * as Prometheus anchors its own ({@code ^(?s:REGEX)$}) and matched in time linear in the
     * name's length (RE2J), so no name can make the match run long. Without it (the default) any
     * name that polls twice joins; with it, an allowed name joins at its first poll, which is
     * answered with its targets.
     *
     * @param regex the names allowed, such as {@code prometheus-[0-9]+}; not null
     * @return this builder
     * @throws IllegalArgumentException if {@code regex} is not valid RE2 syntax
     */
    public Builder allow(String regex) {
      this.allow = compileAllow(regex);
      this.allowRegex = regex;
      return this;
    }

    /**
     * The most names that join in one evaluation; the others wait for the next ones, those that
     * have waited longest first. Bounds how fast a flood of repeated made-up names can add members.
     * Default 100.
     *
     * @param max at least 1
     * @return this builder
     */
    public Builder maxJoins(int max) {
      if (max < 1) {
        throw new IllegalArgumentException("maxJoins must be at least 1");
      }
      this.maxJoins = max;
      return this;
    }

    /**
     * Whether a name that announced its leave holds nothing any more (so its leave can lapse once
     * the expiry window has passed). Default: it is not a member. Called on the evaluation thread.
     *
     * @param drained the test; not null
     * @return this builder
     */
    public Builder drained(Predicate<String> drained) {
      this.drained = Objects.requireNonNull(drained, "drained");
      return this;
    }

    /**
     * Whether collectors are answered 503, and readiness is false, until membership has settled
     * after the start ({@link PollMembership#settled}). Default true: a restarted server must not
     * answer a collector with less than it had.
     *
     * @param hold false to answer from the first publication on
     * @return this builder
     */
    public Builder holdAtStart(boolean hold) {
      this.holdAtStart = hold;
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
