package dev.apportion.allocation.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Without RBAC for nodes, KubernetesNodeZones' start() fails at once and nothing is delivered. */
@EnableKubernetesMockClient(https = false)
class NodeZonesForbiddenTest {

  KubernetesMockServer server;
  KubernetesClient client;

  @Test
  void forbiddenNodeListFailsTheStartFuture() throws Exception {
    Status forbidden = new StatusBuilder().withStatus("Failure").withReason("Forbidden")
        .withCode(403).withMessage("nodes is forbidden: User "
            + "\"system:serviceaccount:monitoring:collector\" cannot list resource \"nodes\"")
        .build();
    server.expect().get().withPath("/api/v1/nodes?resourceVersion=0")
        .andReturn(403, forbidden).always();
    List<Map<String, String>> delivered = new CopyOnWriteArrayList<>();
    try (KubernetesNodeZones zones =
        KubernetesNodeZones.builder().client(client).consumer(delivered::add).build()) {
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> zones.start().get(10, TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof KubernetesClientException, e.toString());
      assertEquals(403, ((KubernetesClientException) e.getCause()).getCode());
      assertTrue(delivered.isEmpty(), "" + delivered);
      assertEquals(Map.of(), zones.current());
      assertFalse(zones.isWatching());
    }
  }
}
