package dev.apportion.allocation.kubernetes;

import dev.apportion.allocation.Allocator;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the cluster's Nodes and feeds their zones, as a node-name-to-zone map, to consumers:
 * typically {@link Allocator#setNodeZones} ({@link Builder#forAllocator}), so that an allocator
 * that partitions by zone (per-node's fallback by default) knows the zone of a node that has no
 * collector, and of a target whose labels name no zone.
 *
 * <p>A node's zone is its {@value #ZONE_LABEL} label, else the deprecated {@value
 * #LEGACY_ZONE_LABEL}; a node with neither is left out. Nodes are cluster-scoped: the service
 * account needs {@code get}, {@code list} and {@code watch} on {@code nodes} through a
 * ClusterRole (docs/kubernetes.md shows it).
 *
 * <h2>Delivery</h2>
 * Consumers run on one daemon thread owned by this object ({@code apportion-k8s-node-zones}), in
 * the order added, each with the same immutable map sorted by node name; only when the map
 * differs from the last one delivered (the first delivery, right after the initial list, always
 * happens). Events that arrive while a delivery is pending are folded into it: the map is read from
 * the informer's cache when it is delivered. A consumer that throws is logged; the others are still
 * called.
 *
 * <h2>Thread-safety and lifecycle</h2>
 * All public methods are thread-safe and none blocks except {@link #close()} (at most five seconds,
 * for a delivery in progress). The client is the caller's: it is never closed here.
 */
public final class KubernetesNodeZones implements AutoCloseable {
  /** The well-known zone label of a Node: {@value}. */
  public static final String ZONE_LABEL = "topology.kubernetes.io/zone";
  /** The zone label Kubernetes used before 1.17, read when the other is absent: {@value}. */
  public static final String LEGACY_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone";

  private static final Logger LOG = LoggerFactory.getLogger(KubernetesNodeZones.class);

  private final KubernetesClient client;
  private final List<Consumer<? super Map<String, String>>> consumers;
  private final ExecutorService delivery;
  private final AtomicBoolean pending = new AtomicBoolean();
  private final CompletableFuture<Void> firstDelivery = new CompletableFuture<>();
  private final Object lifecycleLock = new Object();

  private SharedIndexInformer<Node> informer; // guarded by lifecycleLock
  private volatile SharedIndexInformer<Node> running;
  private volatile boolean closed;
  /** The last map delivered; written and read on the delivery thread only. */
  private Map<String, String> delivered;
  private volatile Map<String, String> current = Map.of();

  private KubernetesNodeZones(Builder b) {
    this.client = b.client;
    this.consumers = List.copyOf(b.consumers);
    this.delivery = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "apportion-k8s-node-zones");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * A new builder.
   *
   * @return a builder; a client and at least one consumer are required
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Starts watching the Nodes. Does not block. Calling it again returns the same future; after
   * {@link #close()} it returns a future failed with a {@link CancellationException}.
   *
   * @return a future that completes once the initial node list has been delivered to every
   *     consumer; it fails if the informer cannot start (for example without the RBAC for nodes)
   */
  public CompletableFuture<Void> start() {
    synchronized (lifecycleLock) {
      if (closed) {
        return CompletableFuture.failedFuture(new CancellationException("node zones are closed"));
      }
      if (informer != null) {
        return firstDelivery;
      }
      SharedIndexInformer<Node> created = client.nodes().runnableInformer(0);
      informer = created;
      running = created;
      created.addEventHandler(new ResourceEventHandler<Node>() {
        @Override
        public void onAdd(Node node) {
          requestDelivery();
        }

        @Override
        public void onUpdate(Node oldNode, Node newNode) {
          requestDelivery();
        }

        @Override
        public void onDelete(Node node, boolean deletedFinalStateUnknown) {
          requestDelivery();
        }
      });
      LOG.info("Watching the zones of the cluster's nodes");
      created.start().whenComplete((v, t) -> {
        if (t != null) {
          LOG.error("Listing nodes failed: node zones are unknown. The service account needs get, "
              + "list and watch on nodes (a ClusterRole, see docs/kubernetes.md)", t);
          firstDelivery.completeExceptionally(t);
          return;
        }
        pending.set(true);
        submit(() -> {
          deliver();
          firstDelivery.complete(null);
        });
      });
      return firstDelivery;
    }
  }

  private void requestDelivery() {
    if (running != null && pending.compareAndSet(false, true)) {
      submit(this::deliver);
    }
  }

  private void submit(Runnable task) {
    if (!closed) {
      try {
        delivery.execute(task);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        // Closed meanwhile: nothing more is delivered.
      }
    }
  }

  /** Reads the informer's cache and hands a changed map to every consumer; delivery thread. */
  private void deliver() {
    pending.set(false);
    SharedIndexInformer<Node> i = running;
    if (closed || i == null) {
      return;
    }
    Map<String, String> next = zones(i.getStore().list());
    if (next.equals(delivered)) {
      return;
    }
    delivered = next;
    current = next;
    for (Consumer<? super Map<String, String>> c : consumers) {
      try {
        c.accept(next);
      } catch (RuntimeException e) {
        LOG.error("A node-zone consumer failed; the others were still called", e);
      }
    }
  }

  /** Node name to zone, sorted by name, immutable. */
  static Map<String, String> zones(List<Node> nodes) {
    SortedMap<String, String> m = new TreeMap<>();
    for (Node n : nodes) {
      if (n.getMetadata() == null || n.getMetadata().getName() == null) {
        continue;
      }
      Map<String, String> labels = n.getMetadata().getLabels();
      String zone = labels == null ? null : labels.get(ZONE_LABEL);
      if ((zone == null || zone.isBlank()) && labels != null) {
        zone = labels.get(LEGACY_ZONE_LABEL);
      }
      if (zone != null && !zone.isBlank()) {
        m.put(n.getMetadata().getName(), zone);
      }
    }
    return Collections.unmodifiableSortedMap(m);
  }

  /**
   * The map last delivered. Never blocks.
   *
   * @return node name to zone, sorted by name, immutable; empty before the first delivery
   */
  public Map<String, String> current() {
    return current;
  }

  /**
   * Whether the informer has an open watch on the Nodes. Never blocks.
   *
   * @return true while watching
   */
  public boolean isWatching() {
    SharedIndexInformer<Node> i = running;
    return i != null && !closed && i.isWatching();
  }

  /**
   * Stops watching and ends the delivery thread, waiting up to five seconds for a delivery in
   * progress. Idempotent; does not close the client.
   */
  @Override
  public void close() {
    SharedIndexInformer<Node> toStop;
    synchronized (lifecycleLock) {
      if (closed) {
        return;
      }
      closed = true;
      toStop = informer;
    }
    firstDelivery.cancel(false);
    if (toStop != null) {
      try {
        toStop.close();
      } catch (RuntimeException e) {
        LOG.warn("Stopping the node informer failed", e);
      }
    }
    delivery.shutdownNow();
    try {
      if (!delivery.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("A node-zone delivery did not end within 5 s of close()");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Builds a {@link KubernetesNodeZones}. Not thread-safe; nothing but {@link #build()} has an
   * effect outside the builder.
   */
  public static final class Builder {
    private KubernetesClient client;
    private final List<Consumer<? super Map<String, String>>> consumers = new ArrayList<>();

    private Builder() {}

    /**
     * The client to watch with; used, never closed.
     *
     * @param client the client; not null
     * @return this builder
     */
    public Builder client(KubernetesClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /**
     * Adds a consumer of the node-to-zone map.
     *
     * @param consumer receives the immutable map, sorted by node name; not null
     * @return this builder
     */
    public Builder consumer(Consumer<? super Map<String, String>> consumer) {
      consumers.add(Objects.requireNonNull(consumer, "consumer"));
      return this;
    }

    /**
     * Adds {@code allocator::setNodeZones} as a consumer.
     *
     * @param allocator the allocator to keep fed; not null
     * @return this builder
     */
    public Builder forAllocator(Allocator allocator) {
      Objects.requireNonNull(allocator, "allocator");
      return consumer(allocator::setNodeZones);
    }

    /**
     * Builds it, not yet started; starts its delivery thread, which {@link #close()} ends.
     *
     * @return the node zones
     * @throws IllegalStateException if the client or every consumer is missing
     */
    public KubernetesNodeZones build() {
      if (client == null) {
        throw new IllegalStateException("client is required");
      }
      if (consumers.isEmpty()) {
        throw new IllegalStateException("at least one consumer is required");
      }
      return new KubernetesNodeZones(this);
    }
  }
}
