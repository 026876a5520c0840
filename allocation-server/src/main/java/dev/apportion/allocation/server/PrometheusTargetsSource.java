package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A Prometheus server's or agent's active targets: {@code discoveredLabels} (with the {@code
 * __meta_*} labels, so a target's node is known) under the scrape pool as the job, the address
 * from {@code __address__}.
 */
final class PrometheusTargetsSource implements TargetSource {
  private final URI url;
  private final HttpFetch fetch;
  private final LabelNames labelNames = new LabelNames();

  PrometheusTargetsSource(URI base, HttpClient client, Duration timeout) {
    String b = base.toString();
    this.url = URI.create((b.endsWith("/") ? b.substring(0, b.length() - 1) : b) + "/api/v1/targets?state=active");
    this.fetch = new HttpFetch(client, timeout);
  }

  @Override
  public String describe() {
    return "Prometheus targets " + url;
  }

  @Override
  public List<Target> read() throws IOException, InterruptedException {
    JsonNode root = fetch.json(url);
    labelNames.begin();
    List<Target> out = parse(root, url.toString(), labelNames);
    labelNames.end(describe());
    return out;
  }

  static List<Target> parse(JsonNode root, String where) throws IOException {
    return parse(root, where, new LabelNames());
  }

  static List<Target> parse(JsonNode root, String where, LabelNames names) throws IOException {
    if (!"success".equals(root.path("status").asText())) {
      throw new IOException(where + ": status is not success");
    }
    JsonNode active = root.path("data").path("activeTargets");
    if (!active.isArray()) {
      throw new IOException(where + ": data.activeTargets is missing or not a list");
    }
    List<Target> out = new ArrayList<>(active.size());
    for (int i = 0; i < active.size(); i++) {
      JsonNode t = active.get(i);
      String at = where + ": data.activeTargets[" + i + "]";
      JsonNode discovered = t.path("discoveredLabels");
      if (!discovered.isObject()) {
        throw new IOException(at + ".discoveredLabels is missing");
      }
      Map<String, String> labels = new HashMap<>();
      for (Map.Entry<String, JsonNode> e : discovered.properties()) {
        if (e.getValue().isTextual() && names.keep(e.getKey(), at)) {
          labels.put(e.getKey(), e.getValue().asText());
        }
      }
      String address = labels.getOrDefault("__address__", "").trim();
      String job = t.path("scrapePool").asText(labels.getOrDefault("job", ""));
      if (job.isBlank()) {
        job = labels.getOrDefault("job", "");
      }
      if (address.isEmpty() || job.isBlank()) {
        throw new IOException(at + " has no __address__ or no scrape pool");
      }
      out.add(Target.of(job, address, labels));
    }
    return List.copyOf(out);
  }
}
