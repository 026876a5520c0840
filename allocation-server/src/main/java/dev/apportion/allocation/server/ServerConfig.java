package dev.apportion.allocation.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The service's one YAML file, parsed and checked. Every error is a {@link ConfigException} whose
 * message is one line naming the key at fault ({@code targets[1].fileSd.files: ...}). Unknown keys
 * are errors, so a typo never silently means a default. Relative file SD paths are resolved against
 * the config file's directory, as Prometheus does.
 */
record ServerConfig(
    InetSocketAddress listen,
    String strategy,
    String fallback,
    Double loadFactor,
    Duration refreshInterval,
    Duration requestTimeout,
    List<SourceConfig> targets,
    CollectorsConfig collectors,
    Map<String, Map<String, Object>> scrapeConfigs) {

  /** A config error: its message is the one line Main prints. */
  static final class ConfigException extends Exception {
    private static final long serialVersionUID = 1L;

    ConfigException(String message) {
      super(message);
    }
  }

  /** One target source. */
  sealed interface SourceConfig permits FileSd, HttpSd, PrometheusApi {}

  record FileSd(String job, List<Path> files) implements SourceConfig {}

  record HttpSd(String job, URI url) implements SourceConfig {}

  record PrometheusApi(URI url) implements SourceConfig {}

  /** Where collectors come from: exactly one of the three. */
  sealed interface CollectorsConfig permits StaticCollectors, KubernetesCollectors, PollCollectors {}

  record StaticCollectors(List<Collector> collectors) implements CollectorsConfig {}

  record KubernetesCollectors(
      String namespace, String labelSelector, Duration notReadyGracePeriod)
      implements CollectorsConfig {}

  record PollCollectors(Duration expireAfter, int expected) implements CollectorsConfig {}

  static ServerConfig read(Path file) throws ConfigException {
    JsonNode root;
    try {
      root = TargetGroups.YAML.readTree(Files.readAllBytes(file));
    } catch (NoSuchFileException e) {
      throw new ConfigException(file + ": no such file");
    } catch (JsonProcessingException e) {
      throw new ConfigException(file + ": not valid YAML: " + oneLine(e.getOriginalMessage()));
    } catch (IOException e) {
      throw new ConfigException(file + ": " + oneLine(String.valueOf(e.getMessage())));
    }
    Path dir = file.toAbsolutePath().getParent();
    try {
      return parse(root, dir);
    } catch (ConfigException e) {
      throw new ConfigException(file + ": " + e.getMessage());
    }
  }

  static ServerConfig parse(JsonNode root, Path baseDir) throws ConfigException {
    ObjectNode top = object(root, "the file");
    keys(top, "", "listen", "strategy", "refreshInterval", "requestTimeout", "targets", "collectors", "scrapeConfigs");
    InetSocketAddress listen = address(text(top, "listen", "0.0.0.0:8080"), "listen");

    String strategy = Allocators.DEFAULT_STRATEGY;
    String fallback = null;
    Double loadFactor = null;
    JsonNode s = top.get("strategy");
    if (s != null && s.isTextual()) {
      strategy = s.asText();
    } else if (s != null) {
      ObjectNode so = object(s, "strategy");
      keys(so, "strategy.", "name", "fallback", "loadFactor");
      strategy = text(so, "name", Allocators.DEFAULT_STRATEGY);
      JsonNode f = so.get("fallback");
      if (f != null) {
        fallback = f.isNull() ? "" : f.asText();
      }
      JsonNode lf = so.get("loadFactor");
      if (lf != null) {
        if (!lf.isNumber() || !(lf.asDouble() > 1) || Double.isInfinite(lf.asDouble())) {
          throw new ConfigException("strategy.loadFactor: must be a number greater than 1");
        }
        loadFactor = lf.asDouble();
      }
    }
    if (!Allocators.strategies().contains(strategy)) {
      throw new ConfigException(
          "strategy: unknown strategy '" + strategy + "'; known: " + Allocators.strategies());
    }
    Duration refresh = duration(text(top, "refreshInterval", "30s"), "refreshInterval");
    Duration timeout = duration(text(top, "requestTimeout", "10s"), "requestTimeout");

    JsonNode t = top.get("targets");
    if (t == null || !t.isArray() || t.isEmpty()) {
      throw new ConfigException("targets: must be a non-empty list of sources");
    }
    List<SourceConfig> sources = new ArrayList<>();
    for (int i = 0; i < t.size(); i++) {
      sources.add(source(t.get(i), "targets[" + i + "]", baseDir));
    }

    JsonNode c = top.get("collectors");
    if (c == null) {
      throw new ConfigException("collectors: missing (one of static, kubernetes, polls)");
    }
    CollectorsConfig collectors = collectors(object(c, "collectors"), refresh);

    Map<String, Map<String, Object>> scrape = new LinkedHashMap<>();
    JsonNode sc = top.get("scrapeConfigs");
    if (sc != null && !sc.isNull()) {
      ObjectNode so = object(sc, "scrapeConfigs");
      for (Map.Entry<String, JsonNode> e : so.properties()) {
        ObjectNode job = object(e.getValue(), "scrapeConfigs." + e.getKey());
        @SuppressWarnings("unchecked")
        Map<String, Object> settings = TargetGroups.JSON.convertValue(job, Map.class);
        scrape.put(e.getKey(), settings);
      }
    }
    return new ServerConfig(
        listen, strategy, fallback, loadFactor, refresh, timeout, List.copyOf(sources), collectors, scrape);
  }

  private static SourceConfig source(JsonNode n, String at, Path baseDir) throws ConfigException {
    ObjectNode o = object(n, at);
    if (o.size() != 1) {
      throw new ConfigException(at + ": must have exactly one of fileSd, httpSd, prometheus");
    }
    String kind = o.fieldNames().next();
    String where = at + "." + kind;
    switch (kind) {
      case "fileSd" -> {
        ObjectNode f = object(o.get(kind), where);
        keys(f, where + ".", "job", "files");
        String job = required(f, "job", where);
        JsonNode files = f.get("files");
        if (files == null || !files.isArray() || files.isEmpty()) {
          throw new ConfigException(where + ".files: must be a non-empty list of paths");
        }
        List<Path> paths = new ArrayList<>();
        for (JsonNode p : files) {
          if (!p.isTextual() || p.asText().isBlank()) {
            throw new ConfigException(where + ".files: every entry must be a path");
          }
          paths.add(baseDir.resolve(p.asText()).normalize());
        }
        return new FileSd(job, List.copyOf(paths));
      }
      case "httpSd" -> {
        ObjectNode h = object(o.get(kind), where);
        keys(h, where + ".", "job", "url");
        return new HttpSd(required(h, "job", where), url(required(h, "url", where), where + ".url"));
      }
      case "prometheus" -> {
        ObjectNode p = object(o.get(kind), where);
        keys(p, where + ".", "url");
        return new PrometheusApi(url(required(p, "url", where), where + ".url"));
      }
      default -> throw new ConfigException(at + ": unknown source '" + kind + "' (fileSd, httpSd, prometheus)");
    }
  }

  private static CollectorsConfig collectors(ObjectNode c, Duration refresh) throws ConfigException {
    if (c.size() != 1) {
      throw new ConfigException("collectors: must have exactly one of static, kubernetes, polls");
    }
    String kind = c.fieldNames().next();
    String where = "collectors." + kind;
    switch (kind) {
      case "static" -> {
        JsonNode list = c.get(kind);
        if (!list.isArray() || list.isEmpty()) {
          throw new ConfigException(where + ": must be a non-empty list of {name, node}");
        }
        List<Collector> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < list.size(); i++) {
          String at = where + "[" + i + "]";
          JsonNode e = list.get(i);
          Collector col;
          if (e.isTextual()) {
            col = collector(e.asText(), null, at);
          } else {
            ObjectNode o = object(e, at);
            keys(o, at + ".", "name", "node");
            col = collector(required(o, "name", at), text(o, "node", null), at);
          }
          if (!names.add(col.name())) {
            throw new ConfigException(at + ": duplicate collector name '" + col.name() + "'");
          }
          out.add(col);
        }
        return new StaticCollectors(List.copyOf(out));
      }
      case "kubernetes" -> {
        ObjectNode k = object(c.get(kind), where);
        keys(k, where + ".", "namespace", "labelSelector", "notReadyGracePeriod");
        return new KubernetesCollectors(
            required(k, "namespace", where),
            required(k, "labelSelector", where),
            durationOrZero(text(k, "notReadyGracePeriod", "30s"), where + ".notReadyGracePeriod"));
      }
      case "polls" -> {
        JsonNode p = c.get(kind);
        ObjectNode o = p.isNull() ? TargetGroups.JSON.createObjectNode() : object(p, where);
        keys(o, where + ".", "expireAfter", "expected");
        Duration expire =
            duration(text(o, "expireAfter", null) == null ? null : text(o, "expireAfter", null), where + ".expireAfter", refresh.multipliedBy(3));
        JsonNode ex = o.get("expected");
        int expected = 0;
        if (ex != null) {
          if (!ex.canConvertToInt() || !ex.isIntegralNumber() || ex.asInt() < 0) {
            throw new ConfigException(where + ".expected: must be a whole number, 0 or more");
          }
          expected = ex.asInt();
        }
        return new PollCollectors(expire, expected);
      }
      default -> throw new ConfigException("collectors: unknown kind '" + kind + "' (static, kubernetes, polls)");
    }
  }

  private static Collector collector(String name, String node, String at) throws ConfigException {
    try {
      return Collector.of(name, node);
    } catch (IllegalArgumentException e) {
      throw new ConfigException(at + ": " + e.getMessage());
    }
  }

  private static ObjectNode object(JsonNode n, String at) throws ConfigException {
    if (n == null || !n.isObject()) {
      throw new ConfigException(at + ": must be a mapping");
    }
    return (ObjectNode) n;
  }

  private static void keys(ObjectNode o, String prefix, String... allowed) throws ConfigException {
    Set<String> ok = Set.of(allowed);
    for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!ok.contains(k)) {
        throw new ConfigException(prefix + k + ": unknown key (expected one of " + List.of(allowed) + ")");
      }
    }
  }

  private static String text(ObjectNode o, String key, String dflt) throws ConfigException {
    JsonNode n = o.get(key);
    if (n == null || n.isNull()) {
      return dflt;
    }
    if (!n.isValueNode()) {
      throw new ConfigException(key + ": must be a scalar");
    }
    return n.asText();
  }

  private static String required(ObjectNode o, String key, String at) throws ConfigException {
    String v = text(o, key, null);
    if (v == null || v.isBlank()) {
      throw new ConfigException(at + "." + key + ": required");
    }
    return v;
  }

  private static URI url(String s, String at) throws ConfigException {
    try {
      URI u = new URI(s);
      if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null) {
        throw new ConfigException(at + ": must be an http or https URL");
      }
      return u;
    } catch (URISyntaxException e) {
      throw new ConfigException(at + ": not a URL: " + e.getMessage());
    }
  }

  private static final Pattern HOST_PORT = Pattern.compile("^(?:\\[([^\\]]+)\\]|([^:]*)):(\\d{1,5})$");

  // One bind address by nature: a host name that resolves to several is bound at its first.
  @SuppressWarnings("AddressSelection")
  static InetSocketAddress address(String s, String at) throws ConfigException {
    Matcher m = HOST_PORT.matcher(s.trim());
    if (!m.matches()) {
      throw new ConfigException(at + ": must be host:port, such as 0.0.0.0:8080 or :8080");
    }
    String host = m.group(1) != null ? m.group(1) : m.group(2);
    int port = Integer.parseInt(m.group(3));
    if (port > 65535) {
      throw new ConfigException(at + ": port out of range");
    }
    return host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
  }

  private static final Pattern DURATION = Pattern.compile("^(\\d+)(ms|s|m|h)$");

  static Duration duration(String s, String at) throws ConfigException {
    return duration(s, at, null);
  }

  /** A duration that may be zero ({@code 0s}), such as a grace period that can be turned off. */
  static Duration durationOrZero(String s, String at) throws ConfigException {
    return "0".equals(s.trim()) ? Duration.ZERO : parseDuration(s, at);
  }

  private static Duration duration(String s, String at, Duration dflt) throws ConfigException {
    if (s == null) {
      return dflt;
    }
    Duration d = parseDuration(s, at);
    if (d.isZero()) {
      throw new ConfigException(at + ": must be positive");
    }
    return d;
  }

  private static Duration parseDuration(String s, String at) throws ConfigException {
    Matcher m = DURATION.matcher(s.trim());
    if (!m.matches()) {
      throw new ConfigException(at + ": must be a duration such as 500ms, 15s, 2m or 1h");
    }
    long n = Long.parseLong(m.group(1));
    Duration d =
        switch (m.group(2)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          default -> Duration.ofHours(n);
        };
    return d;
  }

  private static String oneLine(String s) {
    if (s == null) {
      return "unreadable";
    }
    return s.replaceAll("\\s+", " ").trim();
  }
}
