package dev.apportion.allocation.server;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;

/**
 * The one lifecycle of every background loop (each target source's reads, the cost query): an
 * attempt now and then every interval after the previous one ended, on a daemon thread of its
 * own. Any {@link Throwable} an attempt throws, an {@link OutOfMemoryError} or a {@link
 * StackOverflowError} included, is caught here: it would otherwise cancel the schedule for good
 * and freeze what the loop feeds, silently. It is logged once per episode (the first failure after
 * a success) and the recovery once, and the next attempt runs as scheduled. Attempts report their
 * own expected failures the same way with an {@link Episode}.
 *
 * <p>Thread-safe. {@link #start()} and {@link #close()} never block; close interrupts an attempt in
 * progress and does not wait for it.
 */
final class FeedLoop implements AutoCloseable {
  /** One attempt; may throw anything. */
  interface Attempt {
    void run() throws Exception;
  }

  private final String threadName;
  private final Duration interval;
  private final Attempt attempt;
  private final Episode episode;
  private final Object lock = new Object();
  private ScheduledExecutorService timer;

  /**
   * @param threadName the loop thread's name
   * @param interval the delay between the end of one attempt and the start of the next
   * @param log where an unexpected failure is logged
   * @param what what the loop does, for the log line ("the cost query")
   * @param attempt the attempt
   */
  FeedLoop(String threadName, Duration interval, Logger log, String what, Attempt attempt) {
    this.threadName = Objects.requireNonNull(threadName, "threadName");
    this.interval = Objects.requireNonNull(interval, "interval");
    this.attempt = Objects.requireNonNull(attempt, "attempt");
    this.episode = new Episode(log, what);
  }

  /** Starts the attempts (the first at once). Does nothing when started already. */
  void start() {
    synchronized (lock) {
      if (timer == null) {
        timer =
            Executors.newSingleThreadScheduledExecutor(
                r -> {
                  Thread t = new Thread(r, threadName);
                  t.setDaemon(true);
                  return t;
                });
        ScheduledFuture<?> unused =
            timer.scheduleWithFixedDelay(this::runOnce, 0, interval.toNanos(), TimeUnit.NANOSECONDS);
      }
    }
  }

  /** One attempt, never throwing: what the schedule runs. */
  void runOnce() {
    try {
      attempt.run();
      episode.succeeded("works again");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // closing
    } catch (Throwable e) {
      episode.failed(e, "the next attempt runs as scheduled");
    }
  }

  /** How many episodes of unexpected failures began. */
  int episodes() {
    return episode.count();
  }

  @Override
  public void close() {
    ScheduledExecutorService t;
    synchronized (lock) {
      t = timer;
      timer = null;
    }
    if (t != null) {
      t.shutdownNow();
    }
  }

  /**
   * A run of failures of one thing, logged once: WARN at the first failure after a success (with
   * the throwable's class and message, escaped and cut for one log line), INFO at the first
   * success after that, nothing in between. Thread-safe.
   */
  static final class Episode {
    private final Logger log;
    private final String what;
    private final AtomicInteger count = new AtomicInteger();
    private boolean failing;

    Episode(Logger log, String what) {
      this.log = log;
      this.what = what;
    }

    /**
     * Records a failure; logs it if it begins an episode.
     *
     * @param e what failed
     * @param then what happens now, for the log line
     * @return whether this failure began an episode
     */
    synchronized boolean failed(Throwable e, String then) {
      if (failing) {
        return false;
      }
      failing = true;
      count.incrementAndGet();
      log.warn("{} failed ({}); {}; logged again only after it recovers", what, describe(e), then);
      return true;
    }

    /** Records a success; logs the recovery if an episode was going on. */
    synchronized boolean succeeded(String message) {
      if (!failing) {
        return false;
      }
      failing = false;
      log.info("{} {}", what, message);
      return true;
    }

    synchronized boolean failing() {
      return failing;
    }

    int count() {
      return count.get();
    }

    /** The throwable's class (unless a plain IOException) and message, safe for one log line. */
    static String describe(Throwable t) {
      String m = t.getMessage();
      String s;
      if (t.getClass() == java.io.IOException.class && m != null) {
        s = m;
      } else {
        s = m == null ? t.getClass().getName() : t.getClass().getName() + ": " + m;
      }
      return LogSafe.text(s);
    }
  }
}
