package dev.apportion.allocation.kubernetes;

// example:start
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Target;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One DaemonSet collector replica choosing its own targets: per-node, with the fallback kept in
 * the target's zone (the default), collectors from the pods, node zones from the Nodes.
 */
public final class EmbeddedCollectorExample {
  private EmbeddedCollectorExample() {}

  /** In the cluster: POD_NAME comes from the downward API (fieldRef metadata.name). */
  public static void main(String[] args) throws Exception {
    try (KubernetesClient client = new KubernetesClientBuilder().build()) {
      List<Target> mine = run(client, "monitoring", System.getenv("POD_NAME"),
          EmbeddedCollectorExample::discover);
      System.out.println("scraping " + mine.size() + " targets");
    }
  }

  /** Starts, feeds, reads its own targets, closes: what a collector does on each cycle. */
  static List<Target> run(KubernetesClient client, String namespace, String self,
      Supplier<List<Target>> discovery) throws Exception {
    Allocator allocator = Allocators.builder(Allocators.PER_NODE).build();
    try (KubernetesNodeZones zones =
            KubernetesNodeZones.builder().client(client).forAllocator(allocator).build();
        KubernetesCollectorSource collectors =
            KubernetesCollectorSource.builder()
                .client(client)
                .namespace(namespace)
                .labelSelector(Map.of("app.kubernetes.io/name", "collector"))
                .forAllocator(allocator)
                .build()) {
      zones.start().get(60, TimeUnit.SECONDS);      // node -> zone has reached the allocator
      collectors.start().get(60, TimeUnit.SECONDS); // so has the first collector set
      allocator.setTargets(discovery.get());        // on every discovery refresh
      return allocator.targetsFor(self, "kubernetes-pods");
    }
  }

  /** Stands in for service discovery (Prometheus SD, a targets file...). */
  static List<Target> discover() {
    return List.of(Target.of("kubernetes-pods", "10.0.0.7:9100",
        Map.of("__meta_kubernetes_pod_node_name", "node-1")));
  }
}
// example:end
