package dev.apportion.allocation.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The example in docs/kubernetes.md is {@link EmbeddedCollectorExample}, compiled with the tests,
 * and it runs end to end against the mock API server.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class EmbeddedCollectorExampleTest {
  KubernetesMockServer server;
  KubernetesClient client;

  private static String between(String text, String from, String to) {
    int a = text.indexOf(from);
    int b = text.indexOf(to, a);
    assertTrue(a >= 0 && b > a, "markers " + from + " .. " + to);
    return text.substring(a + from.length(), b).strip();
  }

  @Test
  void theDocumentationShowsTheCompiledExampleVerbatim() throws Exception {
    String source = Files.readString(
        Path.of("src/test/java/dev/apportion/allocation/kubernetes/EmbeddedCollectorExample.java"),
        StandardCharsets.UTF_8);
    String doc = Files.readString(Path.of("..", "docs", "kubernetes.md"), StandardCharsets.UTF_8);
    String example = between(source, "// example:start", "// example:end");
    String shown = between(doc, "<!-- example:start -->\n```java", "```\n<!-- example:end -->");
    assertEquals(example, shown, "docs/kubernetes.md must show EmbeddedCollectorExample as is");
  }

  @Test
  void theExampleRunsEndToEnd() throws Exception {
    Pods pods = new Pods(client, "monitoring");
    for (String[] n : new String[][] {{"node-1", "zone-a"}, {"node-2", "zone-a"},
        {"node-3", "zone-b"}, {"node-4", "zone-b"}}) {
      client.nodes().resource(new NodeBuilder().withNewMetadata().withName(n[0])
          .addToLabels(KubernetesNodeZones.ZONE_LABEL, n[1]).endMetadata().build()).create();
    }
    // node-2 and node-4 have no collector: node-2's targets stay in zone-a, on agent-1 (node-1),
    // node-4's in zone-b, on agent-3. Only the Nodes' zones tell (the pods carry none).
    pods.create("agent-1", "node-1");
    pods.setReady("agent-1", true, Instant.now());
    pods.create("agent-3", "node-3");
    pods.setReady("agent-3", true, Instant.now());
    List<Target> discovered = new ArrayList<>(EmbeddedCollectorExample.discover());
    List<String> expected = new ArrayList<>(List.of("10.0.0.7:9100"));
    for (int i = 0; i < 20; i++) {
      discovered.add(Target.of("kubernetes-pods", "10.0.2." + (10 + i) + ":9100",
          Map.of("__meta_kubernetes_pod_node_name", "node-2")));
      expected.add("10.0.2." + (10 + i) + ":9100");
      discovered.add(Target.of("kubernetes-pods", "10.0.4." + (10 + i) + ":9100",
          Map.of("__meta_kubernetes_pod_node_name", "node-4")));
    }
    discovered.add(Target.of("kubernetes-pods", "10.0.3.5:9100",
        Map.of("__meta_kubernetes_pod_node_name", "node-3")));
    expected.sort(null);

    // The control: the same sets with no zone known spread the 40 pool targets over both
    // collectors, so the assertion below can only pass if the zone map reached the allocator.
    Allocator blind = Allocators.builder(Allocators.PER_NODE).build();
    blind.setCollectors(List.of(Collector.of("agent-1", "node-1"), Collector.of("agent-3",
        "node-3")));
    blind.setTargets(discovered);
    List<String> withoutZones = blind.targetsFor("agent-1", "kubernetes-pods").stream()
        .map(Target::address).sorted().toList();
    assertNotEquals(expected, withoutZones);
    assertTrue(withoutZones.stream().anyMatch(a -> a.startsWith("10.0.4.")), "" + withoutZones);

    try {
      List<Target> mine =
          EmbeddedCollectorExample.run(client, "monitoring", "agent-1", () -> discovered);
      // Its own node's target and node-2's 20 (same zone, no collector); never node-3's or
      // node-4's (zone-b). One run per server: the mock server can stall once a client has
      // closed its watches.
      assertEquals(expected, mine.stream().map(Target::address).sorted().toList());
    } finally {
      try {
        server.destroy();
      } catch (IllegalStateException e) {
        System.err.println("note: the mock API server stalled on shutdown: " + e.getMessage());
      }
    }
  }
}
