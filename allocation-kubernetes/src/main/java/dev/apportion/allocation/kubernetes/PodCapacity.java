package dev.apportion.allocation.kubernetes;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import java.math.BigDecimal;
import java.util.Map;

/**
 * A collector pod's capacity ({@link dev.apportion.allocation.Collector#capacity()}): the
 * annotation {@value KubernetesCollectorSource#CAPACITY_ANNOTATION} when it holds a finite number
 * &gt; 0; else, when asked for, the pod's memory request (the sum over its containers) in GiB, so
 * that a 4Gi pod weighs four 1Gi pods; else 1. A pod whose annotation is not such a number gets
 * the same as one without it. Pure; thread-safe.
 */
final class PodCapacity {
  private static final BigDecimal GIB = BigDecimal.valueOf(1L << 30);

  private PodCapacity() {}

  /**
   * The capacity of {@code pod}.
   *
   * @param pod the pod
   * @param memoryRequest whether a pod without the annotation weighs its memory request
   * @return a finite number &gt; 0
   */
  static double of(Pod pod, boolean memoryRequest) {
    Double annotated = annotation(pod);
    if (annotated != null) {
      return annotated;
    }
    if (memoryRequest) {
      double gib = memoryRequestGib(pod);
      if (gib > 0 && Double.isFinite(gib)) {
        return gib;
      }
    }
    return 1.0;
  }

  /** The annotation's value when it is a finite number &gt; 0; null when absent or bad. */
  static Double annotation(Pod pod) {
    if (pod.getMetadata() == null) {
      return null;
    }
    Map<String, String> a = pod.getMetadata().getAnnotations();
    String v = a == null ? null : a.get(KubernetesCollectorSource.CAPACITY_ANNOTATION);
    if (v == null) {
      return null;
    }
    try {
      double d = Double.parseDouble(v.trim());
      return d > 0 && Double.isFinite(d) ? d : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** The sum of the containers' memory requests in GiB; 0 when none requests memory. */
  static double memoryRequestGib(Pod pod) {
    if (pod.getSpec() == null || pod.getSpec().getContainers() == null) {
      return 0;
    }
    BigDecimal bytes = BigDecimal.ZERO;
    for (Container c : pod.getSpec().getContainers()) {
      ResourceRequirements r = c.getResources();
      Quantity q = r == null || r.getRequests() == null ? null : r.getRequests().get("memory");
      if (q != null) {
        try {
          bytes = bytes.add(Quantity.getAmountInBytes(q));
        } catch (IllegalArgumentException | ArithmeticException e) {
          // an unparsable quantity: as if this container requested none
        }
      }
    }
    return bytes.divide(GIB, java.math.MathContext.DECIMAL64).doubleValue();
  }
}
