package dev.apportion.allocation.kubernetes;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Collector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.FilterWatchListDeletable;
import io.fabric8.kubernetes.client.dsl.PodResource;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Discovers collector replicas by watching their pods in Kubernetes and feeds the current
 * {@link Collector} set to one or more consumers, typically an {@link Allocator} (see {@link
 * Builder#forAllocator}) and, in the decentralized mode, an ownership view's member list.
 *
 * <p>The source watches the pods of one namespace that match a label selector through a fabric8
 * informer. A pod is a collector named after the pod and placed on the pod's {@code spec.nodeName},
 * unless one of these rules excludes it (docs/kubernetes.md gives the reason for each):
 *
 * <ol>
 *   <li>a pod with no {@code spec.nodeName} (not yet scheduled) is not a collector; it becomes one
 *       when an update gives it a node;
 *   <li>a pod with a {@code metadata.deletionTimestamp} (terminating) is not a collector, whether
 *       it arrives that way in the initial list, an add or an update: it gives up its node at once
 *       instead of holding its targets for its termination grace period;
 *   <li>a pod in phase {@code Succeeded} or {@code Failed} is not a collector;
 *   <li>unless turned off ({@link Builder#readyFirst(boolean)}, or a zero grace period), a pod
 *       becomes a collector only once it has been Ready (its {@code Ready} condition seen
 *       {@code True}; a pod without a Ready condition, once its phase is past {@code Pending});
 *       after that the grace period below applies;
 *   <li>unless the not-ready grace period is zero, a pod whose {@code Ready} condition has not been
 *       {@code True} for longer than the grace period (counted from the condition's last
 *       transition), or that has not been {@code Running} for longer than the grace period since
 *       its start time, is not a collector. The grace period defaults to {@value
 *       #DEFAULT_NOT_READY_GRACE_PERIOD_SECONDS} seconds, like upstream's {@code
 *       collector_not_ready_grace_period}.
 * </ol>
 *
 * <h2>Delivery</h2>
 *
 * <ul>
 *   <li>Every consumer is called on one dedicated daemon thread owned by this source (named {@code
 *       apportion-k8s-collectors-<namespace>}), never concurrently and never from the caller's
 *       thread. Consumers are called in the order they were added, each with the same immutable
 *       list of collectors sorted by name.
 *   <li>A consumer is called only when the collector set differs from the last one delivered; the
 *       first delivery, right after the initial list, happens even when the set is empty.
 *   <li>Bursts of pod events are coalesced: a delivery starts at least one {@linkplain
 *       Builder#coalescingInterval coalescing interval} after the previous one ended, and after
 *       the last event of a burst the final set is delivered within one interval (plus the time a
 *       delivery already in progress takes to end). The set is read from the informer's cache when
 *       it is delivered, so no state is lost in between. A zero interval delivers every change as
 *       soon as the delivery thread gets to it.
 *   <li>If a consumer throws, the error is logged, the other consumers are still called, and the
 *       same set is delivered again to every consumer after {@code max(interval, 1 s)}.
 * </ul>
 *
 * <h2>Connection</h2>
 *
 * A lost watch is re-established by the informer (with exponential back-off; a watch that falls too
 * far behind is replaced by a fresh list). The source logs a WARN line when the watch has been down
 * for about three seconds, and an INFO line when it is back; a failed list or watch that the
 * informer reports is logged at WARN too; {@link #isWatching()} tells the same at any
 * time, for a readiness check.
 *
 * <h2>Thread-safety and lifecycle</h2>
 *
 * All public methods are thread-safe. {@link #start()} does not block; {@link #close()} blocks
 * briefly (at most a few seconds) until the delivery thread has ended. The source never closes the
 * {@link KubernetesClient} it was given: the caller owns it.
 *
 * @since 0.1.0
 */
public final class KubernetesCollectorSource implements AutoCloseable {

  /** The default not-ready grace period, in seconds: {@value}. */
  public static final long DEFAULT_NOT_READY_GRACE_PERIOD_SECONDS = 30;

  /** The default coalescing interval: one second. */
  public static final Duration DEFAULT_COALESCING_INTERVAL = Duration.ofSeconds(1);

  /**
   * The pod annotation that gives a collector its {@linkplain Collector#capacity() capacity}: a
   * number &gt; 0 ({@code "2"}, {@code "0.5"}). A pod without it (or with a value that is not such
   * a number) has capacity 1, or its memory request in GiB with {@link
   * Builder#capacityFromMemoryRequest(boolean)}.
   */
  public static final String CAPACITY_ANNOTATION = "apportion.dev/capacity";

  private static final Logger LOG = LoggerFactory.getLogger(KubernetesCollectorSource.class);

  /*
   * Structure. Three threading regimes, three classes:
   * - this class: the public API, the lifecycle (start/close under lifecycleLock) and the informer
   *   callbacks (Handler, on fabric8's event thread), which only ask the delivery for an update;
   * - CoalescingDelivery: the delivery thread, coalescing, the rules' evaluation, the consumers;
   * - WatchHealth: the lost/re-established watch log lines and the informer's failure handler.
   * Each of the other two states its threads and what guards its fields in its class comment.
   * "Closed" is the delivery's volatile flag, read by all three lock-free; only close() sets it,
   * under lifecycleLock, so start() and close() check it and act atomically.
   */

  private final KubernetesClient client;
  private final String namespace;
  private final Map<String, String> labels;
  private final String labelSelector;
  private final long watchCheckNanos;
  private final CoalescingDelivery delivery;

  private final Object lifecycleLock = new Object();

  /** Set once, by the first {@link #start()}; never changed after. */
  @GuardedBy("lifecycleLock")
  private SharedIndexInformer<Pod> informer;

  /** {@link #informer}, for lock-free reads; null before {@link #start()}. */
  private volatile SharedIndexInformer<Pod> runningInformer;

  private KubernetesCollectorSource(Builder b) {
    this.client = b.client;
    this.namespace = b.namespace;
    this.labels = b.labels;
    this.labelSelector = b.labelSelector;
    this.watchCheckNanos = b.watchCheckInterval.toNanos();
    this.delivery =
        new CoalescingDelivery(
            namespace,
            b.consumers,
            new CollectorRules(b.notReadyGracePeriod, b.readyFirst, b.capacityFromMemoryRequest),
            b.clock,
            b.coalescingInterval);
  }

  /**
   * A new builder.
   *
   * @return a builder with the defaults: coalescing interval {@link #DEFAULT_COALESCING_INTERVAL},
   *     not-ready grace period {@value #DEFAULT_NOT_READY_GRACE_PERIOD_SECONDS} s, the system UTC
   *     clock
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Starts watching. Does not block: it creates the informer, which lists the pods and opens the
   * watch in the background. Calling it again returns the same future; calling it after {@link
   * #close()} returns a future that has failed with a {@link CancellationException}.
   *
   * @return a future that completes once the initial pod list has been delivered to every consumer
   *     (the consumers have returned); it fails if the initial list is refused with 401 or 403 (the
   *     informer then stops: check the RBAC in docs/kubernetes.md) and is cancelled by {@link
   *     #close()}. Other failures of the initial list are logged and retried, and the future stays
   *     pending meanwhile: wait on it with a timeout.
   */
  public CompletableFuture<Void> start() {
    synchronized (lifecycleLock) {
      if (delivery.isClosed()) {
        return CompletableFuture.failedFuture(
            new CancellationException("the collector source is closed"));
      }
      if (informer != null) {
        return delivery.firstDelivery();
      }
      FilterWatchListDeletable<Pod, PodList, PodResource> pods =
          client.pods().inNamespace(namespace);
      pods = labels != null ? pods.withLabels(labels) : pods.withLabelSelector(labelSelector);
      SharedIndexInformer<Pod> created = pods.runnableInformer(0);
      informer = created;
      WatchHealth health = new WatchHealth(namespace, created, delivery);
      created.exceptionHandler(health::onInformerException);
      created.addEventHandler(new Handler());
      LOG.info(
          "Watching collector pods in namespace {} with selector {}", namespace, selectorText());
      runningInformer = created;
      created
          .start()
          .whenComplete(
              (v, t) -> {
                if (t != null) {
                  KubernetesClientException k = WatchHealth.kubernetesCause(t);
                  delivery.initialListFailed(k != null ? k : t);
                  return;
                }
                delivery.startDelivering(created);
              });
      if (watchCheckNanos > 0) {
        delivery.runPeriodically(health::check, watchCheckNanos);
      }
      return delivery.firstDelivery();
    }
  }

  /**
   * Whether the informer currently has an open watch on the collector pods. Never blocks;
   * thread-safe. False before {@link #start()}, while a lost watch is being re-established, and
   * after {@link #close()}.
   *
   * @return true while the watch is open
   */
  public boolean isWatching() {
    SharedIndexInformer<Pod> i = runningInformer;
    return i != null && !delivery.isClosed() && i.isWatching();
  }

  /**
   * The collector set last delivered to the consumers. Never blocks; thread-safe.
   *
   * @return the immutable list, sorted by name; empty before the first delivery
   */
  public List<Collector> current() {
    List<Collector> c = delivery.current();
    return c == null ? List.of() : c;
  }

  /**
   * Stops watching and ends the delivery thread. Idempotent and thread-safe. Stops the informer
   * (its watch is closed), cancels pending deliveries, and waits up to five seconds for a delivery
   * in progress to return, so that once this method returns no consumer is called any more (unless
   * a consumer blocks for longer than that, or {@code close()} is called from a consumer, in which
   * case the consumer in progress finishes after it returns). Does not close the {@link
   * KubernetesClient}.
   */
  @Override
  public void close() {
    SharedIndexInformer<Pod> toStop;
    synchronized (lifecycleLock) {
      if (delivery.isClosed()) {
        return;
      }
      delivery.markClosed();
      toStop = informer;
    }
    if (toStop != null) {
      try {
        toStop.close();
      } catch (RuntimeException e) {
        LOG.warn("Stopping the collector pod informer in namespace {} failed", namespace, e);
      }
    }
    delivery.shutDown();
    LOG.info("Stopped watching collector pods in namespace {}", namespace);
  }

  /** For tests: whether the informer has been stopped. */
  boolean informerStopped() {
    SharedIndexInformer<Pod> i = runningInformer;
    return i != null && i.stopped().toCompletableFuture().isDone();
  }

  private String selectorText() {
    return labels != null ? labels.toString() : "'" + labelSelector + "'";
  }

  /**
   * Informer callbacks: run on fabric8's event thread, never concurrently for one informer. They
   * only ask for a delivery, which reads the informer's cache itself (so no event is lost to
   * coalescing) and never blocks this thread.
   */
  private final class Handler implements ResourceEventHandler<Pod> {
    @Override
    public void onAdd(Pod pod) {
      delivery.requestUpdate();
    }

    @Override
    public void onUpdate(Pod oldPod, Pod newPod) {
      delivery.requestUpdate();
    }

    @Override
    public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {
      delivery.requestUpdate();
    }

    @Override
    public void onList(String resourceVersion, boolean complete) {
      delivery.requestUpdate();
    }
  }

  /**
   * Builds a {@link KubernetesCollectorSource}. Not thread-safe: use one builder from one thread.
   * No method blocks, and none but {@link #build()} has an effect outside the builder.
   * Required: {@link #client}, {@link #namespace}, a label selector ({@link #labelSelector(Map)} or
   * {@link #labelSelector(String)}) and at least one consumer ({@link #consumer} or {@link
   * #forAllocator}).
   *
   * @since 0.1.0
   */
  public static final class Builder {
    private KubernetesClient client;
    private String namespace;
    private Map<String, String> labels;
    private String labelSelector;
    private Duration coalescingInterval = DEFAULT_COALESCING_INTERVAL;
    private Duration notReadyGracePeriod = Duration.ofSeconds(DEFAULT_NOT_READY_GRACE_PERIOD_SECONDS);
    private Duration watchCheckInterval = Duration.ofSeconds(1);
    private Clock clock = Clock.systemUTC();
    private boolean readyFirst = true;
    private boolean capacityFromMemoryRequest;
    private final List<Consumer<? super List<Collector>>> consumers = new ArrayList<>();

    private Builder() {}

    /**
     * The client to watch with. The source uses it but never closes it.
     *
     * @param client the client; not null
     * @return this builder
     */
    public Builder client(KubernetesClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /**
     * The namespace of the collector pods.
     *
     * @param namespace the namespace; not null, not blank
     * @return this builder
     */
    public Builder namespace(String namespace) {
      Objects.requireNonNull(namespace, "namespace");
      if (namespace.isBlank()) {
        throw new IllegalArgumentException("namespace must not be blank");
      }
      this.namespace = namespace;
      return this;
    }

    /**
     * Selects the collector pods by labels that must all match. Replaces a selector set before.
     *
     * @param labels label names and values; not null, not empty
     * @return this builder
     */
    public Builder labelSelector(Map<String, String> labels) {
      Objects.requireNonNull(labels, "labels");
      if (labels.isEmpty()) {
        throw new IllegalArgumentException("the label selector must not be empty");
      }
      this.labels = Collections.unmodifiableMap(new LinkedHashMap<>(labels));
      this.labelSelector = null;
      return this;
    }

    /**
     * Selects the collector pods by a Kubernetes label selector expression, such as {@code
     * app.kubernetes.io/name=otel-collector,tier in (metrics)}. Replaces a selector set before.
     *
     * @param selector the expression; not null, not blank
     * @return this builder
     */
    public Builder labelSelector(String selector) {
      Objects.requireNonNull(selector, "selector");
      if (selector.isBlank()) {
        throw new IllegalArgumentException("the label selector must not be blank");
      }
      this.labelSelector = selector;
      this.labels = null;
      return this;
    }

    /**
     * The coalescing interval: at most one delivery per interval, and the final state of a burst
     * within one interval of its last event. Zero delivers each change as it comes.
     *
     * @param interval the interval; not null, not negative; default {@link
     *     #DEFAULT_COALESCING_INTERVAL}
     * @return this builder
     */
    public Builder coalescingInterval(Duration interval) {
      Objects.requireNonNull(interval, "interval");
      if (interval.isNegative()) {
        throw new IllegalArgumentException("the coalescing interval must not be negative");
      }
      this.coalescingInterval = interval;
      return this;
    }

    /**
     * How long a pod may be not Ready (or not Running since its start) before it stops being a
     * collector. Zero disables the readiness rules: every scheduled, non-terminating pod is then a
     * collector.
     *
     * @param gracePeriod the grace period; not null, not negative; default {@value
     *     #DEFAULT_NOT_READY_GRACE_PERIOD_SECONDS} s
     * @return this builder
     */
    public Builder notReadyGracePeriod(Duration gracePeriod) {
      Objects.requireNonNull(gracePeriod, "gracePeriod");
      if (gracePeriod.isNegative()) {
        throw new IllegalArgumentException("the grace period must not be negative");
      }
      this.notReadyGracePeriod = gracePeriod;
      return this;
    }

    /**
     * Whether a pod becomes a collector only once it has been Ready (on by default). With it, a
     * surge pod that is scheduled but not yet Ready does not take its node's targets: the old pod
     * keeps them until the new one is Ready, and then they move once; a node whose only pod is not
     * yet Ready is served by the allocator's fallback meanwhile. Once Ready, a pod stays a
     * collector through the not-Ready grace period. A zero grace period turns this rule off with
     * the other readiness rules. A pod that reports no Ready condition counts as Ready unless its
     * phase is {@code Pending}.
     *
     * @param readyFirst false to make every scheduled pod a collector at once (the behaviour
     *     before this rule)
     * @return this builder
     */
    public Builder readyFirst(boolean readyFirst) {
      this.readyFirst = readyFirst;
      return this;
    }

    /**
     * Whether a pod without the {@value KubernetesCollectorSource#CAPACITY_ANNOTATION} annotation gets its memory
     * request as its capacity: the sum of its containers' {@code resources.requests.memory} in GiB
     * (a pod requesting none: 1). Off by default: every pod without the annotation has capacity 1.
     *
     * @param fromMemoryRequest true to weigh pods by their memory request
     * @return this builder
     */
    public Builder capacityFromMemoryRequest(boolean fromMemoryRequest) {
      this.capacityFromMemoryRequest = fromMemoryRequest;
      return this;
    }

    /**
     * The clock the grace period is measured with (against the timestamps the API server writes).
     * For tests; the default is {@link Clock#systemUTC()}. While a grace period is running out, the
     * source re-reads this clock at least once a second.
     *
     * @param clock the clock; not null
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Adds a consumer of the collector set. May be called more than once: every consumer receives
     * every delivery, in the order added, on the source's delivery thread. A consumer should return
     * promptly; it may call {@link KubernetesCollectorSource#close()}.
     *
     * @param consumer receives the immutable collector list, sorted by name; not null
     * @return this builder
     */
    public Builder consumer(Consumer<? super List<Collector>> consumer) {
      consumers.add(Objects.requireNonNull(consumer, "consumer"));
      return this;
    }

    /**
     * Adds {@code allocator::setCollectors} as a consumer.
     *
     * @param allocator the allocator to keep fed; not null
     * @return this builder
     */
    public Builder forAllocator(Allocator allocator) {
      Objects.requireNonNull(allocator, "allocator");
      return consumer(allocator::setCollectors);
    }

    /** For tests: how often the watch's state is sampled for the lost/re-established log lines. */
    Builder watchCheckInterval(Duration interval) {
      this.watchCheckInterval = Objects.requireNonNull(interval);
      return this;
    }

    /**
     * Builds the source, not yet started: call {@link KubernetesCollectorSource#start()}. Starts
     * the source's delivery thread, which {@link KubernetesCollectorSource#close()} ends.
     *
     * @return the source
     * @throws IllegalStateException if the client, the namespace, the selector or every consumer
     *     is missing
     */
    public KubernetesCollectorSource build() {
      if (client == null) {
        throw new IllegalStateException("client is required");
      }
      if (namespace == null) {
        throw new IllegalStateException("namespace is required");
      }
      if (labels == null && labelSelector == null) {
        throw new IllegalStateException("a label selector is required");
      }
      if (consumers.isEmpty()) {
        throw new IllegalStateException("at least one consumer is required");
      }
      return new KubernetesCollectorSource(this);
    }
  }
}
