package dev.apportion.allocation.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Target;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The source wired to allocation-core's {@code per-node} strategy: during a surge rollout two pods
 * share a node, and the one with the smaller name holds the node's targets, whichever came first.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class PerNodeEndToEndTest {

  private static final String NS = "monitoring";
  private static final String JOB = "kubernetes-pods";

  KubernetesMockServer server;
  KubernetesClient client;

  private static Target targetOn(String node, String address) {
    return Target.of(JOB, address, Map.of("__meta_kubernetes_pod_node_name", node));
  }

  @Test
  void smallerPodNameHoldsTheNodesTargetsDuringASurgeRollout() throws Exception {
    Pods pods = new Pods(client, NS);
    Target onNode1 = targetOn("node-1", "10.0.1.7:9100");
    Target onNode2 = targetOn("node-2", "10.0.2.9:9100");
    Allocator allocator = Allocators.builder("per-node").build();
    allocator.setTargets(List.of(onNode1, onNode2));

    pods.createWithFinalizer("agent-x7k2p", "node-1");
    pods.createWithFinalizer("agent-q9d4m", "node-2");
    Deliveries deliveries = new Deliveries();
    try (KubernetesCollectorSource source =
        KubernetesCollectorSource.builder()
            .client(client)
            .namespace(NS)
            .labelSelector(Pods.SELECTOR)
            .coalescingInterval(Duration.ofMillis(50))
            .forAllocator(allocator)
            .consumer(deliveries) // after the allocator: when it sees a set, so has the allocator
            .build()) {
      source.start().get(10, TimeUnit.SECONDS);
      deliveries.awaitSet("agent-q9d4m@node-2", "agent-x7k2p@node-1");
      assertEquals(List.of(onNode1), allocator.targetsFor("agent-x7k2p", JOB));
      assertEquals(List.of(onNode2), allocator.targetsFor("agent-q9d4m", JOB));

      // node-1: the replacement has the smaller name; it arrives unscheduled, then is bound.
      pods.create("agent-b3n8w", null);
      pods.schedule("agent-b3n8w", "node-1");
      // node-2: the replacement has the larger name.
      pods.create("agent-z5c1r", "node-2");
      deliveries.awaitSet(
          "agent-b3n8w@node-1", "agent-q9d4m@node-2", "agent-x7k2p@node-1", "agent-z5c1r@node-2");
      assertEquals(List.of(onNode1), allocator.targetsFor("agent-b3n8w", JOB));
      assertEquals(List.of(), allocator.targetsFor("agent-x7k2p", JOB));
      assertEquals(List.of(onNode2), allocator.targetsFor("agent-q9d4m", JOB));
      assertEquals(List.of(), allocator.targetsFor("agent-z5c1r", JOB));

      // The old pods terminate: node-2's targets move to its replacement at once, while the old
      // pod still exists (it has a finalizer), instead of waiting for it to be gone.
      pods.delete("agent-x7k2p");
      pods.delete("agent-q9d4m");
      deliveries.awaitSet("agent-b3n8w@node-1", "agent-z5c1r@node-2");
      assertEquals(List.of(onNode1), allocator.targetsFor("agent-b3n8w", JOB));
      assertEquals(List.of(onNode2), allocator.targetsFor("agent-z5c1r", JOB));
      assertEquals(java.util.Set.of(), allocator.snapshot().unassigned());
      server.destroy(); // before the source closes its watch: see KubernetesCollectorSourceTest
    }
  }
}
