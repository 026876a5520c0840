package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Checks one job's {@code scrapeConfigs} entry against Prometheus's scrape-config fields and their
 * types before it is served: an OpenTelemetry collector refuses the whole {@code /scrape_configs}
 * answer for one bad value (a {@code scrape_interval: 30} without a unit made every collector
 * scrape nothing), so a value Prometheus would refuse is a config error naming its key.
 *
 * <p>The fields are those of Prometheus's {@code scrape_config} (3.x) that make sense served to a
 * collector whose discovery the server replaces: service discovery blocks ({@code *_sd_configs},
 * {@code static_configs}) and {@code job_name} (the server sets it) are refused. Nested blocks
 * (relabeling, TLS, auth, params) are checked for their shape (a list or a mapping), not field by
 * field.
 */
final class ScrapeConfigCheck {
  private enum Kind {
    DURATION,
    SIZE,
    BOOLEAN,
    COUNT,
    NUMBER,
    STRING,
    SCHEME,
    STRING_LIST,
    MAPPING_LIST,
    MAPPING
  }

  private static final Map<String, Kind> FIELDS =
      Map.ofEntries(
          Map.entry("scrape_interval", Kind.DURATION),
          Map.entry("scrape_timeout", Kind.DURATION),
          Map.entry("scrape_protocols", Kind.STRING_LIST),
          Map.entry("fallback_scrape_protocol", Kind.STRING),
          Map.entry("scrape_classic_histograms", Kind.BOOLEAN),
          Map.entry("always_scrape_classic_histograms", Kind.BOOLEAN),
          Map.entry("convert_classic_histograms_to_nhcb", Kind.BOOLEAN),
          Map.entry("metrics_path", Kind.STRING),
          Map.entry("scheme", Kind.SCHEME),
          Map.entry("honor_labels", Kind.BOOLEAN),
          Map.entry("honor_timestamps", Kind.BOOLEAN),
          Map.entry("track_timestamps_staleness", Kind.BOOLEAN),
          Map.entry("enable_compression", Kind.BOOLEAN),
          Map.entry("params", Kind.MAPPING),
          Map.entry("body_size_limit", Kind.SIZE),
          Map.entry("sample_limit", Kind.COUNT),
          Map.entry("label_limit", Kind.COUNT),
          Map.entry("label_name_length_limit", Kind.COUNT),
          Map.entry("label_value_length_limit", Kind.COUNT),
          Map.entry("target_limit", Kind.COUNT),
          Map.entry("keep_dropped_targets", Kind.COUNT),
          Map.entry("native_histogram_bucket_limit", Kind.COUNT),
          Map.entry("native_histogram_min_bucket_factor", Kind.NUMBER),
          Map.entry("relabel_configs", Kind.MAPPING_LIST),
          Map.entry("metric_relabel_configs", Kind.MAPPING_LIST),
          Map.entry("basic_auth", Kind.MAPPING),
          Map.entry("authorization", Kind.MAPPING),
          Map.entry("oauth2", Kind.MAPPING),
          Map.entry("tls_config", Kind.MAPPING),
          Map.entry("follow_redirects", Kind.BOOLEAN),
          Map.entry("enable_http2", Kind.BOOLEAN),
          Map.entry("proxy_url", Kind.STRING),
          Map.entry("no_proxy", Kind.STRING),
          Map.entry("proxy_from_environment", Kind.BOOLEAN),
          Map.entry("proxy_connect_header", Kind.MAPPING),
          Map.entry("metric_name_validation_scheme", Kind.STRING),
          Map.entry("metric_name_escaping_scheme", Kind.STRING),
          Map.entry("scrape_failure_log_file", Kind.STRING));

  /** Prometheus's duration syntax (model.ParseDuration): units from years to milliseconds. */
  private static final Pattern DURATION =
      Pattern.compile(
          "^(?:[0-9]{1,9}y)?(?:[0-9]{1,9}w)?(?:[0-9]{1,9}d)?(?:[0-9]{1,9}h)?(?:[0-9]{1,9}m)?(?:[0-9]{1,9}s)?(?:[0-9]{1,9}ms)?$");

  /** A byte size as Prometheus's body_size_limit takes it: a number and a unit, 0 for none. */
  private static final Pattern SIZE = Pattern.compile("^[0-9]+(?:B|KB|MB|GB|TB|PB|EB|KiB|MiB|GiB|TiB|PiB|EiB)?$");

  private ScrapeConfigCheck() {}

