package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.file.Files;
import java.nio.file.Path;
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
