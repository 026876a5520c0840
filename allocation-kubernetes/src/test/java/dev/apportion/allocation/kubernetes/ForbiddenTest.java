package dev.apportion.allocation.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Without RBAC for pods, start() fails at once instead of retrying forever in silence. */
@EnableKubernetesMockClient(https = false)
class ForbiddenTest {

  KubernetesMockServer server;
  KubernetesClient client;

  @Test
  void forbiddenInitialListFailsTheStartFuture() throws Exception {
    Status forbidden =
        new StatusBuilder()
            .withStatus("Failure")
            .withReason("Forbidden")
            .withCode(403)
            .withMessage("pods is forbidden: User \"system:serviceaccount:monitoring:collector\" cannot list")
            .build();
    server
        .expect()
        .get()
        .withPath("/api/v1/namespaces/monitoring/pods?labelSelector=app%3Dcollector&resourceVersion=0")
        .andReturn(403, forbidden)
        .always();
    Deliveries deliveries = new Deliveries();
    try (KubernetesCollectorSource source =
        KubernetesCollectorSource.builder()
            .client(client)
            .namespace("monitoring")
            .labelSelector("app=collector")
            .consumer(deliveries)
            .build()) {
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> source.start().get(10, TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof KubernetesClientException, e.toString());
      assertEquals(403, ((KubernetesClientException) e.getCause()).getCode());
      assertTrue(deliveries.all().isEmpty());
    }
  }
}