  /**
   * Checks one job's settings.
   *
   * @param job the settings
   * @param at the key's path, such as {@code scrapeConfigs.node}
   * @throws ConfigException naming the first bad key
   */
  static void check(ObjectNode job, String at) throws ConfigException {
    for (Map.Entry<String, JsonNode> e : job.properties()) {
      String key = at + "." + e.getKey();
      Kind kind = FIELDS.get(e.getKey());
      if (kind == null) {
        if ("job_name".equals(e.getKey())) {
          throw new ConfigException(key + ": set by the server (the job's name)");
        }
        if (e.getKey().endsWith("_sd_configs") || "static_configs".equals(e.getKey())) {
          throw new ConfigException(key + ": service discovery is the server's; the collector gets its targets from it");
        }
        throw new ConfigException(
            key + ": not a Prometheus scrape_config field (expected one of " + new TreeSet<>(FIELDS.keySet()) + ")");
      }
      check(e.getValue(), kind, key);
    }
    JsonNode interval = job.get("scrape_interval");
    JsonNode timeout = job.get("scrape_timeout");
    if (interval != null && timeout != null && millis(timeout.asText()) > millis(interval.asText())) {
      throw new ConfigException(at + ".scrape_timeout: longer than scrape_interval");
    }
  }

  private static void check(JsonNode v, Kind kind, String key) throws ConfigException {
    String shown = LogSafe.text(v.toString());
    switch (kind) {
      case DURATION -> {
        if (!v.isTextual() || v.asText().isEmpty() || !DURATION.matcher(v.asText()).matches() || millis(v.asText()) == 0) {
          throw new ConfigException(key + ": must be a Prometheus duration such as 30s, 1m or 1h30m, not " + shown);
        }
      }
      case SIZE -> {
        if (!(v.isTextual() && SIZE.matcher(v.asText()).matches()) && !(v.isIntegralNumber() && v.asLong() >= 0)) {
          throw new ConfigException(key + ": must be a size such as 10MB, not " + shown);
        }
      }
      case BOOLEAN -> {
        if (!v.isBoolean()) {
          throw new ConfigException(key + ": must be true or false, not " + shown);
        }
      }
      case COUNT -> {
        if (!v.isIntegralNumber() || v.asLong() < 0) {
          throw new ConfigException(key + ": must be a whole number, 0 or more, not " + shown);
        }
      }
      case NUMBER -> {
        if (!v.isNumber() || !Double.isFinite(v.asDouble())) {
          throw new ConfigException(key + ": must be a finite number, not " + shown);
        }
      }
      case STRING -> {
        if (!v.isTextual()) {
          throw new ConfigException(key + ": must be a string, not " + shown);
        }
        ConfigNodes.noControlCharacters(v.asText(), key);
      }
      case SCHEME -> {
        if (!v.isTextual() || !Set.of("http", "https").contains(v.asText())) {
          throw new ConfigException(key + ": must be http or https, not " + shown);
        }
      }
      case STRING_LIST -> {
        if (!v.isArray()) {
          throw new ConfigException(key + ": must be a list of strings, not " + shown);
        }
        for (JsonNode s : v) {
          if (!s.isTextual()) {
            throw new ConfigException(key + ": must be a list of strings, not " + shown);
          }
        }
      }
      case MAPPING_LIST -> {
        if (!v.isArray()) {
          throw new ConfigException(key + ": must be a list of mappings, not " + shown);
        }
        for (JsonNode s : v) {
          if (!s.isObject()) {
            throw new ConfigException(key + ": must be a list of mappings, not " + shown);
          }
        }
      }
      case MAPPING -> {
        if (!v.isObject()) {
          throw new ConfigException(key + ": must be a mapping, not " + shown);
        }
      }
    }
  }

  /** A valid Prometheus duration in milliseconds (0 for a malformed one, checked before). */
  private static long millis(String d) {
    var m = java.util.regex.Pattern.compile("([0-9]+)(ms|y|w|d|h|m|s)").matcher(d);
    long total = 0;
    while (m.find()) {
      long n = Long.parseLong(m.group(1));
      total +=
          n
              * switch (m.group(2)) {
                case "y" -> 365L * 24 * 3_600_000;
                case "w" -> 7L * 24 * 3_600_000;
                case "d" -> 24L * 3_600_000;
                case "h" -> 3_600_000L;
                case "m" -> 60_000L;
                case "s" -> 1_000L;
                default -> 1L;
              };
    }
    return total;
  }
}
