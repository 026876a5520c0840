package dev.apportion.bench.jmh;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The label sets of the refresh workloads: pod {@code i} as Kubernetes pod discovery plus a
 * typical {@code kubernetes-pods} relabeling gives it: the one generator of pod label sets for
 * every benchmark that reads them ({@link RefreshTimeEndToEnd}, {@link TargetTimeOf}), and the
 * same thirteen labels as the refresh workloads of the comparison with the upstream allocator.
 */
final class PodLabels {
  /** The job of every pod target. */
  static final String JOB = "kubernetes-pods";
  /** The label that holds the address. */
  static final String ADDRESS = "__address__";

  private PodLabels() {}

  /**
   * Pod {@code i}'s thirteen labels; {@code serial} gives its name suffix and IP (a replaced pod
   * keeps {@code i}'s namespace, app and node but takes a new serial).
   *
   * @param i the pod's index: namespace, app and node
   * @param serial the pod's serial: name suffix and IP
   * @return a new, mutable map
   */
  static Map<String, String> of(int i, int serial) {
    String ns = "ns-" + (i % 12);
    String app = "app-" + (i % 40);
    String pod = app + "-7d9f8b6c4-" + Integer.toString(100_000 + serial, 36);
    String ip = "10." + (serial >> 16 & 255) + "." + (serial >> 8 & 255) + "." + (serial & 255);
    HashMap<String, String> m = new HashMap<>();
    m.put("namespace", ns);
    m.put("pod", pod);
    m.put("container", "server");
    m.put("app", app);
    m.put("__meta_kubernetes_namespace", ns);
    m.put("__meta_kubernetes_pod_name", pod);
    m.put("__meta_kubernetes_pod_node_name", "node-" + (i % 1000));
    m.put("__meta_kubernetes_pod_ip", ip);
    m.put("__meta_kubernetes_pod_ready", "true");
    m.put("__meta_kubernetes_pod_phase", "Running");
    m.put("__meta_kubernetes_pod_container_name", "server");
    m.put("__meta_kubernetes_pod_container_port_number", "8080");
    m.put(ADDRESS, ip + ":8080");
    return m;
  }

  /**
   * The label sets with every name and value copied into a new {@code String}, as a discovery
   * client hands over what it has just decoded: nothing shared with earlier refreshes, no value's
   * hash cached (the names' hashes are, as building any {@code HashMap} caches them).
   *
   * @param sets the label sets
   * @return new maps of new strings
   */
  static List<Map<String, String>> fresh(List<Map<String, String>> sets) {
    List<Map<String, String>> out = new ArrayList<>(sets.size());
    for (Map<String, String> m : sets) {
      Map<String, String> c = new HashMap<>();
      for (Map.Entry<String, String> e : m.entrySet()) {
        c.put(new String(e.getKey().toCharArray()), new String(e.getValue().toCharArray()));
      }
      out.add(c);
    }
    return out;
  }
}
