package dev.apportion.allocation.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.apportion.allocation.Collector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A collector pod's capacity: the annotation, else optionally its memory request, else 1. */
class PodCapacityTest {
  private static Pod pod(String name, String annotation, String... memory) {
    var b = Pods.builder("ns", name, "n1");
    if (annotation != null) {
      b.editMetadata().addToAnnotations(KubernetesCollectorSource.CAPACITY_ANNOTATION, annotation).endMetadata();
    }
    var spec = b.editSpec().withContainers();
    for (int i = 0; i < memory.length; i++) {
      spec.addNewContainer()
          .withName("c" + i)
          .withResources(new ResourceRequirementsBuilder()
              .withRequests(memory[i] == null ? Map.of() : Map.of("memory", new Quantity(memory[i])))
              .build())
          .endContainer();
    }
    return spec.endSpec().build();
  }

  @Test
  void theAnnotationWinsThenTheMemoryRequestInGibThenOne() {
    assertEquals(2.5, PodCapacity.of(pod("a", "2.5", "4Gi"), true));
    assertEquals(6.0, PodCapacity.of(pod("b", null, "4Gi", "2048Mi"), true), "summed over containers");
    assertEquals(0.5, PodCapacity.of(pod("c", null, "512Mi", null), true));
    assertEquals(1.0, PodCapacity.of(pod("d", null, "4Gi"), false), "memory only when asked for");
    assertEquals(1.0, PodCapacity.of(pod("e", null, (String) null), true), "no request: 1");
    for (String bad : List.of("0", "-1", "lots", "NaN", "Infinity", "")) {
      assertEquals(1.0, PodCapacity.of(pod("f", bad), false), "'" + bad + "' is no capacity");
      assertEquals(3.0, PodCapacity.of(pod("g", bad, "3Gi"), true), "'" + bad + "' falls to memory");
    }
  }

  @Test
  void theRulesGiveCollectorsTheirCapacity() {
    List<Pod> pods = List.of(pod("a", "4"), pod("b", null, "2Gi"), pod("c", null));
    List<Collector> plain = new CollectorRules(Duration.ZERO, false, false).evaluate(pods, Instant.EPOCH).collectors();
    assertEquals(List.of(4.0, 1.0, 1.0), plain.stream().map(Collector::capacity).toList());
    List<Collector> memory = new CollectorRules(Duration.ZERO, false, true).evaluate(pods, Instant.EPOCH).collectors();
    assertEquals(List.of(4.0, 2.0, 1.0), memory.stream().map(Collector::capacity).toList());
  }
}
