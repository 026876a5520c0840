package dev.apportion.allocation.server;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps an {@link Allocator}'s targets equal to what its {@link TargetSource}s know. Each source is
 * read on its own schedule (every refresh interval after its previous read ended), under a
 * {@linkplain Builder#readTimeout deadline} that covers its whole answer, and as soon as a read
 * brings a new list the allocator is given the concatenation of every source's last good list (in
 * the order the sources were added) in one {@link Allocator#setTargets} call (an unchanged set costs
 * the allocator two number comparisons per target and publishes nothing). So a slow source delays
 * no other source's change: it only ever delays itself.
 *
 * <p>A source that fails in any way (an {@link IOException}, a timeout, any {@link Throwable}
 * including an {@link OutOfMemoryError} while it is parsed) keeps its last good list, so a flapping
 * SD endpoint does not drop its targets; it is marked down ({@link #isUp}), the failure is logged at
 * WARN once per episode (the first failure after a success) and the recovery at INFO, and its next
 * read runs as scheduled ({@link FeedLoop}). A source whose read is still blocked (in a read the
 * interrupt cannot end) is not read again until that read ends: it stays down meanwhile. So is an
 * allocator that refuses the targets ({@code setTargets} throws): WARN with the stack trace when it
 * starts, INFO when it ends, nothing at the refreshes between. Until every source has been read
 * once, nothing is set and {@link #isReady()} is false: a half-read start would place a partial set
 * and then move it.
 *
 * <p>Thread-safe. {@link #refresh()} blocks on the sources' I/O (at most the read timeout) and on
 * the allocator's writers; {@link #start()} runs each source's reads on a daemon thread of its own,
 * and reads run on daemon threads of their own (at most one per source).
 */
public final class TargetFeed implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TargetFeed.class);

  private final Allocator allocator;
  private final List<TargetSource> sources;
  private final Duration interval;
  /** Attaches costs to the combined targets before each {@code setTargets}; null for none. */
  private final UnaryOperator<List<Target>> costs;
  /** Serializes {@code setTargets} calls; never held across I/O. */
  private final Object setLock = new Object();
  /** Guards the loops only, so that close() never waits for a read. */
  private final Object lifecycleLock = new Object();

  /** Each source's last good list, null until its first good read. */
  private final AtomicReferenceArray<List<Target>> lastGood;

  /** Each source's failures, logged once per episode. */
  private final FeedLoop.Episode[] episodes;

  /** Held by whoever reads the source (its loop or {@link #refresh()}), across the read's wait. */
  private final ReentrantLock[] attempts;

  /** Whether the last {@code setTargets} threw: the episode logged once at its start. */
  @GuardedBy("setLock")
  private boolean setFailing;

  /** Whether a read of the source is in progress on a reader thread (set there, cleared there). */
  private final AtomicBoolean[] running;

  /** One thread per source at most: a source whose read has not ended is not read again. */
  private final ExecutorService readers;

  private final Duration readTimeout;

  /** How many episodes of {@code setTargets} failures began (each logged once), for tests. */
  private final AtomicInteger setFailureEpisodes = new AtomicInteger();

  @GuardedBy("lifecycleLock")
  private List<FeedLoop> loops;

  private volatile boolean ready;
  /** 1 where the source's last read succeeded. */
  private final AtomicIntegerArray up;
  /** Per source, for the operator's page: its last good read (epoch ms, 0 for none) and size. */
  private final AtomicLongArray lastReadMillis;
  private final AtomicIntegerArray lastCount;
  /** Per source: its last failure (null for none yet) and when (epoch ms). */
  private final AtomicReferenceArray<String> lastError;
  private final AtomicLongArray lastErrorMillis;

  private TargetFeed(Builder b) {
    this.allocator = b.allocator;
    this.sources = List.copyOf(b.sources);
    this.interval = b.interval;
    this.costs = b.costs;
    int n = sources.size();
    this.lastGood = new AtomicReferenceArray<>(n);
    this.episodes = new FeedLoop.Episode[n];
    this.attempts = new ReentrantLock[n];
    this.running = new AtomicBoolean[n];
    for (int i = 0; i < n; i++) {
      episodes[i] = new FeedLoop.Episode(LOG, "target source " + sources.get(i).describe());
      attempts[i] = new ReentrantLock();
      running[i] = new AtomicBoolean();
    }
    this.up = new AtomicIntegerArray(n);
    this.lastReadMillis = new AtomicLongArray(n);
    this.lastCount = new AtomicIntegerArray(n);
    this.lastError = new AtomicReferenceArray<>(n);
    this.lastErrorMillis = new AtomicLongArray(n);
    this.readTimeout = b.readTimeout;
    this.readers =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "apportion-source-read");
              t.setDaemon(true);
              return t;
            });
  }

  /** Starts a read of source {@code i} on a reader thread; null if its last read has not ended. */
  private Future<List<Target>> submit(int i) {
    if (running[i].get()) {
      return null;
    }
    TargetSource s = sources.get(i);
    running[i].set(true);
    try {
      return readers.submit(
          () -> {
            try {
              return s.read();
            } finally {
              running[i].set(false);
            }
          });
    } catch (RejectedExecutionException e) {
      running[i].set(false);
      throw e;
    }
  }

  /**
   * Waits for a read of source {@code i} until {@code deadline} and records its outcome.
   *
   * @return whether the source's last good list changed
   */
  private boolean finish(int i, Future<List<Target>> read, long deadline) throws InterruptedException {
    Throwable failure = null;
    List<Target> got = null;
    if (read == null) {
      failure = new IOException("its previous read has not ended (blocked in I/O)");
    } else {
      try {
        got = read.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (ExecutionException e) {
        failure = e.getCause() == null ? e : e.getCause();
      } catch (TimeoutException e) {
        read.cancel(true); // interrupts a read blocked in the HTTP client or a channel
        failure = new IOException("not read within " + readTimeout.toMillis() + " ms");
      } catch (InterruptedException e) {
        read.cancel(true);
        throw e;
      }
    }
    if (failure == null) {
      List<Target> before = lastGood.getAndSet(i, got);
      lastReadMillis.set(i, System.currentTimeMillis());
      lastCount.set(i, got.size());
      episodes[i].succeeded("is readable again");
      up.set(i, 1);
      return before != got;
    }
    List<Target> kept = lastGood.get(i);
    up.set(i, 0);
    lastError.set(i, FeedLoop.Episode.describe(failure));
    lastErrorMillis.set(i, System.currentTimeMillis());
    episodes[i].failed(
        failure, "keeping its last " + (kept == null ? 0 : kept.size()) + " targets until it recovers");
    return false;
  }

  /** One scheduled read of source {@code i}; gives the allocator the targets if they changed. */
  private void readOne(int i) throws InterruptedException {
    boolean changed;
    attempts[i].lockInterruptibly();
    try {
      changed = finish(i, submit(i), System.nanoTime() + readTimeout.toNanos());
    } finally {
      attempts[i].unlock();
    }
    if (changed) {
      try {
        reapply();
      } catch (RuntimeException | Error e) {
        // logged once per episode by setAll; the next read tries again
      }
    }
  }

  /**
   * A builder feeding {@code allocator}.
   *
   * @param allocator the allocator; not null
   * @return a new builder
   */
  public static Builder builder(Allocator allocator) {
    return new Builder(Objects.requireNonNull(allocator, "allocator"));
  }

  /**
   * Reads every source once and sets the allocator's targets if every source has been read at
   * least once. Blocks on I/O and on the allocator.
   *
   * @throws InterruptedException if interrupted while reading a source
   */
  public void refresh() throws InterruptedException {
    int locked = 0;
    try {
      for (; locked < sources.size(); locked++) {
        attempts[locked].lockInterruptibly();
      }
      long deadline = System.nanoTime() + readTimeout.toNanos();
      List<Future<List<Target>>> reads = new ArrayList<>(sources.size());
      for (int i = 0; i < sources.size(); i++) {
        reads.add(submit(i));
      }
      try {
        for (int i = 0; i < sources.size(); i++) {
          finish(i, reads.get(i), deadline);
        }
      } catch (InterruptedException e) {
        reads.forEach(r -> {
          if (r != null) {
            r.cancel(true);
          }
        });
        throw e;
      }
    } finally {
      for (int i = 0; i < locked; i++) {
        attempts[i].unlock();
      }
    }
    reapply();
  }

  /**
   * Gives the allocator the sources' last good targets again, with the costs as they are now,
   * without reading the sources: what a cost feed calls after each read. Does nothing until every
   * source has been read once. Blocks on the allocator's writers, never on I/O.
   */
  public void reapply() {
    synchronized (setLock) {
      setAll();
    }
  }

  @GuardedBy("setLock")
  private void setAll() {
    List<Target> all = new ArrayList<>();
    for (int i = 0; i < lastGood.length(); i++) {
      List<Target> l = lastGood.get(i);
      if (l == null) {
        return;
      }
      all.addAll(l);
    }
    if (costs != null) {
      all = costs.apply(all);
    }
    try {
      allocator.setTargets(all);
    } catch (RuntimeException | Error e) {
      if (!setFailing) {
        setFailing = true;
        setFailureEpisodes.incrementAndGet();
        LOG.warn(
            "setting the {} targets failed; retrying at every refresh, logged again only after"
                + " it recovers",
            all.size(),
            e);
      }
      throw e;
    }
    if (setFailing) {
      setFailing = false;
      LOG.info("setting the targets works again: {} targets", all.size());
    }
    if (!ready) {
      LOG.info("targets read from {} sources: {} targets", sources.size(), all.size());
    }
    ready = true;
  }

  /**
   * Whether every source has been read at least once and the allocator was given their targets.
   * Never blocks.
   *
   * @return true once the first full set was given
   */
  public boolean isReady() {
    return ready;
  }

  /**
   * Whether the {@code i}-th source's last read succeeded. Never blocks.
   *
   * @param i the source's index, in the order added
   * @return true if its last read succeeded
   */
  public boolean isUp(int i) {
    return up.get(i) == 1;
  }

  /**
   * One source as the operator's page shows it.
   *
   * @param source the source's description
   * @param up whether its last read succeeded
   * @param lastReadMillis when its last good read ended, epoch ms; 0 for never
   * @param targets how many targets that read gave (kept while it is down)
   * @param lastError its last failure, unescaped; null for none since the start
   * @param lastErrorMillis when that failure happened, epoch ms; 0 for none
   */
  record SourceStatus(
      String source, boolean up, long lastReadMillis, int targets, String lastError, long lastErrorMillis) {}

  /**
   * Every source's status, in the order added. Never blocks; each source's fields are read one
   * by one (a read ending meanwhile may show half of it).
   *
   * @return an immutable list
   */
  List<SourceStatus> sourceStatus() {
    List<SourceStatus> out = new ArrayList<>(sources.size());
    for (int i = 0; i < sources.size(); i++) {
      out.add(
          new SourceStatus(
              sources.get(i).describe(),
              isUp(i),
              lastReadMillis.get(i),
              lastCount.get(i),
              lastError.get(i),
              lastErrorMillis.get(i)));
    }
    return List.copyOf(out);
  }

  /**
   * How many episodes of failing {@code setTargets} calls began: each is logged once at WARN when
   * it begins (the first failure after a success) and once at INFO when it ends.
   *
   * @return the count since this feed was built
   */
  int setFailureEpisodes() {
    return setFailureEpisodes.get();
  }

  /**
   * How many episodes of source failures began, over all sources: each is logged once at WARN.
   *
   * @return the count since this feed was built
   */
  int failureEpisodes() {
    int n = 0;
    for (FeedLoop.Episode e : episodes) {
      n += e.count();
    }
    return n;
  }

  /**
   * The sources, in the order added.
   *
   * @return an immutable list
   */
  public List<TargetSource> sources() {
    return sources;
  }

  /**
   * Reads every source now and then every interval after its previous read ended, each on a daemon
   * thread of its own. Does not block.
   *
   * @return this feed
   */
  public TargetFeed start() {
    synchronized (lifecycleLock) {
      if (loops == null) {
        List<FeedLoop> l = new ArrayList<>();
        for (int i = 0; i < sources.size(); i++) {
          int index = i;
          l.add(
              new FeedLoop(
                  "apportion-target-feed",
                  interval,
                  LOG,
                  "reading target source " + sources.get(i).describe(),
                  () -> readOne(index)));
        }
        loops = List.copyOf(l);
        loops.forEach(FeedLoop::start);
      }
    }
    return this;
  }

  /** Stops reading; interrupts the reads in progress. Does not wait for them. */
  @Override
  public void close() {
    List<FeedLoop> l;
    synchronized (lifecycleLock) {
      l = loops;
      loops = null;
    }
    if (l != null) {
      l.forEach(FeedLoop::close);
    }
    readers.shutdownNow();
  }

  /** Configures a {@link TargetFeed}. Not thread-safe. */
  public static final class Builder {
    private final Allocator allocator;
    private final List<TargetSource> sources = new ArrayList<>();
    private Duration interval = Duration.ofSeconds(30);
    private Duration readTimeout = Duration.ofSeconds(30);
    private UnaryOperator<List<Target>> costs;

    private Builder(Allocator allocator) {
      this.allocator = allocator;
    }

    /**
     * Adds a source; targets are concatenated in the order sources are added.
     *
     * @param source the source; not null
     * @return this builder
     */
    public Builder source(TargetSource source) {
      sources.add(Objects.requireNonNull(source, "source"));
      return this;
    }

    /**
     * Attaches costs to the combined targets before every {@code setTargets} (a cost feed's
     * {@code attach}). Default none: every target keeps the cost its source gave it.
     *
     * @param costs returns the targets, in the same order, with their costs; must not block on I/O
     * @return this builder
     */
    public Builder costs(UnaryOperator<List<Target>> costs) {
      this.costs = Objects.requireNonNull(costs, "costs");
      return this;
    }

    /**
     * How often the sources are read. Default 30 s.
     *
     * @param interval positive
     * @return this builder
     */
    public Builder interval(Duration interval) {
      if (interval.isNegative() || interval.isZero()) {
        throw new IllegalArgumentException("interval must be positive");
      }
      this.interval = interval;
      return this;
    }

    /**
     * How long a read of one source may take, its whole answer included; a source not read by
     * then is marked down (its read interrupted) and keeps its last good targets. Each source is
     * read on its own schedule, so one slow source delays no other. Default 30 s.
     *
     * @param timeout positive
     * @return this builder
     */
    public Builder readTimeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("readTimeout must be positive");
      }
      this.readTimeout = timeout;
      return this;
    }

    /**
     * A feed, not yet started.
     *
     * @return the feed
     * @throws IllegalStateException if no source was added
     */
    public TargetFeed build() {
      if (sources.isEmpty()) {
        throw new IllegalStateException("a target feed needs at least one source");
      }
      return new TargetFeed(this);
    }
  }
}
