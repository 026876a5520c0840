package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.io.InputStream;
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
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

  /** A config error: its message is the one line Main prints. */
  static final class ConfigException extends Exception {
    private static final long serialVersionUID = 1L;

    ConfigException(String message) {
      super(message);
    }
  }

  /** The longest duration any key accepts: far beyond any sensible value, far below overflow. */
  static final Duration MAX_DURATION = Duration.ofDays(365);

  /**
   * The strategy and its options; a null option means the library's default. {@code partitionBy}
   * is {@link Allocators#ZONE} for {@code zoneAware: true}, {@code ""} for no partitioning.
   */
  record StrategyConfig(
      String name,
      String fallback,
      Double loadFactor,
      String partitionBy,
      Double maxSkew,
      Integer maxTargetsPerCollector,
      Long maxCostPerCollector,
      Double movedShareWarning) {

    static StrategyConfig named(String name) {
      return new StrategyConfig(name, null, null, null, null, null, null, null);
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

  /** {@code auth} is null for none (a password in the URL is sent as basic auth). */
  record HttpSd(String job, URI url, SourceAuth auth, SourceTls tls) implements SourceConfig {}

  /** {@code auth} and {@code tls} are null for none. */
  record PrometheusApi(URI url, SourceAuth auth, SourceTls tls) implements SourceConfig {}

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
    InetSocketAddress listen = address(text(top, "listen", "0.0.0.0:8080", ""), "listen");

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
        "strategy.",
        "name",
        "fallback",
        "loadFactor",
        "zoneAware",
        "partitionBy",
        "maxSkew",
        "maxTargetsPerCollector",
        "maxCostPerCollector",
        "movedShareWarning");
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
    return checked(
        new StrategyConfig(
            name,
            fallback,
            loadFactor,
            partitionBy,
            maxSkew,
            maxTargets == null ? null : Math.toIntExact(maxTargets),
            maxCost,
            moved));
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

  /** A finite number, or null when absent. */
  private static Double number(ObjectNode o, String key, String at, String what)
      throws ConfigException {
    JsonNode n = o.get(key);
    if (n == null) {
      return null;
    }
    if (!n.isNumber() || !Double.isFinite(n.asDouble())) {
      throw new ConfigException(
          at + (at.isEmpty() ? "" : ".") + key + ": must be " + what + ", not " + LogSafe.text(n.asText()));
    }
    return n.asDouble();
  }

  /** A whole number from 1 to {@code max}, or null when absent. */
  private static Long whole(ObjectNode o, String key, String at, long max) throws ConfigException {
    JsonNode n = o.get(key);
    if (n == null) {
      return null;
    }
    if (!n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() < 1 || n.asLong() > max) {
      throw new ConfigException(at + "." + key + ": must be a whole number from 1 to " + max);
    }
    return n.asLong();
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
        keys(h, where + ".", "job", "url", "basic_auth", "authorization", "tls_config");
        return new HttpSd(
            required(h, "job", where),
            url(required(h, "url", where), where + ".url"),
            auth(h, where, baseDir),
            tls(h, where, baseDir));
      }
      case "prometheus" -> {
        ObjectNode p = object(o.get(kind), where);
        keys(p, where + ".", "url", "basic_auth", "authorization", "tls_config");
        return new PrometheusApi(
            url(required(p, "url", where), where + ".url"), auth(p, where, baseDir), tls(p, where, baseDir));
      }
      default -> throw new ConfigException(at + ": unknown source '" + kind + "' (fileSd, httpSd, prometheus)");
    }
  }

  /**
   * A source's {@code basic_auth} or {@code authorization} (Prometheus's HTTP client options), or
   * null; a credentials file is resolved against the config's folder and must be readable now.
   */
  private static SourceAuth auth(ObjectNode o, String at, Path baseDir) throws ConfigException {
    JsonNode basic = o.get("basic_auth");
    JsonNode authz = o.get("authorization");
    if (basic != null && authz != null) {
      throw new ConfigException(at + ".authorization: give basic_auth or authorization, not both");
    }
    if (basic != null) {
      String w = at + ".basic_auth";
      ObjectNode b = object(basic, w);
      keys(b, w + ".", "username", "password", "password_file");
      String user = required(b, "username", w);
      SourceAuth auth = new SourceAuth("Basic", user, text(b, "password", null, w), secretFile(b, "password", w, baseDir));
      if (auth.secret() == null && auth.secretFile() == null) {
        throw new ConfigException(w + ": give password or password_file");
      }
      return auth;
    }
    if (authz != null) {
      String w = at + ".authorization";
      ObjectNode a = object(authz, w);
      keys(a, w + ".", "type", "credentials", "credentials_file");
      String type = text(a, "type", "Bearer", w);
      if ("basic".equalsIgnoreCase(type)) {
        throw new ConfigException(w + ".type: use basic_auth for Basic");
      }
      SourceAuth auth = new SourceAuth(type, null, text(a, "credentials", null, w), secretFile(a, "credentials", w, baseDir));
      if (auth.secret() == null && auth.secretFile() == null) {
        throw new ConfigException(w + ": give credentials or credentials_file");
      }
      return auth;
    }
    return null;
  }

  /** A source's {@code tls_config}, or null; its files are loaded now so that a bad one is a config error. */
  private static SourceTls tls(ObjectNode o, String at, Path baseDir) throws ConfigException {
    JsonNode t = o.get("tls_config");
    if (t == null || t.isNull()) {
      return null;
    }
    String w = at + ".tls_config";
    ObjectNode tls = object(t, w);
    keys(tls, w + ".", "ca_file", "cert_file", "key_file");
    String ca = text(tls, "ca_file", null, w);
    String cert = text(tls, "cert_file", null, w);
    String key = text(tls, "key_file", null, w);
    if ((cert == null) != (key == null)) {
      throw new ConfigException(w + ": give cert_file and key_file together");
    }
    SourceTls s =
        new SourceTls(
            ca == null ? null : baseDir.resolve(ca),
            cert == null ? null : baseDir.resolve(cert),
            key == null ? null : baseDir.resolve(key));
    try {
      s.context();
    } catch (IOException | java.security.GeneralSecurityException e) {
      throw new ConfigException(w + ": " + LogSafe.text(oneLine(e.getMessage())));
    }
    return s;
  }

  private static Path secretFile(ObjectNode o, String key, String at, Path baseDir) throws ConfigException {
    String file = text(o, key + "_file", null, at);
    if (file == null) {
      return null;
    }
    if (o.get(key) != null) {
      throw new ConfigException(at + "." + key + "_file: give " + key + " or " + key + "_file, not both");
    }
    Path p = baseDir.resolve(file);
    if (!Files.isRegularFile(p) || !Files.isReadable(p)) {
      throw new ConfigException(at + "." + key + "_file: not a readable regular file: " + LogSafe.text(file));
    }
    return p;
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
            keys(o, at + ".", "name", "node", "zone", "capacity", "labels");
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
        keys(k, where + ".", "namespace", "labelSelector", "notReadyGracePeriod", "readyFirst", "nodeZones", "capacityFromMemoryRequest");
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
        keys(o, where + ".", "expireAfter", "expected", "allow");
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

  /** {@code at} is the path of the mapping {@code o} ("" at the top), for the error message. */
  private static String text(ObjectNode o, String key, String dflt, String at) throws ConfigException {
    JsonNode n = o.get(key);
    if (n == null || n.isNull()) {
      return dflt;
    }
    return scalar(n, at.isEmpty() ? key : at + "." + key);
  }

  private static String scalar(JsonNode n, String at) throws ConfigException {
    if (!n.isValueNode() || n.isNull()) {
      throw new ConfigException(at + ": must be a scalar");
    }
    String s = n.asText();
    noControlCharacters(s, at);
    return s;
  }

  /** Names and paths with NUL, ESC, newlines and the like are mistakes or attacks on a log line. */
  static void noControlCharacters(String s, String at) throws ConfigException {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)) {
        throw new ConfigException(at + ": contains a control character (U+" + String.format("%04X", (int) c) + ")");
      }
    }
  }

  private static boolean bool(ObjectNode o, String key, boolean dflt, String at) throws ConfigException {
    JsonNode n = o.get(key);
    if (n == null || n.isNull()) {
      return dflt;
    }
    if (!n.isBoolean()) {
      throw new ConfigException(at + "." + key + ": must be true or false");
    }
    return n.asBoolean();
  }

  private static String required(ObjectNode o, String key, String at) throws ConfigException {
    String v = text(o, key, null, at);
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
      throw new ConfigException(at + ": not a URL: " + oneLine(e.getMessage()));
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
    if (host.isEmpty()) {
      return new InetSocketAddress(port);
    }
    InetSocketAddress a = new InetSocketAddress(host, port);
    if (a.isUnresolved()) {
      throw new ConfigException(at + ": cannot resolve host '" + host + "'");
    }
    return a;
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
    String tooLong = at + ": longer than " + MAX_DURATION.toHours() + "h";
    long n;
    try {
      n = Long.parseLong(m.group(1));
    } catch (NumberFormatException e) {
      throw new ConfigException(tooLong);
    }
    long unitMillis =
        switch (m.group(2)) {
          case "ms" -> 1;
          case "s" -> 1_000;
          case "m" -> 60_000;
          default -> 3_600_000;
        };
    if (n > MAX_DURATION.toMillis() / unitMillis) {
      throw new ConfigException(tooLong);
    }
    return Duration.ofMillis(n * unitMillis);
  }

  private static String oneLine(String s) {
    if (s == null) {
      return "unreadable";
    }
    return s.replaceAll("\\s+", " ").trim();
  }
}
