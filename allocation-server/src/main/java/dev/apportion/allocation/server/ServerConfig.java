package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.spi.AllocatorSpec;
import static dev.apportion.allocation.server.ConfigNodes.bool;
import static dev.apportion.allocation.server.ConfigNodes.duration;
import static dev.apportion.allocation.server.ConfigNodes.durationOrZero;
import static dev.apportion.allocation.server.ConfigNodes.keys;
import static dev.apportion.allocation.server.ConfigNodes.noControlCharacters;
import static dev.apportion.allocation.server.ConfigNodes.number;
import static dev.apportion.allocation.server.ConfigNodes.object;
import static dev.apportion.allocation.server.ConfigNodes.oneLine;
import static dev.apportion.allocation.server.ConfigNodes.required;
import static dev.apportion.allocation.server.ConfigNodes.scalar;
import static dev.apportion.allocation.server.ConfigNodes.text;
import static dev.apportion.allocation.server.ConfigNodes.url;
import static dev.apportion.allocation.server.ConfigNodes.whole;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.PatternSyntaxException;

/**
 * The service's one YAML file, parsed and checked. Every error is a {@link ConfigException} whose
 * message is one line naming the key at fault ({@code targets[1].fileSd.files: ...}). Unknown keys
 * are errors, so a typo never silently means a default. Relative file SD paths are resolved against
 * the config file's directory, as Prometheus does.
 */
