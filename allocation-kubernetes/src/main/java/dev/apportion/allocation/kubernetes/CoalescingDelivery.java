package dev.apportion.allocation.kubernetes;

import dev.apportion.allocation.Collector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The delivery half of {@link KubernetesCollectorSource}: one daemon thread that turns "the pods
 * may have changed" into coalesced calls of the consumers.
 *
 * <p><b>What it does.</b> {@link #requestUpdate()} asks for a delivery. At most one run is pending
 * at a time; it is scheduled at once when the previous run ended at least one coalescing interval
 * ago, else one interval after that end. A run reads the informer's cache, applies the {@link
 * CollectorRules}, and, when the set differs from the last one delivered, calls every consumer in
 * order. A consumer that throws is logged, and the same set is delivered again to every consumer
 * after {@code max(interval, 1 s)}. While a not-ready grace period is running out, a re-evaluation
 * is scheduled for that moment (at least once a second, in case the clock jumps). Nothing is
 * delivered before {@link #startDelivering} (the initial list has completed) or after {@link
 * #markClosed()}.
 *
 * <p><b>Threads.</b> {@link #requestUpdate()}, {@link #current()}, {@link #isClosed()} and {@link
 * #isDelivering()} are called from any thread: fabric8's event thread (the informer callbacks), the
 * thread that completes the initial list, the delivery thread itself, callers of the source's
 * public methods. {@link #startDelivering}, {@link #initialListFailed}, {@link #markClosed()},
 * {@link #runPeriodically} and {@link #shutDown()} are called by the source's lifecycle ({@code
 * start()}, the initial list's completion, {@code close()}). Everything else runs on the delivery
 * thread, the single thread of {@code executor}: runs, retries, grace re-checks and the tasks
 * given to {@link #runPeriodically} (the source's {@link WatchHealth#check()}) never overlap.
 *
 * <p><b>What guards what.</b> No lock. The fields under "delivery thread only" are confined to that
 * thread. The fields other threads read are volatile; {@code updatePending} is an {@link
 * AtomicBoolean} whose compare-and-set lets any number of events, from any thread, schedule a
 * single run, and which the run clears before it reads the cache, so that an event arriving during
 * a run schedules another.
 *
 * <p><b>Why.</b> One thread is what gives consumers the guarantees the public API documents (never
 * concurrently, in the order added, never on the informer's or the caller's thread) and lets the
 * coalescing and grace state live without a lock. The cache is read when a run starts, not when an
 * event arrives, so coalescing never loses the final state of a burst. The interval counts from the
 * end of the previous run, so a slow consumer never brings the next delivery closer than one
 * interval.
 */
final class CoalescingDelivery {

  // The source's logger: the log lines keep the category they have always had.
  private static final Logger LOG = LoggerFactory.getLogger(KubernetesCollectorSource.class);

  /** Upper bound of the wait before a grace deadline is checked again (guards against clock jumps). */
  private static final long MAX_GRACE_RECHECK_NANOS = TimeUnit.SECONDS.toNanos(1);

  private static final long MIN_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final String namespace;
  private final List<Consumer<? super List<Collector>>> consumers;
  private final CollectorRules rules;
  private final Clock clock;
  private final long intervalNanos;
  private final ScheduledThreadPoolExecutor executor;
  private final Thread deliveryThread;
  private final CompletableFuture<Void> firstDelivery = new CompletableFuture<>();

  // Read from any thread.
  private volatile boolean closed;
  /** The informer whose cache is delivered; null until its initial list has completed. */
  private volatile SharedIndexInformer<Pod> informer;

  private volatile List<Collector> currentSnapshot;
  private final AtomicBoolean updatePending = new AtomicBoolean();
  private volatile long lastRunNanos;

  // Delivery thread only.
  private List<Collector> lastDelivered;
  private ScheduledFuture<?> graceRecheck;
  private Instant graceRecheckAt;

  /** Creates the delivery thread ({@code apportion-k8s-collectors-<namespace>}) and starts it. */
  CoalescingDelivery(
      String namespace,
      List<Consumer<? super List<Collector>>> consumers,
      CollectorRules rules,
      Clock clock,
      Duration coalescingInterval) {
    this.namespace = namespace;
    this.consumers = List.copyOf(consumers);
    this.rules = rules;
    this.clock = clock;
    this.intervalNanos = coalescingInterval.toNanos();
    String threadName = "apportion-k8s-collectors-" + namespace;
    Thread[] created = new Thread[1];
    this.executor =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, threadName);
              t.setDaemon(true);
              created[0] = t;
              return t;
            });
    executor.setRemoveOnCancelPolicy(true);
    executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    executor.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
    executor.prestartCoreThread();
    this.deliveryThread = created[0];
    this.lastRunNanos = System.nanoTime() - intervalNanos;
  }

  // ---------------------------------------------------------------------------------------------
  // Called by the source's lifecycle

  /**
   * Completes once the initial list has been delivered to every consumer; fails if the initial
   * list fails ({@link #initialListFailed}) or the source closes first.
   */
  CompletableFuture<Void> firstDelivery() {
    return firstDelivery;
  }

  /** The informer's initial list has completed: from now on its cache is delivered. */
  void startDelivering(SharedIndexInformer<Pod> synced) {
    informer = synced;
    requestUpdate();
  }

  /** The informer's initial list failed for good: the first delivery never comes. */
  void initialListFailed(Throwable cause) {
    firstDelivery.completeExceptionally(cause);
  }

  /**
   * Runs {@code task} on the delivery thread every {@code periodNanos}, first after one period,
   * until the source closes.
   */
  @SuppressWarnings("FutureReturnValueIgnored") // shutDown() ends the task; logFailure logs a throw
  void runPeriodically(Runnable task, long periodNanos) {
    try {
      executor.scheduleWithFixedDelay(
          logFailure(task), periodNanos, periodNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // closed concurrently
    }
  }

  /**
   * The source is closing: no run starts any more, and a run in progress calls no further
   * consumer. Called under the source's lifecycle lock, before the informer is stopped.
   */
  void markClosed() {
    closed = true;
  }

  /** Whether {@link #markClosed()} has been called. */
  boolean isClosed() {
    return closed;
  }

  /** Whether the initial list has completed (deliveries have begun). */
  boolean isDelivering() {
    return informer != null;
  }

  /**
   * Ends the delivery thread, after {@link #markClosed()}: drops pending tasks, cancels the first
   * delivery if it is still pending, and waits up to five seconds for a run in progress to return
   * (unless called from the delivery thread itself, that is, from a consumer).
   */
  void shutDown() {
    // shutdown(), not shutdownNow(): queued and delayed tasks are dropped (see the executor's
    // policies), but a consumer in progress is not interrupted.
    executor.shutdown();
    firstDelivery.completeExceptionally(new CancellationException("the collector source is closed"));
    if (Thread.currentThread() != deliveryThread) {
      try {
        if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
          LOG.warn("A collector consumer did not return within 5 s of close()");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Any thread

  /** The collector set last delivered to every consumer; null before the first delivery. */
  List<Collector> current() {
    return currentSnapshot;
  }

  /** Asks for a delivery: at once if none ended within the interval, else one interval after. */
  void requestUpdate() {
    if (closed || informer == null) {
      return;
    }
    if (updatePending.compareAndSet(false, true)) {
      long delay = Math.max(0, lastRunNanos + intervalNanos - System.nanoTime());
      if (!runLater(this::update, delay)) {
        updatePending.set(false); // closed
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Delivery thread

  private void update() {
    updatePending.set(false);
    try {
      evaluateAndDeliver();
    } finally {
      // The interval counts from the end of this run, so that a slow run or a slow consumer
      // never brings the next delivery closer than one interval.
      lastRunNanos = System.nanoTime();
    }
  }

  private void evaluateAndDeliver() {
    SharedIndexInformer<Pod> i = informer;
    if (closed || i == null) {
      return;
    }
    Instant now = clock.instant();
    CollectorRules.Result result = rules.evaluate(i.getStore().list(), now);
    scheduleGraceRecheck(result.nextDeadline(), now);
    List<Collector> next = result.collectors();
    if (next.equals(lastDelivered)) {
      return;
    }
    LOG.debug("Collectors in namespace {}: {}", namespace, next);
    boolean failed = false;
    for (Consumer<? super List<Collector>> consumer : consumers) {
      if (closed) {
        return;
      }
      try {
        consumer.accept(next);
      } catch (RuntimeException e) {
        failed = true;
        LOG.error(
            "A collector consumer failed on {} collectors from namespace {}; retrying",
            next.size(),
            namespace,
            e);
      }
    }
    if (failed) {
      runLater(this::requestUpdate, Math.max(intervalNanos, MIN_RETRY_NANOS));
      return;
    }
    lastDelivered = next;
    currentSnapshot = next;
    firstDelivery.complete(null);
  }

  /** Re-evaluates when the earliest grace period runs out. */
  private void scheduleGraceRecheck(Instant deadline, Instant now) {
    if (deadline == null || deadline.equals(graceRecheckAt)) {
      return;
    }
    if (graceRecheck != null) {
      graceRecheck.cancel(false);
    }
    graceRecheckAt = deadline;
    long delay = Math.max(0, Duration.between(now, deadline).toNanos());
    // Re-check at least once a second while a deadline is pending, so that a clock that jumps
    // forward is noticed promptly.
    delay = Math.min(delay, MAX_GRACE_RECHECK_NANOS);
    try {
      graceRecheck =
          executor.schedule(
              logFailure(
                  () -> {
                    graceRecheckAt = null;
                    requestUpdate();
                  }),
              delay,
              TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // closed
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Scheduling

  /**
   * Runs {@code task} once on the delivery thread after {@code delayNanos}.
   *
   * @return false if the executor refused it (the source is closed)
   */
  @SuppressWarnings("FutureReturnValueIgnored") // shutDown() cancels it; logFailure logs a throw
  private boolean runLater(Runnable task, long delayNanos) {
    try {
      executor.schedule(logFailure(task), delayNanos, TimeUnit.NANOSECONDS);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /**
   * {@code task}, logging what it throws before rethrowing it: the executor keeps a task's failure
   * in its future, which nobody reads.
   */
  private Runnable logFailure(Runnable task) {
    return () -> {
      try {
        task.run();
      } catch (RuntimeException | Error e) {
        LOG.error("Unexpected failure on the collector delivery thread for namespace {}", namespace, e);
        throw e;
      }
    };
  }
}
