package dev.apportion.allocation.kubernetes;

import static dev.apportion.allocation.kubernetes.Deliveries.names;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The watcher rules against fabric8's mock API server in CRUD mode: real Pod objects are created,
 * updated and deleted through the client, and the test asserts the collector sets delivered.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class KubernetesCollectorSourceTest {

  private static final String NS = "monitoring";
  private static final Duration INTERVAL = Duration.ofMillis(50);
  private static final Duration QUIET = Duration.ofMillis(300);

  KubernetesMockServer server;
  KubernetesClient client;

  private Pods pods;
  private Deliveries deliveries;
  private final List<KubernetesCollectorSource> sources = new ArrayList<>();

  @BeforeEach
  void setUp() {
    pods = new Pods(client, NS);
    deliveries = new Deliveries();
  }

  /**
   * The server goes first. When a client closes a watch, the mock server's watch listener can
   * block its own event loop for up to a minute (its sender thread and its event loop wait on each
   * other), and the server then fails to shut down; a close that starts at the server does not hit
   * that. The extension's own shutdown afterwards is a no-op. The tests that close a source while
   * the server is up can still leave it stalled; they use the server no more, and that stall of
   * the mock is reported here, not failed on.
   */
  @AfterEach
  void tearDown() {
    try {
      server.destroy();
    } catch (IllegalStateException e) {
      System.err.println("note: the mock API server stalled on shutdown: " + e.getMessage());
    }
    sources.forEach(KubernetesCollectorSource::close);
  }

  /** Starts a source; {@code deliveries} is its last consumer, so earlier ones have returned. */
  private KubernetesCollectorSource start(UnaryOperator<KubernetesCollectorSource.Builder> custom)
      throws Exception {
    KubernetesCollectorSource source =
        custom
            .apply(
                KubernetesCollectorSource.builder()
                    .client(client)
                    .namespace(NS)
                    .labelSelector(Pods.SELECTOR)
                    .coalescingInterval(INTERVAL))
            .consumer(deliveries)
            .build();
    sources.add(source);
    source.start().get(10, TimeUnit.SECONDS);
    return source;
  }

  private KubernetesCollectorSource start() throws Exception {
    return start(b -> b);
  }

  // --- the initial list ------------------------------------------------------------------------

  @Test
  void initialListDeliversScheduledSelectedPodsSortedByName() throws Exception {
    pods.create("collector-b", "node-2");
    pods.create("collector-a", "node-1");
    pods.create("collector-pending", null); // not scheduled yet
    pods.create(Pods.builder(NS, "other", "node-1").editMetadata().withLabels(Map.of("app", "x")).endMetadata().build());
    new Pods(client, "elsewhere").create("collector-z", "node-1"); // another namespace

    KubernetesCollectorSource source = start();

    Deliveries.Delivery first = deliveries.next();
    assertEquals(List.of("collector-a@node-1", "collector-b@node-2"), names(first.collectors));
    assertEquals(first.collectors, source.current());
    assertThrows(UnsupportedOperationException.class, () -> first.collectors.add(Collector.of("x")));
    assertTrue(source.isWatching());
  }

  @Test
  void firstDeliveryHappensEvenWhenThereIsNoCollector() throws Exception {
    start();
    assertEquals(List.of(), deliveries.next().collectors);
  }

  // --- rule: a pod not yet scheduled -----------------------------------------------------------

  @Test
  void podBecomesCollectorWhenAnUpdateGivesItANode() throws Exception {
    pods.create("collector-a", "node-1");
    start();
    deliveries.awaitSet("collector-a@node-1");

    pods.create("collector-b", null); // added before it is scheduled
    deliveries.assertNothingFor(QUIET); // an unscheduled pod changes nothing

    pods.schedule("collector-b", "node-2"); // the Modified event that the PR fixed
    deliveries.awaitSet("collector-a@node-1", "collector-b@node-2");
  }

  @Test
  void podUnscheduledOnTheInitialListIsPickedUpLater() throws Exception {
    pods.create("collector-a", null);
    start();
    deliveries.awaitSet();
    pods.schedule("collector-a", "node-1");
    deliveries.awaitSet("collector-a@node-1");
  }

  // --- rule: a pod with a deletionTimestamp ----------------------------------------------------

  @Test
  void terminatingPodIsNotACollectorOnTheInitialList() throws Exception {
    pods.create("collector-a", "node-1");
    pods.createWithFinalizer("collector-old", "node-2");
    pods.delete("collector-old"); // marked, still there
    assertNotNull(pods.pod("collector-old").get().getMetadata().getDeletionTimestamp());

    start();
    deliveries.awaitSet("collector-a@node-1");
  }

  @Test
  void podMarkedForDeletionGivesUpItsNodeAtOnceThenItsDeletionChangesNothing() throws Exception {
    pods.create("collector-a", "node-1");
    pods.createWithFinalizer("collector-b", "node-2");
    KubernetesCollectorSource source = start();
    deliveries.awaitSet("collector-a@node-1", "collector-b@node-2");

    pods.delete("collector-b"); // Modified: deletionTimestamp set, the pod still exists
    deliveries.awaitSet("collector-a@node-1");
    Pod marked = pods.pod("collector-b").get();
    assertNotNull(marked, "the terminating pod still exists: it was released before it was gone");
    assertNotNull(marked.getMetadata().getDeletionTimestamp());

    pods.removeFinalizers("collector-b"); // Deleted
    deliveries.assertNothingFor(QUIET); // the set did not change, so nothing is delivered
    assertEquals(List.of("collector-a@node-1"), names(source.current()));
  }

  @Test
  void podThatArrivesAlreadyTerminatingIsNotACollector() throws Exception {
    pods.create("collector-a", "node-1");
    // Two pods outside the selector; one is marked for deletion, then both start matching it,
    // so that the informer sees them arrive (an add), one with a deletionTimestamp.
    pods.create(Pods.builder(NS, "collector-t", "node-2").editMetadata().withLabels(Map.of("app", "x")).addToFinalizers("test/hold").endMetadata().build());
    pods.delete("collector-t");
    pods.create(Pods.builder(NS, "collector-u", "node-3").editMetadata().withLabels(Map.of("app", "x")).endMetadata().build());
    start();
    deliveries.awaitSet("collector-a@node-1");

    relabel("collector-t");
    relabel("collector-u");
    deliveries.awaitSet("collector-a@node-1", "collector-u@node-3");
    for (Deliveries.Delivery d : deliveries.all()) {
      assertFalse(names(d.collectors).contains("collector-t@node-2"), "delivered: " + d);
    }
  }

  private void relabel(String name) {
    pods.pod(name)
        .edit(
            p ->
                new io.fabric8.kubernetes.api.model.PodBuilder(p)
                    .editMetadata()
                    .addToLabels(Pods.LABEL, Pods.VALUE)
                    .endMetadata()
                    .build());
  }

  // --- surge rollout: two pods on one node -----------------------------------------------------

  @Test
  void surgeRolloutDeliversBothPodsOfOneNodeSortedByName() throws Exception {
    pods.createWithFinalizer("agent-x7k2p", "node-1"); // the old DaemonSet pod
    pods.create("agent-q9d4m", "node-2");
    start();
    deliveries.awaitSet("agent-q9d4m@node-2", "agent-x7k2p@node-1");

    // maxSurge: the replacement is created first, unscheduled, then bound to the same node.
    pods.create("agent-b3n8w", null);
    pods.schedule("agent-b3n8w", "node-1");
    Deliveries.Delivery both =
        deliveries.awaitSet("agent-b3n8w@node-1", "agent-q9d4m@node-2", "agent-x7k2p@node-1");
    // Both are on node-1; the per-node strategy keeps the smaller name (agent-b3n8w).
    assertEquals(
        List.of("agent-b3n8w", "agent-x7k2p"),
        both.collectors.stream()
            .filter(c -> c.node().orElse("").equals("node-1"))
            .map(Collector::name)
            .collect(Collectors.toList()));

    pods.delete("agent-x7k2p"); // the old pod terminates
    deliveries.awaitSet("agent-b3n8w@node-1", "agent-q9d4m@node-2");
    pods.removeFinalizers("agent-x7k2p");
    deliveries.assertNothingFor(QUIET);
  }

  // --- rule: terminal phases -------------------------------------------------------------------

  @Test
  void podThatSucceededOrFailedIsNotACollectorEvenWithoutGracePeriod() throws Exception {
    pods.create("collector-a", "node-1");
    pods.create("collector-b", "node-2");
    pods.create("collector-c", "node-3");
    pods.setPhase("collector-c", "Succeeded");
    start(b -> b.notReadyGracePeriod(Duration.ZERO));
    deliveries.awaitSet("collector-a@node-1", "collector-b@node-2");

    pods.setPhase("collector-b", "Failed"); // e.g. evicted
    deliveries.awaitSet("collector-a@node-1");
  }

  // --- rule: not ready for longer than the grace period ----------------------------------------

  private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

  @Test
  void podNotReadyWithinGraceStaysUntilTheGraceRunsOutAndReturnsWhenReady() throws Exception {
    MutableClock clock = new MutableClock(T0);
    pods.create("collector-a", "node-1");
    pods.setReady("collector-a", true, T0.minusSeconds(600));
    pods.create("collector-b", "node-2");
    pods.setReady("collector-b", true, T0.minusSeconds(600));
    start(b -> b.clock(clock).notReadyGracePeriod(Duration.ofSeconds(30)));
    deliveries.awaitSet("collector-a@node-1", "collector-b@node-2");
    // Once Ready, a collector stays one through the grace period.
    pods.setReady("collector-b", false, T0.minusSeconds(10));
    deliveries.assertNothingFor(Duration.ofMillis(500));

    clock.advance(Duration.ofSeconds(15)); // 25 s not ready: still within grace
    deliveries.assertNothingFor(Duration.ofMillis(1500));

    clock.advance(Duration.ofSeconds(10)); // 35 s not ready: no event, the source re-checks
    deliveries.awaitSet("collector-a@node-1");

    pods.setReady("collector-b", true, clock.instant());
    deliveries.awaitSet("collector-a@node-1", "collector-b@node-2");
  }

  @Test
  void podNotReadyBeyondGraceIsNotACollectorOnTheInitialList() throws Exception {
    MutableClock clock = new MutableClock(T0);
    pods.create("collector-a", "node-1");
    pods.create("collector-b", "node-2");
    pods.setReady("collector-b", false, T0.minusSeconds(31));
    start(b -> b.clock(clock));
    // The default grace period is 30 s.
    deliveries.awaitSet("collector-a@node-1");
  }

  @Test
  void podNotRunningPastGraceSinceItsStartIsNotACollector() throws Exception {
    MutableClock clock = new MutableClock(T0);
    pods.create("collector-a", "node-1");
    pods.create("collector-b", "node-2");
    pods.pod("collector-b")
        .editStatus(
            p ->
                new io.fabric8.kubernetes.api.model.PodBuilder(p)
                    .withNewStatus()
                    .withPhase("Pending")
                    .withStartTime(T0.minusSeconds(45).toString())
                    .endStatus()
                    .build());
    start(b -> b.clock(clock));
    deliveries.awaitSet("collector-a@node-1");
  }

  @Test
  void aPodBecomesACollectorOnlyOnceItHasBeenReady() throws Exception {
    MutableClock clock = new MutableClock(T0);
    pods.create("collector-a", "node-1");
    pods.setReady("collector-a", true, T0.minusSeconds(600));
    pods.create("collector-b", "node-2");
    pods.setReady("collector-b", false, T0.minusSeconds(1)); // started, not Ready yet
    start(b -> b.clock(clock));
    deliveries.awaitSet("collector-a@node-1");
    deliveries.assertNothingFor(Duration.ofMillis(500));
    pods.setReady("collector-b", true, T0);
    deliveries.awaitSet("collector-a@node-1", "collector-b@node-2");
  }

  @Test
  void readyFirstCanBeTurnedOff() throws Exception {
    MutableClock clock = new MutableClock(T0);
    pods.create("collector-b", "node-2");
    pods.setReady("collector-b", false, T0.minusSeconds(1));
    start(b -> b.clock(clock).readyFirst(false));
    deliveries.awaitSet("collector-b@node-2");
  }

  @Test
  void zeroGracePeriodDisablesTheReadinessRule() throws Exception {
    MutableClock clock = new MutableClock(T0);
    pods.create("collector-b", "node-2");
    pods.setReady("collector-b", false, T0.minusSeconds(3600));
    start(b -> b.clock(clock).notReadyGracePeriod(Duration.ZERO));
    deliveries.awaitSet("collector-b@node-2");
  }

  // --- coalescing ------------------------------------------------------------------------------

  @Test
  void burstIsCoalescedToAtMostOneUpdatePerIntervalAndTheFinalStateArrives() throws Exception {
    Duration interval = Duration.ofMillis(400);
    start(b -> b.coalescingInterval(interval));
    deliveries.awaitSet();

    int n = 30;
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String name = String.format("collector-%02d", i);
      pods.create(name, "node-" + (i % 5));
      expected.add(name + "@node-" + (i % 5));
    }
    // The final state must arrive (awaitSet fails after its timeout otherwise). How soon is not
    // asserted: an upper bound on latency is a timing test, flaky on a loaded machine.
    deliveries.awaitSet(expected.toArray(new String[0]));

    List<Deliveries.Delivery> all = deliveries.all();
    for (int i = 1; i < all.size(); i++) {
      long gap = all.get(i).nanos - all.get(i - 1).nanos;
      assertTrue(
          gap >= interval.toNanos() - TimeUnit.MILLISECONDS.toNanos(5),
          "deliveries " + TimeUnit.NANOSECONDS.toMillis(gap) + " ms apart: " + all);
    }
    deliveries.assertNothingFor(interval.multipliedBy(2)); // no delivery without a change
  }

  @Test
  void zeroIntervalDeliversEachChange() throws Exception {
    start(b -> b.coalescingInterval(Duration.ZERO));
    deliveries.awaitSet();
    pods.create("collector-a", "node-1");
    deliveries.awaitSet("collector-a@node-1");
    pods.create("collector-b", "node-2");
    deliveries.awaitSet("collector-a@node-1", "collector-b@node-2");
    pods.pod("collector-a").delete();
    deliveries.awaitSet("collector-b@node-2");
  }

  // --- delivery thread, consumers --------------------------------------------------------------

  @Test
  void consumersRunOnOneNamedDaemonThreadNeverConcurrently() throws Exception {
    start(b -> b.coalescingInterval(Duration.ZERO));
    deliveries.awaitSet();
    for (int i = 0; i < 10; i++) {
      pods.create("collector-" + i, "node-" + i);
    }
    deliveries.awaitSet(
        "collector-0@node-0", "collector-1@node-1", "collector-2@node-2", "collector-3@node-3",
        "collector-4@node-4", "collector-5@node-5", "collector-6@node-6", "collector-7@node-7",
        "collector-8@node-8", "collector-9@node-9");
    for (Deliveries.Delivery d : deliveries.all()) {
      assertEquals("apportion-k8s-collectors-" + NS, d.thread);
    }
    assertEquals(1, deliveries.maxConcurrent());
  }

  @Test
  void oneWatcherFeedsBothAnAllocatorAndAnOwnershipMemberList() throws Exception {
    RecordingAllocator allocator = new RecordingAllocator();
    List<List<String>> members = new CopyOnWriteArrayList<>();
    pods.create("collector-a", "node-1");
    pods.create("collector-b", "node-2");
    start(
        b ->
            b.forAllocator(allocator)
                .consumer(
                    cs -> members.add(cs.stream().map(Collector::name).collect(Collectors.toList()))));
    deliveries.awaitSet("collector-a@node-1", "collector-b@node-2");
    assertEquals(List.of(List.of(Collector.of("collector-a", "node-1"), Collector.of("collector-b", "node-2"))), allocator.calls);
    assertEquals(List.of(List.of("collector-a", "collector-b")), members);
  }

  @Test
  void failingConsumerDoesNotStopTheOthersAndTheSetIsDeliveredAgain() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    pods.create("collector-a", "node-1");
    start(
        b ->
            b.consumer(
                    cs -> {
                      if (calls.incrementAndGet() == 1) {
                        throw new IllegalStateException("boom (expected by the test)");
                      }
                    }));
    deliveries.awaitSet("collector-a@node-1");
    deliveries.awaitSet("collector-a@node-1");
    // The redelivery's delay (max(interval, 1 s)) is not asserted: a timing check would be flaky
    // on a loaded machine; the count is what matters.
    assertEquals(2, calls.get());
    deliveries.assertNothingFor(QUIET);
  }

  // --- lifecycle -------------------------------------------------------------------------------

  @Test
  void closeStopsTheInformerAndEndsTheDeliveryThread() throws Exception {
    String ns = "closing";
    Pods closing = new Pods(client, ns);
    closing.create("collector-a", "node-1");
    KubernetesCollectorSource source =
        KubernetesCollectorSource.builder()
            .client(client)
            .namespace(ns)
            .labelSelector(Pods.LABEL + "=" + Pods.VALUE) // the String form of the selector
            .coalescingInterval(Duration.ZERO)
            .consumer(deliveries)
            .build();
    sources.add(source);
    CompletableFuture<Void> started = source.start();
    assertSame(started, source.start());
    started.get(10, TimeUnit.SECONDS);
    deliveries.awaitSet("collector-a@node-1");
    assertTrue(deliveryThreadAlive(ns));
    assertTrue(source.isWatching());
    assertFalse(source.informerStopped());

    source.close();
    source.close(); // idempotent
    assertFalse(source.isWatching());
    assertTrue(source.informerStopped());
    assertFalse(deliveryThreadAlive(ns)); // close() returned after the thread ended
    assertThrows(CancellationException.class, () -> source.start().get(1, TimeUnit.SECONDS));
    assertEquals(List.of("collector-a@node-1"), names(source.current()));
    deliveries.assertNothingFor(QUIET);
  }

  @Test
  void closeBeforeTheInitialListCancelsTheStartFuture() throws Exception {
    KubernetesCollectorSource source =
        KubernetesCollectorSource.builder()
            .client(client)
            .namespace(NS)
            .labelSelector(Pods.SELECTOR)
            .consumer(deliveries)
            .build();
    source.close();
    assertThrows(CancellationException.class, () -> source.start().get(1, TimeUnit.SECONDS));
    assertFalse(deliveryThreadAlive(NS));
  }

  @Test
  void closeFromInsideAConsumerDoesNotDeadlock() throws Exception {
    CompletableFuture<KubernetesCollectorSource> self = new CompletableFuture<>();
    CompletableFuture<Void> closed = new CompletableFuture<>();
    KubernetesCollectorSource source =
        KubernetesCollectorSource.builder()
            .client(client)
            .namespace(NS)
            .labelSelector(Pods.SELECTOR)
            .consumer(
                cs -> {
                  self.join().close();
                  closed.complete(null);
                })
            .build();
    self.complete(source);
    CompletableFuture<Void> started = source.start();
    closed.get(10, TimeUnit.SECONDS);
    // The consumer closed the source before the first delivery completed: start() is cancelled.
    assertTrue(started.isCompletedExceptionally());
    assertFalse(source.isWatching());
  }

  private static boolean deliveryThreadAlive(String namespace) {
    String name = "apportion-k8s-collectors-" + namespace;
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals(name) && t.isAlive());
  }

  // --- builder ---------------------------------------------------------------------------------

  @Test
  void builderRejectsMissingOrInvalidSettings() {
    assertThrows(IllegalStateException.class, () -> KubernetesCollectorSource.builder().build());
    assertThrows(
        IllegalStateException.class,
        () -> KubernetesCollectorSource.builder().client(client).namespace(NS).consumer(cs -> {}).build());
    assertThrows(
        IllegalStateException.class,
        () -> KubernetesCollectorSource.builder().client(client).namespace(NS).labelSelector("a=b").build());
    assertThrows(IllegalArgumentException.class, () -> KubernetesCollectorSource.builder().namespace(" "));
    assertThrows(IllegalArgumentException.class, () -> KubernetesCollectorSource.builder().labelSelector(Map.of()));
    assertThrows(IllegalArgumentException.class, () -> KubernetesCollectorSource.builder().labelSelector(""));
    assertThrows(
        IllegalArgumentException.class,
        () -> KubernetesCollectorSource.builder().coalescingInterval(Duration.ofMillis(-1)));
    assertThrows(
        IllegalArgumentException.class,
        () -> KubernetesCollectorSource.builder().notReadyGracePeriod(Duration.ofMillis(-1)));
    assertThrows(NullPointerException.class, () -> KubernetesCollectorSource.builder().forAllocator(null));
  }

  /** Records setCollectors calls; everything else is unused here. */
  static final class RecordingAllocator implements Allocator {
    final List<List<Collector>> calls = new CopyOnWriteArrayList<>();

    @Override
    public void setTargets(Collection<Target> targets) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void setCollectors(Collection<Collector> collectors) {
      calls.add(List.copyOf(collectors));
    }

    @Override
    public List<Target> targetsFor(String collector, String job) {
      return List.of();
    }

    @Override
    public Allocation snapshot() {
      throw new UnsupportedOperationException();
    }

    @Override
    public String strategy() {
      return "recording";
    }
  }
}
