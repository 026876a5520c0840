package dev.apportion.allocation.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.PodResource;
import java.time.Instant;
import java.util.Map;

/** Creates and changes real Pod objects through the client, as Kubernetes would. */
final class Pods {
  static final String LABEL = "app.kubernetes.io/name";
  static final String VALUE = "collector";
  static final Map<String, String> SELECTOR = Map.of(LABEL, VALUE);

  private final KubernetesClient client;
  private final String namespace;

  Pods(KubernetesClient client, String namespace) {
    this.client = client;
    this.namespace = namespace;
  }

  /** A selected pod, on {@code node} (null: not scheduled), optionally with a finalizer. */
  static PodBuilder builder(String namespace, String name, String node) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .addToLabels(LABEL, VALUE)
        .endMetadata()
        .withNewSpec()
        .withNodeName(node)
        .addNewContainer()
        .withName("agent")
        .withImage("collector:1")
        .endContainer()
        .endSpec();
  }

  Pod create(String name, String node) {
    return create(builder(namespace, name, node).build());
  }

  Pod create(Pod pod) {
    return client.pods().inNamespace(namespace).resource(pod).create();
  }

  /** Creates a selected pod that carries a finalizer, so that a delete only marks it. */
  Pod createWithFinalizer(String name, String node) {
    return create(
        builder(namespace, name, node).editMetadata().addToFinalizers("test/hold").endMetadata().build());
  }

  PodResource pod(String name) {
    return client.pods().inNamespace(namespace).withName(name);
  }

  /** The scheduler binds the pod to a node. */
  void schedule(String name, String node) {
    pod(name).edit(p -> new PodBuilder(p).editSpec().withNodeName(node).endSpec().build());
  }

  /** A delete: with a finalizer the pod stays, marked with a deletionTimestamp. */
  void delete(String name) {
    pod(name).delete();
  }

  /** The finalizer's owner lets go: a marked pod then disappears. */
  void removeFinalizers(String name) {
    pod(name).edit(p -> new PodBuilder(p).editMetadata().withFinalizers().endMetadata().build());
  }

  /** Sets the Ready condition and phase through the status subresource. */
  void setReady(String name, boolean ready, Instant since) {
    pod(name)
        .editStatus(
            p ->
                new PodBuilder(p)
                    .withNewStatus()
                    .withPhase("Running")
                    .addNewCondition()
                    .withType("Ready")
                    .withStatus(ready ? "True" : "False")
                    .withLastTransitionTime(since.toString())
                    .endCondition()
                    .endStatus()
                    .build());
  }

  void setPhase(String name, String phase) {
    pod(name)
        .editStatus(p -> new PodBuilder(p).withNewStatus().withPhase(phase).endStatus().build());
  }
}
