package dev.apportion.allocation.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link KubernetesNodeZones} against the mock API server: what it reads, and when it tells. */
@EnableKubernetesMockClient(crud = true, https = false)
class KubernetesNodeZonesTest {
  KubernetesMockServer server;
  KubernetesClient client;

  /** Every map delivered, in order. */
  private final LinkedBlockingQueue<Map<String, String>> delivered = new LinkedBlockingQueue<>();

  private Map<String, String> next() throws InterruptedException {
    Map<String, String> m = delivered.poll(10, TimeUnit.SECONDS);
    assertNotNull(m, "no delivery within 10 s");
    return m;
  }

  private void node(String name, Map<String, String> labels) {
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name)
        .addToLabels(labels).endMetadata().build()).create();
  }

  private KubernetesNodeZones zones() {
    return KubernetesNodeZones.builder().client(client).consumer(delivered::add).build();
  }

  @Test
  void readsTheZoneLabelThenTheLegacyOneAndLeavesOutNodesWithNeither() throws Exception {
    node("n-new", Map.of(KubernetesNodeZones.ZONE_LABEL, "zone-a"));
    node("n-legacy", Map.of(KubernetesNodeZones.LEGACY_ZONE_LABEL, "zone-b"));
    node("n-both", Map.of(KubernetesNodeZones.ZONE_LABEL, "zone-c",
        KubernetesNodeZones.LEGACY_ZONE_LABEL, "zone-old"));
    node("n-blank", Map.of(KubernetesNodeZones.ZONE_LABEL, " ",
        KubernetesNodeZones.LEGACY_ZONE_LABEL, "zone-d"));
    node("n-none", Map.of("kubernetes.io/os", "linux"));
    try (KubernetesNodeZones zones = zones()) {
      zones.start().get(10, TimeUnit.SECONDS);
      Map<String, String> expected = Map.of("n-new", "zone-a", "n-legacy", "zone-b",
          "n-both", "zone-c", "n-blank", "zone-d");
      assertEquals(expected, next());
      assertEquals(expected, zones.current());
      assertEquals(java.util.List.of("n-blank", "n-both", "n-legacy", "n-new"),
          java.util.List.copyOf(zones.current().keySet()), "sorted by node name");
    } finally {
      destroy();
    }
  }

  /** One run per server: the mock server can stall once a client has closed its watches. */
  private void destroy() {
    try {
      server.destroy();
    } catch (IllegalStateException e) {
      System.err.println("note: the mock API server stalled on shutdown: " + e.getMessage());
    }
  }

  @Test
  void aRelabelAndADeletionAreDeliveredAndAnUnrelatedChangeIsNot() throws Exception {
    node("n1", Map.of(KubernetesNodeZones.ZONE_LABEL, "zone-a"));
    node("n2", Map.of(KubernetesNodeZones.ZONE_LABEL, "zone-b"));
    try (KubernetesNodeZones zones = zones()) {
      zones.start().get(10, TimeUnit.SECONDS);
      assertEquals(Map.of("n1", "zone-a", "n2", "zone-b"), next());

      // A label that is not a zone changes nothing delivered; the relabel after it does, so the
      // next delivery must be the relabeled map.
      client.nodes().withName("n1").edit(n -> withLabel(n, "kubernetes.io/os", "linux"));
      client.nodes().withName("n2").edit(n -> withLabel(n, KubernetesNodeZones.ZONE_LABEL,
          "zone-c"));
      assertEquals(Map.of("n1", "zone-a", "n2", "zone-c"), next());

      client.nodes().withName("n1").delete();
      assertEquals(Map.of("n2", "zone-c"), next());
      assertEquals(Map.of("n2", "zone-c"), zones.current());

      node("n3", Map.of(KubernetesNodeZones.LEGACY_ZONE_LABEL, "zone-a"));
      assertEquals(Map.of("n2", "zone-c", "n3", "zone-a"), next());
      assertTrue(delivered.isEmpty(), "one delivery per change: " + delivered);
    } finally {
      destroy();
    }
  }

  private static Node withLabel(Node n, String key, String value) {
    Map<String, String> labels = new HashMap<>(n.getMetadata().getLabels());
    labels.put(key, value);
    n.getMetadata().setLabels(labels);
    return n;
  }
}