record ServerConfig(
    InetSocketAddress listen,
    StrategyConfig strategy,
    Duration refreshInterval,
    Duration requestTimeout,
    List<SourceConfig> targets,
    CollectorsConfig collectors,
    Map<String, Map<String, Object>> scrapeConfigs,
    WebConfig web,
    CostsConfig costs,
    HandoverConfig handover) {

  /**
   * The strategy and its options; a null option means the library's default. {@code partitionBy}
   * is {@link Allocators#ZONE} for {@code zoneAware: true}, {@code ""} for no partitioning; {@code
   * replicas} is how many collectors hold each target ({@link Allocators.Builder#replicas}).
   */
  record StrategyConfig(
      String name,
      String fallback,
      Double loadFactor,
      String partitionBy,
      Double maxSkew,
      Integer maxTargetsPerCollector,
      Long maxCostPerCollector,
      Double movedShareWarning,
      Integer replicas) {

    static StrategyConfig named(String name) {
      return new StrategyConfig(name, null, null, null, null, null, null, null, null);
    }

    /** How many collectors hold each target: {@code replicas}, 1 when not set. */
    int replicaCount() {
      return replicas == null ? 1 : replicas;
    }

    /**
     * A builder with every option applied; an option the strategy refuses is an error naming its
     * key.
     */
    Allocators.Builder builder() throws ConfigException {
      Allocators.Builder b;
      try {
        b = Allocators.builder(name);
      } catch (IllegalArgumentException e) {
        throw new ConfigException("strategy.name: " + e.getMessage());
      }
      apply("strategy.fallback", fallback, b::fallback);
      apply("strategy.loadFactor", loadFactor, b::loadFactor);
      apply(
          Allocators.ZONE.equals(partitionBy) ? "strategy.zoneAware" : "strategy.partitionBy",
          partitionBy,
          b::partitionBy);
      apply("strategy.maxSkew", maxSkew, b::maxSkew);
      apply("strategy.maxTargetsPerCollector", maxTargetsPerCollector, b::maxTargetsPerCollector);
      apply("strategy.maxCostPerCollector", maxCostPerCollector, b::maxCostPerCollector);
      apply("strategy.movedShareWarning", movedShareWarning, b::warnWhenMovedShareExceeds);
      apply("strategy.replicas", replicas, b::replicas);
      return b;
    }

    private static <T> void apply(String at, T value, java.util.function.Consumer<T> setter)
        throws ConfigException {
      if (value == null) {
        return;
      }
      try {
        setter.accept(value);
      } catch (IllegalArgumentException e) {
        throw new ConfigException(at + ": " + e.getMessage());
      }
    }
  }

  /** One target source. */
  sealed interface SourceConfig permits FileSd, HttpSd, PrometheusApi {}

  record FileSd(String job, List<Path> files) implements SourceConfig {}

  /**
   * A Prometheus HTTP SD URL; without {@code basic_auth} or {@code authorization} a password in the
   * URL is sent as basic auth. {@code secretParams} are query parameters never shown (beside those
   * {@link Redaction} always hides).
   */
  record HttpSd(String job, URI url, HttpClientOptions http, Set<String> secretParams)
      implements SourceConfig {}

  /** A Prometheus server's active targets; {@code secretParams} as for {@link HttpSd}. */
  record PrometheusApi(URI url, HttpClientOptions http, Set<String> secretParams)
      implements SourceConfig {}

  /** Where collectors come from: exactly one of the three. */
  sealed interface CollectorsConfig permits StaticCollectors, KubernetesCollectors, PollCollectors {}

  record StaticCollectors(List<Collector> collectors) implements CollectorsConfig {}

  /**
   * Pods by label selector; {@code nodeZones} also watches the Nodes for their zones ({@code
   * KubernetesNodeZones}); {@code capacityFromMemoryRequest} weighs a pod without the capacity
   * annotation by its memory request.
   */
  record KubernetesCollectors(
      String namespace,
      String labelSelector,
      Duration notReadyGracePeriod,
      boolean readyFirst,
      boolean nodeZones,
      boolean capacityFromMemoryRequest)
      implements CollectorsConfig {}

  /**
   * Collectors from their polls; {@code allow}, when not null, is an RE2 expression a name must
   * match entirely (checked here with {@link PollMembership#compileAllow}).
   */
  record PollCollectors(Duration expireAfter, int expected, String allow)
      implements CollectorsConfig {}

  /** The largest config file read: far above any real one, far below a memory problem. */
  static final long MAX_CONFIG_BYTES = 1 << 20;

  /** The shortest refresh interval: below it the sources would be read back to back. */
  static final Duration MIN_REFRESH = Duration.ofSeconds(1);

  static ServerConfig read(Path file) throws ConfigException {
    JsonNode root;
    try {
      // Checked before opening: a FIFO would block the open for ever, a device never end.
      BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
      if (!a.isRegularFile()) {
        throw new ConfigException(file + ": not a regular file (a directory, a FIFO or a device)");
      }
      if (a.size() > MAX_CONFIG_BYTES) {
        throw new ConfigException(file + ": larger than " + MAX_CONFIG_BYTES + " bytes");
      }
      byte[] bytes;
      try (InputStream in = Files.newInputStream(file)) {
        bytes = in.readNBytes((int) MAX_CONFIG_BYTES + 1);
      }
      if (bytes.length > MAX_CONFIG_BYTES) {
        throw new ConfigException(file + ": larger than " + MAX_CONFIG_BYTES + " bytes");
      }
      root = StrictYaml.read(bytes);
    } catch (NoSuchFileException e) {
      throw new ConfigException(file + ": no such file");
    } catch (AccessDeniedException e) {
      throw new ConfigException(file + ": permission denied");
    } catch (ConfigException e) {
      throw e.getMessage().startsWith(file.toString()) ? e : new ConfigException(file + ": " + e.getMessage());
    } catch (IOException e) {
      throw new ConfigException(file + ": cannot read: " + e.getClass().getSimpleName() + ": " + oneLine(String.valueOf(e.getMessage())));
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
    keys(top, "", "listen", "strategy", "refreshInterval", "requestTimeout", "targets", "collectors", "scrapeConfigs", "webConfigFile", "costs", "handover");
    InetSocketAddress listen = ConfigNodes.address(text(top, "listen", "0.0.0.0:8080", ""), "listen");

    StrategyConfig strategy = strategy(top.get("strategy"));
    Duration refresh = duration(text(top, "refreshInterval", "30s", ""), "refreshInterval");
    if (refresh.compareTo(MIN_REFRESH) < 0) {
      throw new ConfigException("refreshInterval: shorter than the minimum, " + MIN_REFRESH.toSeconds() + "s");
    }
    Duration timeout = duration(text(top, "requestTimeout", "10s", ""), "requestTimeout");

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
        ScrapeConfigCheck.check(job, "scrapeConfigs." + e.getKey());
        @SuppressWarnings("unchecked")
        Map<String, Object> settings = TargetGroups.JSON.convertValue(job, Map.class);
        scrape.put(e.getKey(), settings);
      }
    }
    String webFile = text(top, "webConfigFile", null, "");
    WebConfig web = webFile == null ? null : WebConfig.read(baseDir.resolve(webFile));
    CostsConfig costs = CostsConfig.parse(top.get("costs"), baseDir);
    HandoverConfig handover = HandoverConfig.parse(top.get("handover"));
    return new ServerConfig(
        listen, strategy, refresh, timeout, List.copyOf(sources), collectors, scrape, web, costs, handover);
  }

  private static StrategyConfig strategy(JsonNode s) throws ConfigException {
    if (s == null || s.isNull()) {
      return StrategyConfig.named(Allocators.DEFAULT_STRATEGY);
    }
    if (s.isTextual()) {
      return checked(StrategyConfig.named(s.asText()));
    }
    ObjectNode so = object(s, "strategy");
    String at = "strategy";
    keys(
        so,
        "strategy",
        "name",
        "fallback",
        "loadFactor",
        "zoneAware",
        "partitionBy",
        "maxSkew",
        "maxTargetsPerCollector",
        "maxCostPerCollector",
        "movedShareWarning",
        "replicas");
    String name = text(so, "name", Allocators.DEFAULT_STRATEGY, at);
    String fallback = null;
    JsonNode f = so.get("fallback");
    if (f != null) {
      fallback = f.isNull() ? "" : scalar(f, "strategy.fallback");
    }
    Double loadFactor = number(so, "loadFactor", at, "a number greater than 1");
    if (loadFactor != null && !(loadFactor > 1)) {
      throw new ConfigException("strategy.loadFactor: must be a number greater than 1");
    }
    String partitionBy = null;
    JsonNode za = so.get("zoneAware");
    JsonNode pb = so.get("partitionBy");
    if (za != null && pb != null) {
      throw new ConfigException("strategy.partitionBy: give zoneAware or partitionBy, not both");
    }
    if (za != null) {
      if (!za.isBoolean()) {
        throw new ConfigException("strategy.zoneAware: must be true or false");
      }
      partitionBy = za.asBoolean() ? Allocators.ZONE : "";
    }
    if (pb != null) {
      partitionBy = pb.isNull() ? "" : scalar(pb, "strategy.partitionBy");
    }
    Double maxSkew = number(so, "maxSkew", at, "a number, 1 or more");
    Long maxTargets = whole(so, "maxTargetsPerCollector", at, Integer.MAX_VALUE);
    Long maxCost = whole(so, "maxCostPerCollector", at, Long.MAX_VALUE);
    Double moved = number(so, "movedShareWarning", at, "a number from 0 to 1");
    Long replicas = whole(so, "replicas", at, AllocatorSpec.MAX_REPLICAS);
    return checked(
        new StrategyConfig(
            name,
            fallback,
            loadFactor,
            partitionBy,
            maxSkew,
            maxTargets == null ? null : Math.toIntExact(maxTargets),
            maxCost,
            moved,
            replicas == null ? null : Math.toIntExact(replicas)));
  }

  /** Fails at load time for an unknown strategy or an option the strategy refuses. */
  private static StrategyConfig checked(StrategyConfig c) throws ConfigException {
    if (!Allocators.strategies().contains(c.name())) {
      throw new ConfigException(
          "strategy: unknown strategy '" + c.name() + "'; known: " + Allocators.strategies());
    }
    Allocators.Builder b = c.builder();
    try {
      b.build();
    } catch (IllegalArgumentException e) {
      throw new ConfigException("strategy: " + e.getMessage());
    }
    return c;
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
        keys(f, where, "job", "files");
        String job = required(f, "job", where);
        JsonNode files = f.get("files");
        if (files == null || !files.isArray() || files.isEmpty()) {
          throw new ConfigException(where + ".files: must be a non-empty list of paths");
        }
        List<Path> paths = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
          JsonNode p = files.get(i);
          String pat = where + ".files[" + i + "]";
          if (!p.isTextual() || p.asText().isBlank()) {
            throw new ConfigException(pat + ": must be a path");
          }
          noControlCharacters(p.asText(), pat);
          paths.add(filePattern(baseDir, p.asText(), pat));
        }
        return new FileSd(job, List.copyOf(paths));
      }
      case "httpSd" -> {
        ObjectNode h = object(o.get(kind), where);
        keys(h, where, "job", "url", "basic_auth", "authorization", "tls_config", "secret_params");
        return new HttpSd(
            required(h, "job", where),
            url(required(h, "url", where), where + ".url"),
            HttpClientOptions.parse(h, where, baseDir),
            secretParams(h, where));
      }
      case "prometheus" -> {
        ObjectNode p = object(o.get(kind), where);
        keys(p, where, "url", "basic_auth", "authorization", "tls_config", "secret_params");
        return new PrometheusApi(
            url(required(p, "url", where), where + ".url"),
            HttpClientOptions.parse(p, where, baseDir),
            secretParams(p, where));
      }
      default -> throw new ConfigException(at + ": unknown source '" + kind + "' (fileSd, httpSd, prometheus)");
    }
  }

  /** The query parameters a source's config marks secret ({@code secret_params: [sig]}). */
  private static Set<String> secretParams(ObjectNode o, String at) throws ConfigException {
    JsonNode n = o.get("secret_params");
    if (n == null || n.isNull()) {
      return Set.of();
    }
    if (!n.isArray()) {
      throw new ConfigException(at + ".secret_params: must be a list of query parameter names");
    }
    Set<String> out = new java.util.TreeSet<>();
    for (int i = 0; i < n.size(); i++) {
      out.add(scalar(n.get(i), at + ".secret_params[" + i + "]"));
    }
    return Set.copyOf(out);
  }

  /**
   * A file SD path resolved against the config's folder; a glob in its last element is compiled
   * here, so that a bad one is a config error rather than a failure at every refresh.
   */
  private static Path filePattern(Path baseDir, String s, String at) throws ConfigException {
    Path p;
    try {
      p = baseDir.resolve(s).normalize();
    } catch (InvalidPathException e) {
      throw new ConfigException(at + ": not a path: " + oneLine(e.getMessage()));
    }
    Path name = p.getFileName();
    Path parent = p.getParent();
    if (parent != null && FileSdSource.isGlob(parent.toString())) {
      throw new ConfigException(at + ": a glob only in the last path element, as in Prometheus: " + LogSafe.text(s));
    }
    if (name != null && !FileSdSource.isGlob(name.toString()) && Files.exists(p) && !Files.isRegularFile(p)) {
      throw new ConfigException(at + ": not a regular file (a directory, a FIFO or a device): " + LogSafe.text(s));
    }
    if (name != null && FileSdSource.isGlob(name.toString())) {
      try {
        PathMatcher unused = FileSystems.getDefault().getPathMatcher("glob:" + name);
      } catch (PatternSyntaxException e) {
        throw new ConfigException(at + ": bad glob '" + name + "': " + oneLine(e.getDescription()));
      } catch (IllegalArgumentException | UnsupportedOperationException e) {
        throw new ConfigException(at + ": bad glob '" + name + "': " + oneLine(e.getMessage()));
      }
    }
    return p;
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
          throw new ConfigException(where + ": must be a non-empty list of names or {name, node, ...}");
        }
        List<Collector> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < list.size(); i++) {
          String at = where + "[" + i + "]";
          JsonNode e = list.get(i);
          Collector col;
          if (e.isTextual()) {
            col = collector(e.asText(), null, null, at);
          } else {
            ObjectNode o = object(e, at);
            keys(o, at, "name", "node", "zone", "capacity", "labels");
            col = collector(required(o, "name", at), text(o, "node", null, at), text(o, "zone", null, at), at);
            Double capacity = number(o, "capacity", at, "a number greater than 0");
            if (capacity != null) {
              if (!(capacity > 0)) {
                throw new ConfigException(at + ".capacity: must be a number greater than 0");
              }
              col = col.withCapacity(capacity);
            }
            JsonNode l = o.get("labels");
            if (l != null && !l.isNull()) {
              Map<String, String> labels = new LinkedHashMap<>();
              for (Map.Entry<String, JsonNode> le : object(l, at + ".labels").properties()) {
                labels.put(le.getKey(), scalar(le.getValue(), at + ".labels." + le.getKey()));
              }
              try {
                col = col.withLabels(labels);
              } catch (IllegalArgumentException ex) {
                throw new ConfigException(at + ".labels: " + ex.getMessage());
              }
            }
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
        keys(k, where, "namespace", "labelSelector", "notReadyGracePeriod", "readyFirst", "nodeZones", "capacityFromMemoryRequest");
        return new KubernetesCollectors(
            required(k, "namespace", where),
            required(k, "labelSelector", where),
            durationOrZero(text(k, "notReadyGracePeriod", "30s", where), where + ".notReadyGracePeriod"),
            bool(k, "readyFirst", true, where),
            bool(k, "nodeZones", false, where),
            bool(k, "capacityFromMemoryRequest", false, where));
      }
      case "polls" -> {
        JsonNode p = c.get(kind);
        ObjectNode o = p.isNull() ? TargetGroups.JSON.createObjectNode() : object(p, where);
        keys(o, where, "expireAfter", "expected", "allow");
        Duration expire =
            duration(text(o, "expireAfter", null, where), where + ".expireAfter", refresh.multipliedBy(3));
        JsonNode ex = o.get("expected");
        int expected = 0;
        if (ex != null) {
          if (!ex.canConvertToInt() || !ex.isIntegralNumber() || ex.asInt() < 0) {
            throw new ConfigException(where + ".expected: must be a whole number, 0 or more");
          }
          expected = ex.asInt();
        }
        String allow = text(o, "allow", null, where);
        if (allow != null) {
          try {
            PollMembership.compileAllow(allow);
          } catch (IllegalArgumentException e) {
            throw new ConfigException(where + ".allow: bad regular expression: " + oneLine(e.getMessage()));
          }
        }
        return new PollCollectors(expire, expected, allow);
      }
      default -> throw new ConfigException("collectors: unknown kind '" + kind + "' (static, kubernetes, polls)");
    }
  }

  private static Collector collector(String name, String node, String zone, String at)
      throws ConfigException {
    noControlCharacters(name, at);
    try {
      return Collector.of(name, node, zone);
    } catch (IllegalArgumentException e) {
      throw new ConfigException(at + ": " + e.getMessage());
    }
  }
}
