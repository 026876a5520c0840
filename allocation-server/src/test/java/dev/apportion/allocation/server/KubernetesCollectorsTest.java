package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Collectors from Kubernetes pods (allocation-kubernetes' source) wired into the service. */
@EnableKubernetesMockClient(crud = true, https = false)
class KubernetesCollectorsTest {
  KubernetesMockServer server;
  KubernetesClient client;
  @TempDir Path dir;

  private void pod(String name, String node) {
    client
        .pods()
        .inNamespace("monitoring")
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace("monitoring")
                .addToLabels("app", "agent")
                .endMetadata()
                .withNewSpec()
                .withNodeName(node)
                .addNewContainer()
                .withName("agent")
                .withImage("agent:1")
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  @Test
  void podsAreTheCollectorsAndPerNodeFollowsThem() throws Exception {
    Files.writeString(
        dir.resolve("t.yaml"),
        """
        - labels: {__meta_kubernetes_pod_node_name: node-a}
          targets: ['a1:1', 'a2:1']
        - labels: {__meta_kubernetes_pod_node_name: node-b}
          targets: ['b1:1']
        """);
    Path config = dir.resolve("c.yaml");
    Files.writeString(
        config,
        """
        listen: 127.0.0.1:0
        strategy: {name: per-node, fallback: ''}
        refreshInterval: 1h
        targets: [{fileSd: {job: j, files: [t.yaml]}}]
        collectors:
          kubernetes: {namespace: monitoring, labelSelector: app=agent, notReadyGracePeriod: 0s}
        """);
    pod("agent-a", "node-a");
    try (Service service = new Service(ServerConfig.read(config), client)) {
      service.start();
      String base = "http://127.0.0.1:" + service.port();
      await(service::isReady);
      assertEquals(Set.of("a1:1", "a2:1"), addresses(Http.get(base + "/targets?collector=agent-a").json()));
      assertFalse(service.allocator().snapshot().unassigned().isEmpty(), "node-b has no collector yet");
      pod("agent-b", "node-b");
      await(() -> service.allocator().snapshot().collectors().size() == 2);
      assertEquals(Set.of("b1:1"), addresses(Http.get(base + "/targets?collector=agent-b").json()));
      server.destroy(); // before the source closes its watch, as allocation-kubernetes' tests do
    }
  }

  private void node(String name, String zone) {
    client
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .addToLabels("topology.kubernetes.io/zone", zone)
                .endMetadata()
                .build())
        .create();
  }

  private Path config(String collectors) throws Exception {
    StringBuilder sd = new StringBuilder();
    for (String n : List.of("node-c", "node-d")) {
      sd.append("- labels: {__meta_kubernetes_pod_node_name: ").append(n).append("}\n  targets: [");
      for (int i = 0; i < 6; i++) {
        sd.append(i == 0 ? "" : ", ").append("'").append(n).append("-").append(i).append(":1'");
      }
      sd.append("]\n");
    }
    Files.writeString(dir.resolve("t.yaml"), sd);
    Path config = dir.resolve("c.yaml");
    Files.writeString(
        config,
        """
        listen: 127.0.0.1:0
        strategy: per-node
        refreshInterval: 1h
        targets: [{fileSd: {job: j, files: [t.yaml]}}]
        collectors:
          kubernetes: {namespace: monitoring, labelSelector: app=agent, %s}
        """
            .formatted(collectors));
    return config;
  }

  /** Whether every target on node-c (zone z2) is agent-b's and every one on node-d (z1) agent-a's. */
  private static boolean zonal(Service s) {
    var snap = s.allocator().snapshot();
    if (snap.targets().size() != 12) {
      return false;
    }
    for (var t : snap.targets()) {
      String owner = snap.collectorOf(t).orElse("");
      if (!owner.equals(t.address().startsWith("node-c") ? "agent-b" : "agent-a")) {
        return false;
      }
    }
    return true;
  }

  /**
   * kubernetes.nodeZones: per-node's zone-aware fallback learns the zones of nodes with no collector
   * from the Nodes, so node-c's targets stay in node-c's zone. Without it they spread.
   */
  @Test
  void nodeZonesKeepPerNodesFallbackInTheNodesZone() throws Exception {
    node("node-a", "z1");
    node("node-b", "z2");
    node("node-c", "z2");
    node("node-d", "z1");
    pod("agent-a", "node-a");
    pod("agent-b", "node-b");
    Path plain = Files.copy(config("notReadyGracePeriod: 0s"), dir.resolve("plain.yaml"));
    Path zoned = config("notReadyGracePeriod: 0s, nodeZones: true");
    try (Service without = new Service(ServerConfig.read(plain), client);
        Service with = new Service(ServerConfig.read(zoned), client)) {
      without.start();
      with.start();
      await(() -> with.isReady() && with.allocator().snapshot().collectors().size() == 2);
      await(() -> zonal(with));
      await(() -> without.isReady() && without.allocator().snapshot().collectors().size() == 2);
      assertFalse(zonal(without), "without node zones the fallback ignores zones");
      server.destroy();
    }
  }

  /** kubernetes.readyFirst: false makes a Running pod that was never Ready a collector at once. */
  @Test
  void readyFirstIsConfigurable() throws Exception {
    String now = java.time.Instant.now().toString();
    client
        .pods()
        .inNamespace("monitoring")
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName("agent-new")
                .withNamespace("monitoring")
                .addToLabels("app", "agent")
                .endMetadata()
                .withNewSpec()
                .withNodeName("node-c")
                .addNewContainer()
                .withName("agent")
                .withImage("agent:1")
                .endContainer()
                .endSpec()
                .withNewStatus()
                .withPhase("Running")
                .withStartTime(now)
                .addNewCondition()
                .withType("Ready")
                .withStatus("False")
                .withLastTransitionTime(now)
                .endCondition()
                .endStatus()
                .build())
        .create();
    Path first = Files.copy(config("notReadyGracePeriod: 5m"), dir.resolve("first.yaml"));
    Path once = config("notReadyGracePeriod: 5m, readyFirst: false");
    try (Service readyFirst = new Service(ServerConfig.read(first), client);
        Service atOnce = new Service(ServerConfig.read(once), client)) {
      readyFirst.start();
      atOnce.start();
      await(() -> atOnce.isReady() && atOnce.allocator().snapshot().collectors().size() == 1);
      await(readyFirst::isReady);
      assertTrue(readyFirst.allocator().snapshot().collectors().isEmpty(), "never Ready: not yet a collector");
      server.destroy();
    }
  }

  /**
   * A pod being deleted (a deletion timestamp) stops being a collector at once, but keeps being
   * served its targets until their new owner has fetched them and the hold has passed: what its
   * {@code preStop} hook waits for on {@code /drained}.
   */
  @Test
  void aTerminatingPodHandsItsTargetsOverBeforeItIsDrained() throws Exception {
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\",\"b:1\",\"c:1\",\"d:1\",\"e:1\",\"f:1\"]}]");
    Path config = dir.resolve("c.yaml");
    Files.writeString(
        config,
        """
        listen: 127.0.0.1:0
        strategy: consistent-hashing
        refreshInterval: 1h
        targets: [{fileSd: {job: j, files: [t.json]}}]
        collectors:
          kubernetes: {namespace: monitoring, labelSelector: app=agent, notReadyGracePeriod: 0s}
        handover: {hold: 1s}
        """);
    pod("agent-a", "node-a");
    pod("agent-b", "node-b");
    // a finalizer keeps the deleted pod, marked with a deletion timestamp, as a grace period does
    client
        .pods()
        .inNamespace("monitoring")
        .withName("agent-b")
        .edit(p -> new PodBuilder(p).editMetadata().addToFinalizers("example.com/keep").endMetadata().build());
    try (Service service = new Service(ServerConfig.read(config), client)) {
      service.start();
      String base = "http://127.0.0.1:" + service.port();
      await(() -> service.isReady() && service.allocator().snapshot().collectors().size() == 2);
      Set<String> bHad = addresses(Http.get(base + "/targets?collector=agent-b").json());
      Http.get(base + "/targets?collector=agent-a");
      assertFalse(bHad.isEmpty());

      client.pods().inNamespace("monitoring").withName("agent-b").delete();
      await(() -> service.allocator().snapshot().collectors().size() == 1);
      assertTrue(
          client.pods().inNamespace("monitoring").withName("agent-b").get().getMetadata().getDeletionTimestamp() != null,
          "the pod is still there, terminating");
      assertEquals(bHad, addresses(Http.get(base + "/targets?collector=agent-b").json()), "still served while it runs");
      assertEquals(503, Http.get(base + "/drained?collector=agent-b").status());
      assertEquals(6, addresses(Http.get(base + "/targets?collector=agent-a").json()).size(), "a has them at once");
      Thread.sleep(1100);
      Http.get(base + "/targets?collector=agent-b");
      assertEquals(200, Http.get(base + "/drained?collector=agent-b").status());
      assertTrue(addresses(Http.get(base + "/targets?collector=agent-b").json()).isEmpty());
      server.destroy();
    }
  }

  private static Set<String> addresses(JsonNode groups) {
    Set<String> out = new TreeSet<>();
    for (JsonNode g : groups) {
      g.get("targets").forEach(t -> out.add(t.asText()));
    }
    return out;
  }

  private static void await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("not within 20 s");
      }
      Thread.sleep(50);
    }
  }
}
