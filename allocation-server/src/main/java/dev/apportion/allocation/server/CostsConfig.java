package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.JsonNode;
import static dev.apportion.allocation.server.ConfigNodes.keys;
import static dev.apportion.allocation.server.ConfigNodes.scalar;
import static dev.apportion.allocation.server.ConfigNodes.text;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The config file's {@code costs:} block: where target costs are queried, how often, and how a
 * sample is matched with a target. Parsed on its own from the block's node, with errors naming
 * the key ({@code costs.refreshInterval: ...}) and unknown keys refused, like the rest of the
 * file.
 *
 * <pre>{@code
 * costs:
 *   url: http://prometheus.monitoring:9090   # or a list: every answer's samples are combined
 *   query: scrape_samples_scraped            # the default; any instant-vector expression
 *   refreshInterval: 1m                      # the default
 *   labels: [job, instance]                  # the default: what a scrape gives a sample
 *   basic_auth: {username: u, password_file: /etc/secret/pw}
 *   authorization: {type: Bearer, credentials_file: /var/run/secrets/token}
 *   tls_config: {ca_file: /etc/ca.pem, insecure_skip_verify: false}
 * }</pre>
 *
 * @param urls the query APIs' base URLs (the path before {@code /api/v1/query}), at least one
 * @param query the PromQL instant-vector expression
 * @param refreshInterval how often the query runs
 * @param labels the labels a sample is matched on, in order
 * @param http the HTTP client options (relative files resolved against the config's folder)
 */
record CostsConfig(
    List<URI> urls, String query, Duration refreshInterval, List<String> labels, HttpClientOptions http) {

  /** The default query: the samples each target's last scrape returned. */
  static final String DEFAULT_QUERY = "scrape_samples_scraped";

  /** The default refresh interval. */
  static final Duration DEFAULT_REFRESH = Duration.ofMinutes(1);

  private static final Pattern LABEL = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");

  /**
   * The block parsed, or null when {@code node} is absent or null (no costs: count balance).
   *
   * @param node the {@code costs} node
   * @param baseDir the config file's folder
   * @throws ConfigException naming the key at fault
   */
  static CostsConfig parse(JsonNode node, Path baseDir) throws ConfigException {
    if (node == null || node.isNull()) {
      return null;
    }
    String at = "costs";
    if (!node.isObject()) {
      throw new ConfigException(at + ": must be a mapping");
    }
    keys(node, at, "url", "query", "refreshInterval", "labels", "basic_auth", "authorization", "tls_config");
    JsonNode u = node.get("url");
    List<URI> urls = new ArrayList<>();
    if (u == null || u.isNull()) {
      throw new ConfigException(at + ".url: required (a query API such as http://prometheus:9090)");
    }
    if (u.isArray()) {
      if (u.isEmpty()) {
        throw new ConfigException(at + ".url: must be a URL or a non-empty list of URLs");
      }
      for (int i = 0; i < u.size(); i++) {
        urls.add(url(u.get(i), at + ".url[" + i + "]"));
      }
    } else {
      urls.add(url(u, at + ".url"));
    }
    String query = text(node, "query", DEFAULT_QUERY, at);
    if (query.isBlank()) {
      throw new ConfigException(at + ".query: must not be empty");
    }
    String r = text(node, "refreshInterval", null, at);
    Duration refresh = r == null ? DEFAULT_REFRESH : ConfigNodes.duration(r, at + ".refreshInterval");
    List<String> labels = CostQueryResponse.DEFAULT_MATCH;
    JsonNode l = node.get("labels");
    if (l != null && !l.isNull()) {
      if (!l.isArray() || l.isEmpty()) {
        throw new ConfigException(at + ".labels: must be a non-empty list of label names");
      }
      List<String> out = new ArrayList<>();
      Set<String> seen = new HashSet<>();
      for (int i = 0; i < l.size(); i++) {
        String name = scalar(l.get(i), at + ".labels[" + i + "]");
        if (!LABEL.matcher(name).matches()) {
          throw new ConfigException(at + ".labels[" + i + "]: not a label name: '" + name + "'");
        }
        if (!seen.add(name)) {
          throw new ConfigException(at + ".labels[" + i + "]: '" + name + "' given twice");
        }
        out.add(name);
      }
      labels = List.copyOf(out);
    }
    return new CostsConfig(
        List.copyOf(urls), query, refresh, labels, HttpClientOptions.parse(node, at, baseDir));
  }

  private static URI url(JsonNode n, String at) throws ConfigException {
    URI u = ConfigNodes.url(scalar(n, at), at);
    if (u.getRawUserInfo() != null) {
      // A URL is logged with every failed read: credentials belong where they are never shown.
      throw new ConfigException(at + ": must not carry credentials (user:password@); use basic_auth");
    }
    if (u.getRawQuery() != null || u.getRawFragment() != null) {
      throw new ConfigException(at + ": must be the API's base URL, without ?query or #fragment");
    }
    return u;
  }


  /** Which options are set; never a secret. */
  @Override
  public String toString() {
    return "CostsConfig[urls=" + urls + ", query=" + query + ", refreshInterval=" + refreshInterval
        + ", labels=" + labels + ", http=" + http + "]";
  }
}
