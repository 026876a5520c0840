package dev.apportion.allocation.identity;

/**
 * Where a target's node and zone come from: the Kubernetes service discovery labels, in order of
 * precedence ({@code Target}'s documentation states the order to users). A target built without a
 * {@link LabelShape} finds the labels by binary search; a shape remembers where they are.
 */
final class KubernetesLabels {
  /**
   * The labels node and zone are read from: the node labels in order of precedence ({@code
   * 0..2}), then the endpointslice kind and name ({@code 3, 4}), the endpoints kind and name
   * ({@code 5, 6}), the endpointslice endpoint node ({@code 7}), and the zone labels from {@link
   * #ZONE_FROM} on. Every one is a {@code __meta_*} label.
   */
  static final String[] SPECIAL = {
    "__meta_kubernetes_pod_node_name",
    "__meta_kubernetes_node_name",
    "__meta_kubernetes_endpoint_node_name",
    "__meta_kubernetes_endpointslice_address_target_kind",
    "__meta_kubernetes_endpointslice_address_target_name",
    "__meta_kubernetes_endpoint_address_target_kind",
    "__meta_kubernetes_endpoint_address_target_name",
    "__meta_kubernetes_endpointslice_endpoint_node_name",
    "__meta_kubernetes_endpointslice_endpoint_zone",
    "__meta_kubernetes_node_label_topology_kubernetes_io_zone",
  };
  private static final int ZONE_FROM = 8;

  private KubernetesLabels() {}

  /** Writes the pair index of each {@link #SPECIAL} label into {@code at}, -1 where absent. */
  static void find(String[] kv, int metaFrom, int metaTo, int[] at) {
    for (int k = 0; k < SPECIAL.length; k++) {
      at[k] = metaFrom == metaTo ? -1 : LabelArrays.indexOf(kv, metaFrom, metaTo, SPECIAL[k]);
    }
  }

  /** The node, given where the {@link #SPECIAL} labels are; null when none names one. */
  static String node(String[] kv, int[] at) {
    String value = firstNonBlank(kv, at, 0, 3);
    if (value == null) {
      value = namedNode(kv, at[3], at[4]);
    }
    if (value == null) {
      value = namedNode(kv, at[5], at[6]);
    }
    if (value == null) {
      value = nonBlank(valueAt(kv, at[7]));
    }
    return value;
  }

  /** The zone, given where the {@link #SPECIAL} labels are; null when none names one. */
  static String zone(String[] kv, int[] at) {
    return firstNonBlank(kv, at, ZONE_FROM, SPECIAL.length);
  }

  private static String firstNonBlank(String[] kv, int[] at, int from, int to) {
    for (int k = from; k < to; k++) {
      String value = nonBlank(valueAt(kv, at[k]));
      if (value != null) {
        return value;
      }
    }
    return null;
  }

  /** The value of pair {@code name} when pair {@code kind}'s value is {@code Node}; else null. */
  private static String namedNode(String[] kv, int kind, int name) {
    return "Node".equals(valueAt(kv, kind)) ? nonBlank(valueAt(kv, name)) : null;
  }

  private static String nonBlank(String s) {
    return s == null || s.isBlank() ? null : s;
  }

  private static String valueAt(String[] kv, int pair) {
    return pair < 0 ? null : kv[(pair << 1) + 1];
  }
}
