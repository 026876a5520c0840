package dev.apportion.bench.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.apportion.allocation.Target;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes Prometheus {@code /api/v1/targets} responses for the tests, shaped like real ones (about
 * 600 bytes a target), and reads them back the simple way (a Jackson tree, the reader's old
 * algorithm) as a reference for the streaming reader.
 */
final class PrometheusFiles {
  private PrometheusFiles() {}

  /**
   * Writes {@code count} active targets over 7 nodes in 3 zones, one in ten a probe with no node,
   * with the fields a real response has in varying order, values to escape, a few dropped
   * targets, and a {@code droppedTargetCounts} object.
   */
  static Path write(Path file, int count) throws IOException {
    try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      w.write("{\"status\":\"success\",\"data\":{\"activeTargets\":[\n");
      for (int i = 0; i < count; i++) {
        if (i > 0) {
          w.write(",\n");
        }
        w.write(target(i));
      }
      w.write("\n],\"droppedTargets\":[{\"discoveredLabels\":{\"__address__\":\"10.9.9.9:1\","
          + "\"job\":\"dropped\"},\"scrapePool\":\"dropped\"}],"
          + "\"droppedTargetCounts\":{\"kubernetes-pods\":1}}}\n");
    }
    return file;
  }

  private static String target(int i) {
    if (i % 10 == 9) {
      return "{\"discoveredLabels\":{\"__address__\":\"https://probe-" + i
          + ".example.com/healthz\",\"__metrics_path__\":\"/probe\",\"__param_module\":"
          + "\"http_2xx\",\"job\":\"blackbox\"},\"labels\":{\"instance\":\"probe-" + i
          + "\",\"job\":\"blackbox\"},\"scrapePool\":\"blackbox\",\"health\":\"up\","
          + "\"lastError\":\"\",\"lastScrapeDuration\":0.2}";
    }
    int node = i % 7;
    String zone = "us-east-1" + (char) ('a' + node % 3);
    String ip = "10.1." + (i >> 8 & 0xFF) + "." + (i & 0xFF);
    String job = i % 3 == 0 ? "kubernetes-pods" : "kubernetes-service-endpoints";
    String labels = "\"discoveredLabels\":{\"__address__\":\"" + ip + ":8080\","
        + "\"__metrics_path__\":\"/metrics\",\"__scheme__\":\"http\","
        + "\"__scrape_interval__\":\"30s\",\"__scrape_timeout__\":\"10s\","
        + "\"__meta_kubernetes_namespace\":\"shop\","
        + "\"__meta_kubernetes_pod_name\":\"cart-" + i + "\","
        + "\"__meta_kubernetes_pod_node_name\":\"node-" + node + "\","
        + "\"__meta_kubernetes_node_label_topology_kubernetes_io_zone\":\"" + zone + "\","
        + "\"__meta_kubernetes_pod_annotation_note\":\"caf\\u00e9 \\\"" + i % 5 + "\\\"\","
        + "\"job\":\"" + job + "\"}";
    String rest = "\"labels\":{\"instance\":\"" + ip + ":8080\",\"job\":\"" + job + "\","
        + "\"namespace\":\"shop\"},\"scrapeUrl\":\"http://" + ip + ":8080/metrics\","
        + "\"lastError\":\"\",\"lastScrape\":\"2025-11-20T10:00:00.000Z\","
        + "\"lastScrapeDuration\":0.012,\"health\":\"up\",\"scrapeInterval\":\"30s\","
        + "\"scrapeTimeout\":\"10s\"";
    String pool = "\"scrapePool\":\"" + job + "\"";
    return i % 2 == 0 ? "{" + labels + "," + rest + "," + pool + "}"
        : "{" + pool + "," + rest + "," + labels + "}";
  }

  /** The active targets and zones of a response, read as a whole tree: the reference. */
  static SimulationInputs.Targets readWhole(Path file) throws IOException {
    JsonNode active = new ObjectMapper().readTree(file.toFile()).path("data").get("activeTargets");
    List<Target> targets = new ArrayList<>();
    Map<String, String> zones = new TreeMap<>();
    for (JsonNode item : active) {
      Map<String, String> labels = new TreeMap<>();
      item.get("discoveredLabels").properties()
          .forEach(e -> labels.put(e.getKey(), e.getValue().asText()));
      String job = item.hasNonNull("scrapePool") ? item.get("scrapePool").asText()
          : item.path("labels").path("job").asText(labels.get("job"));
      Target t = Target.of(job, labels.get("__address__"), labels);
      targets.add(t);
      for (String z : List.of("__meta_kubernetes_node_label_topology_kubernetes_io_zone",
          "__meta_kubernetes_node_label_failure_domain_beta_kubernetes_io_zone")) {
        String zone = labels.get(z);
        if (zone != null && !zone.isEmpty() && t.node().isPresent()) {
          zones.putIfAbsent(t.node().get(), zone);
          break;
        }
      }
    }
    return new SimulationInputs.Targets(targets, zones);
  }
}
