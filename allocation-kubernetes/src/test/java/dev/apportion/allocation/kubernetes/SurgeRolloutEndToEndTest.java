package dev.apportion.allocation.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A DaemonSet surge rollout driven through the mock API server, with readiness changes, into a
 * zone-aware {@code per-node} allocator fed by both {@link KubernetesCollectorSource} and
 * {@link KubernetesNodeZones}. Each replacement pod has the smaller name, so without the Ready-first
 * rule it would take its node the moment it is scheduled. Asserted as counts: each node's targets
 * move exactly once, and after every change every node's targets sit on a Ready collector of their
 * own zone.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class SurgeRolloutEndToEndTest {
  private static final String NS = "monitoring";
  private static final String JOB = "kubernetes-pods";
  private static final int NODES = 4;
  private static final int PER_NODE = 5;

  KubernetesMockServer server;
  KubernetesClient client;

  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    try {
      server.destroy();
    } catch (IllegalStateException e) {
      System.err.println("note: the mock API server stalled on shutdown: " + e.getMessage());
    }
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  static String node(int i) {
    return "node-" + i;
  }

  static String zone(int i) {
    return i < 2 || i == 5 ? "zone-a" : "zone-b";
  }

  /** What one rollout did, counted by a listener on the allocator after every change. */
  static final class Watch {
    final Set<String> ready = ConcurrentHashMap.newKeySet();
    final Map<String, String> zoneOfNode = new ConcurrentHashMap<>();
    final Map<Target, Integer> moves = new ConcurrentHashMap<>();
    final List<String> violations = new CopyOnWriteArrayList<>();
    int onJoinedNodesPod;

    void onChange(AllocationChange change) {
      for (Move m : change.moves()) {
        if (m.from().isPresent() && m.to().isPresent()) {
          moves.merge(m.target(), 1, Integer::sum);
        }
      }
      check(change.after());
    }

    /** Every target is assigned; a node's targets are on a Ready collector of the node's zone. */
    void check(Allocation a) {
      if (a.collectors().isEmpty()) {
        return; // before the first collector set: nothing can be placed yet
      }
      if (!a.unassigned().isEmpty()) {
        violations.add("unassigned: " + a.unassigned());
      }
      Map<String, String> nodeOfCollector = new HashMap<>();
      for (Collector c : a.collectors()) {
        nodeOfCollector.put(c.name(), c.node().orElse(null));
      }
      for (Target t : a.targets()) {
        String c = a.collectorOf(t).orElse(null);
        String node = t.node().orElse(null);
        if (c == null || node == null) {
          continue;
        }
        if (!ready.contains(c)) {
          violations.add(t + " on " + c + ", which is not Ready");
        }
        String cz = zoneOfNode.get(nodeOfCollector.get(c));
        if (!zoneOfNode.get(node).equals(cz)) {
          violations.add(t + " of " + zoneOfNode.get(node) + " on " + c + " in " + cz);
        }
      }
    }
  }

  /** A pod as the API server creates one: scheduled, phase Pending, not Ready. */
  private static void createNotReady(Pods pods, String name, String node) {
    pods.create(Pods.builder(NS, name, node)
        .withNewStatus()
        .withPhase("Pending")
        .addNewCondition()
        .withType("Ready")
        .withStatus("False")
        .withLastTransitionTime(Instant.now().toString())
        .endCondition()
        .endStatus()
        .build());
  }

  private Watch rollout(boolean readyFirst) throws Exception {
    Pods pods = new Pods(client, NS);
    Watch watch = new Watch();
    List<Target> targets = new ArrayList<>();
    // Node 4 joins during the rollout with a pod that is not Ready yet.
    for (int i = 0; i <= NODES; i++) {
      client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node(i))
          .addToLabels(KubernetesNodeZones.ZONE_LABEL, zone(i)).endMetadata().build()).create();
      watch.zoneOfNode.put(node(i), zone(i));
      for (int j = 0; j < PER_NODE; j++) {
        targets.add(Target.of(JOB, "10.0." + i + "." + j + ":9100",
            Map.of("__meta_kubernetes_pod_node_name", node(i))));
      }
    }
    for (int i = 0; i < NODES; i++) {
      pods.create("agent-z" + i, node(i));
      pods.setReady("agent-z" + i, true, Instant.now().minusSeconds(600));
      watch.ready.add("agent-z" + i);
    }
    Allocator allocator = Allocators.builder(Allocators.PER_NODE).listener(watch::onChange).build();
    allocator.setTargets(targets);
    Deliveries deliveries = new Deliveries();
    KubernetesNodeZones zones = KubernetesNodeZones.builder().client(client)
        .forAllocator(allocator).build();
    open.add(zones);
    KubernetesCollectorSource source = KubernetesCollectorSource.builder()
        .client(client)
        .namespace(NS)
        .labelSelector(Pods.SELECTOR)
        .coalescingInterval(Duration.ofMillis(50))
        .readyFirst(readyFirst)
        .forAllocator(allocator)
        .consumer(deliveries)
        .build();
    open.add(source);
    zones.start().get(10, TimeUnit.SECONDS);
    source.start().get(10, TimeUnit.SECONDS);
    TreeSet<String> expected = new TreeSet<>();
    for (int i = 0; i < NODES; i++) {
      expected.add("agent-z" + i + "@" + node(i));
    }
    deliveries.awaitSet(expected.toArray(new String[0]));
    // Node 4: its pod is scheduled but not Ready; its targets are served in its zone meanwhile.
    createNotReady(pods, "agent-a" + NODES, node(NODES));
    if (!readyFirst) {
      expected.add("agent-a" + NODES + "@" + node(NODES));
      deliveries.awaitSet(expected.toArray(new String[0]));
    }
    for (int i = 0; i < NODES; i++) {
      String fresh = "agent-a" + i;
      createNotReady(pods, fresh, node(i));
      if (readyFirst) {
        deliveries.assertNothingFor(Duration.ofMillis(300)); // the old pod keeps the node
      } else {
        expected.add(fresh + "@" + node(i));
        deliveries.awaitSet(expected.toArray(new String[0]));
      }
      watch.ready.add(fresh);
      pods.setReady(fresh, true, Instant.now());
      if (readyFirst) {
        expected.add(fresh + "@" + node(i));
        deliveries.awaitSet(expected.toArray(new String[0]));
      }
      watch.ready.remove("agent-z" + i);
      pods.delete("agent-z" + i);
      expected.remove("agent-z" + i + "@" + node(i));
      deliveries.awaitSet(expected.toArray(new String[0]));
    }
    watch.ready.add("agent-a" + NODES);
    pods.setReady("agent-a" + NODES, true, Instant.now());
    if (readyFirst) {
      expected.add("agent-a" + NODES + "@" + node(NODES));
      deliveries.awaitSet(expected.toArray(new String[0]));
    }
    watch.check(allocator.snapshot());
    watch.onJoinedNodesPod = allocator.targetsFor("agent-a" + NODES, JOB).size();
    return watch;
  }

  @Test
  void eachNodesTargetsMoveExactlyOnceAndNoNodeIsEverUnscraped() throws Exception {
    Watch w = rollout(true);
    assertEquals(List.of(), w.violations);
    int rolled = 0;
    for (Map.Entry<Target, Integer> e : w.moves.entrySet()) {
      if (!e.getKey().node().orElseThrow().equals(node(NODES))) {
        rolled++;
        assertEquals(1, e.getValue(), e.getKey() + " moved " + e.getValue() + " times");
      }
    }
    assertEquals(NODES * PER_NODE, rolled, "every rolled node's targets moved, each once");
    // The joining node's targets were served in their zone by the fallback (checked after every
    // change above; they may move within the zone as its collectors are replaced) and end on
    // their own pod.
    assertEquals(PER_NODE, w.onJoinedNodesPod);
  }

  @Test
  void withoutReadyFirstAPodThatIsNotReadyTakesItsNode() throws Exception {
    // The control: the same rollout without the rule shows what the test above would catch.
    Watch w = rollout(false);
    long notReady = w.violations.stream().filter(v -> v.contains("not Ready")).count();
    assertTrue(notReady >= NODES * PER_NODE, "violations: " + w.violations.size());
  }
}
