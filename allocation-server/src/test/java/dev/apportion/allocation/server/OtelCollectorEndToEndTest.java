package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole path with the client this protocol exists for: real OpenTelemetry Collector processes
 * (built from {@code src/test/otelcol}: the contrib Prometheus receiver and the OTLP/HTTP
 * exporter) whose receivers read their targets through {@code target_allocator} from the service
 * in process. Nothing is read from the service to decide what a collector did: the targets are
 * small HTTP servers that record every scrape (which collector, by a header each collector's
 * receiver sends; which path; which query), and each collector exports what it scraped as OTLP
 * JSON to a sink in the test.
 *
 * <p>Two set-ups run side by side, so their start-up waits overlap:
 *
 * <ul>
 *   <li><b>shared</b>: {@code consistent-hashing}, collectors known from their polls (strict: 3
 *       expected, names allowed by a pattern), served over HTTPS with client certificates
 *       required; jobs with awkward names (slashes, spaces, {@code +}, {@code %}, non-ASCII) and
 *       per-job settings in {@code scrapeConfigs}; one collector stops and one joins;
 *   <li><b>per-node</b>: {@code per-node}, three static collectors on three nodes, plain HTTP.
 * </ul>
 *
 * <p>Timing. A receiver reads {@code /scrape_configs} every {@link #TA_INTERVAL} and each job's
 * targets every {@link #SD_REFRESH} ({@code http_sd_config.refresh_interval}). Between an answer
 * and a scrape the receiver's Prometheus libraries add up to 5 s (their discovery manager sends
 * updates at most every 5 s) and up to 5 s more (their scrape manager applies them at most every
 * 5 s), then the scrape's offset within its interval.
 *
 * <p>When the collector binary is missing the test fails if the environment variable {@code CI}
 * is set ({@code .ci/run} builds it) and is skipped otherwise.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OtelCollectorEndToEndTest {
  /** The environment variable that names the collector binary ({@code .ci/run} sets it). */
  static final String BINARY_VARIABLE = "APPORTION_OTELCOL";

  /** The receivers' {@code target_allocator.interval}: how often they read {@code /scrape_configs}. */
  static final Duration TA_INTERVAL = Duration.ofSeconds(15);

  /** The receivers' {@code http_sd_config.refresh_interval}: how often they ask for a job's targets. */
  static final Duration SD_REFRESH = Duration.ofSeconds(2);

  /** How far back "scrapes now" looks: more than the longest scrape interval served (3 s). */
  static final Duration WINDOW = Duration.ofSeconds(4);

  /** The header each collector's receiver sends with its scrapes, naming the collector. */
  static final String WHO = "X-Apportion-Collector";

  static final String PLAIN = "plain";
  static final String TUNED = "tuned";

  /** Jobs whose names a URL path must carry escaped; the last one also has settings. */
  static final List<String> AWKWARD =
      List.of("team/api", "with space", "c++", "100%", "ünï/ジョブ", "a/b c+d%e é");

  static final String NODE_JOB = "node/exporter é";
  static final List<String> NODES = List.of("node-a", "node-b", "node-c");

  private Path dir;
  private String binary;
  private HttpServer sink;
  private final Map<String, Exported> exported = new ConcurrentHashMap<>();
  private final List<ScrapeTarget> sharedTargets = new ArrayList<>();
  private final List<ScrapeTarget> perNodeTargets = new ArrayList<>();
  private Service shared;
  private Service perNode;
  private final Map<String, Otelcol> sharedCollectors = new TreeMap<>();
  private final Map<String, Otelcol> perNodeCollectors = new TreeMap<>();

  @BeforeAll
  void start(@TempDir Path tmp) throws Exception {
    this.dir = tmp;
    this.binary = collectorBinary();
    sink = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    sink.createContext("/c/", this::export);
    sink.start();

    // Shared set-up: file SD files per job; the SD groups carry team=sd, the targets expose
    // team=exposed, so honor_labels decides which one a series keeps.
    StringBuilder sources = new StringBuilder();
    int file = 0;
    sources.append(fileSource(PLAIN, targets(sharedTargets, PLAIN, 6, null), file++));
    sources.append(fileSource(TUNED, targets(sharedTargets, TUNED, 3, null), file++));
    for (String job : AWKWARD) {
      sources.append(fileSource(job, targets(sharedTargets, job, 2, null), file++));
    }
    Certs.make(dir, "server", "localhost");
    Certs.make(dir, "otelcol", "otelcol");
    Files.writeString(
        dir.resolve("web.yml"),
        """
        tls_server_config:
          cert_file: server.crt
          key_file: server.key
          client_auth_type: RequireAndVerifyClientCert
          client_ca_file: otelcol.crt
        """);
    Path sharedConfig = dir.resolve("shared.yaml");
    Files.writeString(
        sharedConfig,
        """
        listen: 127.0.0.1:0
        webConfigFile: web.yml
        strategy: consistent-hashing
        refreshInterval: 1s
        targets:
        %s
        collectors:
          polls: {expireAfter: 6s, expected: 3, allow: 'otelcol-[0-9]+'}
        # jobs without a scrape_interval of their own are scraped every second: the handover's
        # hold of a moved target follows it (by default a minute, Prometheus's default interval)
        handover: {scrapeInterval: 1s}
        scrapeConfigs:
          %s: {scrape_interval: 1s}
          %s:
            scrape_interval: 3s
            metrics_path: /custom/metrics
            params: {module: [probe], target: ['a b&c']}
            honor_labels: true
          %s: {metrics_path: /awkward}
        """
            .formatted(sources, PLAIN, TUNED, json(AWKWARD.get(AWKWARD.size() - 1))));
    shared = new Service(ServerConfig.read(sharedConfig)).start();

    // Per-node set-up: three targets on each of three nodes, one job with an awkward name.
    StringBuilder groups = new StringBuilder("[");
    for (String node : NODES) {
      List<ScrapeTarget> onNode = targets(perNodeTargets, NODE_JOB, 3, node);
      groups.append(groups.length() > 1 ? "," : "")
          .append("{\"labels\":{\"__meta_kubernetes_pod_node_name\":\"").append(node).append("\",\"team\":\"sd\"},\"targets\":[")
          .append(String.join(",", onNode.stream().map(t -> "\"" + t.address + "\"").toList()))
          .append("]}");
    }
    Files.writeString(dir.resolve("nodes.json"), groups.append("]"));
    Path perNodeConfig = dir.resolve("per-node.yaml");
    Files.writeString(
        perNodeConfig,
        """
        listen: 127.0.0.1:0
        strategy: {name: per-node, fallback: ''}
        refreshInterval: 1s
        targets:
          - fileSd: {job: %s, files: [nodes.json]}
        collectors:
          static:
            - {name: otelcol-node-0, node: node-a}
            - {name: otelcol-node-1, node: node-b}
            - {name: otelcol-node-2, node: node-c}
        """
            .formatted(json(NODE_JOB)));
    perNode = new Service(ServerConfig.read(perNodeConfig)).start();

    for (int i = 0; i < 3; i++) {
      startShared("otelcol-" + i, SD_REFRESH);
      String name = "otelcol-node-" + i;
      perNodeCollectors.put(name, Otelcol.start(binary, dir, name, "http://127.0.0.1:" + perNode.port(), null, SD_REFRESH, sink()));
    }
  }

  @AfterAll
  void stop() {
    sharedCollectors.values().forEach(Otelcol::stop);
    perNodeCollectors.values().forEach(Otelcol::stop);
    if (shared != null) {
      shared.close();
    }
    if (perNode != null) {
      perNode.close();
    }
    if (sink != null) {
      sink.stop(0);
    }
    sharedTargets.forEach(t -> t.server.stop(0));
    perNodeTargets.forEach(t -> t.server.stop(0));
  }

  @Test
  @Order(1)
  void threeCollectorsOverTlsScrapeEveryTargetOnceWithTheServedSettings() {
    long t0 = System.nanoTime();
    awaitSplit(shared, sharedTargets, sharedCollectors, Duration.ofSeconds(45));
    System.out.printf(
        "otel e2e: three collectors over TLS scrape the snapshot's split of %d targets in %d jobs after %d ms%n",
        sharedTargets.size(), 2 + AWKWARD.size(), (System.nanoTime() - t0) / 1_000_000);
    assertExported(shared, sharedCollectors.keySet());
    // The settings from /scrape_configs: path and params, per job.
    for (ScrapeTarget t : sharedTargets) {
      for (Scrape s : t.scrapes) {
        String path =
            t.job.equals(TUNED) ? "/custom/metrics" : t.job.equals(AWKWARD.get(AWKWARD.size() - 1)) ? "/awkward" : "/metrics";
        assertEquals(path, s.path, t + " scraped at " + s.path);
        assertEquals(t.job.equals(TUNED) ? "module=probe&target=a+b%26c" : null, s.query, t + " query");
      }
    }
    // honor_labels: the tuned job keeps what the target exposes, the others keep the SD label.
    awaitExportedLabels(Duration.ofSeconds(10));
  }

  @Test
  @Order(2)
  void perNodeEachCollectorScrapesExactlyItsNodesTargets() {
    awaitSplit(perNode, perNodeTargets, perNodeCollectors, Duration.ofSeconds(45));
    Map<String, String> nodeOf = Map.of("otelcol-node-0", "node-a", "otelcol-node-1", "node-b", "otelcol-node-2", "node-c");
    long since = System.nanoTime() - WINDOW.toNanos();
    for (ScrapeTarget t : perNodeTargets) {
      Set<String> by = t.scrapersSince(since);
      assertEquals(1, by.size(), t + " scraped by " + by);
      assertEquals(t.node, nodeOf.get(by.iterator().next()), t + " scraped by " + by);
    }
    assertExported(perNode, perNodeCollectors.keySet());
  }

  @Test
  @Order(3)
  void aCollectorThatJoinsScrapesWithinOneReceiverIntervalAndLeavingAndJoiningReSplit() throws IOException {
    awaitSplit(shared, sharedTargets, sharedCollectors, Duration.ofSeconds(45));
    // A collector with the receiver's default refresh (30 s): had its first poll been answered
    // with nothing, it would ask again only 30 s later. It expires soon after (its polls are
    // further apart than the service's expiry window), so it is stopped once it has scraped.
    joinTime("otelcol-3", null);
    sharedCollectors.remove("otelcol-3").stop();

    Otelcol gone = sharedCollectors.remove("otelcol-2");
    gone.stop();
    long stopped = System.nanoTime();
    awaitSplit(shared, sharedTargets, sharedCollectors, Duration.ofSeconds(45));
    System.out.printf(
        "otel e2e: otelcol-2 stopped; the two others scrape every target, each once, %d ms later%n",
        (System.nanoTime() - stopped) / 1_000_000);

    long joined = System.nanoTime();
    joinTime("otelcol-4", SD_REFRESH);
    awaitSplit(shared, sharedTargets, sharedCollectors, Duration.ofSeconds(45));
    System.out.printf(
        "otel e2e: otelcol-4 joined; the three scrape every target, each once, %d ms after it started%n",
        (System.nanoTime() - joined) / 1_000_000);
    assertExported(shared, sharedCollectors.keySet());

    // The scrape intervals served: 1 s for the plain job, 3 s for the tuned one (median gap
    // between one collector's consecutive scrapes of a target, over the whole run).
    double plain = medianGapSeconds(PLAIN);
    double tuned = medianGapSeconds(TUNED);
    System.out.printf("otel e2e: median scrape gap: %s %.2f s, %s %.2f s%n", PLAIN, plain, TUNED, tuned);
    assertTrue(plain > 0.8 && plain < 1.3, "plain job scraped every " + plain + " s, not 1 s");
    assertTrue(tuned > 2.7 && tuned < 3.4, "tuned job scraped every " + tuned + " s, not 3 s");
  }

  /**
   * Starts {@code name}, prints how long after its start it first scraped a target and asserts
   * that this is at most one receiver interval.
   */
  private void joinTime(String name, Duration sdRefresh) throws IOException {
    long started = System.nanoTime();
    startShared(name, sdRefresh);
    long first = -1;
    while (first < 0 && System.nanoTime() - started < Duration.ofSeconds(45).toNanos()) {
      PrometheusEndToEndTest.sleep(100);
      first = sharedTargets.stream().mapToLong(t -> t.firstScrapeBy(name)).filter(at -> at >= 0).min().orElse(-1);
    }
    assertTrue(first >= 0, name + " never scraped: " + sharedCollectors.get(name).state());
    long millis = (first - started) / 1_000_000;
    System.out.printf(
        "otel e2e: %s (targets refreshed every %s) started; its first scrape %d ms later (receiver interval %d s)%n",
        name, sdRefresh == null ? "30 s, the default" : sdRefresh.toSeconds() + " s", millis, TA_INTERVAL.toSeconds());
    assertTrue(
        first - started <= TA_INTERVAL.toNanos(),
        name + " scraped its first target " + millis + " ms after it started, more than one receiver interval");
  }

  // ---- set-up ----

  private void startShared(String name, Duration sdRefresh) throws IOException {
    sharedCollectors.put(name, Otelcol.start(binary, dir, name, "https://127.0.0.1:" + shared.port(), dir, sdRefresh, sink()));
  }

  private String sink() {
    return "http://127.0.0.1:" + sink.getAddress().getPort() + "/c/";
  }

  /** {@code count} new targets of {@code job} (on {@code node}, or none), appended to {@code all}. */
  private static List<ScrapeTarget> targets(List<ScrapeTarget> all, String job, int count, String node) throws IOException {
    List<ScrapeTarget> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      ScrapeTarget t = new ScrapeTarget(job, node);
      all.add(t);
      out.add(t);
    }
    return out;
  }

  /** One file SD source for {@code job} holding {@code targets}, as a line of the config. */
  private String fileSource(String job, List<ScrapeTarget> targets, int n) throws IOException {
    String file = "job-" + n + ".json";
    Files.writeString(
        dir.resolve(file),
        "[{\"labels\":{\"team\":\"sd\"},\"targets\":["
            + String.join(",", targets.stream().map(t -> "\"" + t.address + "\"").toList())
            + "]}]");
    return "  - fileSd: {job: " + json(job) + ", files: [" + file + "]}\n";
  }

  /** A YAML double-quoted scalar (JSON's string syntax): safe for every name used here. */
  static String json(String s) {
    try {
      return TargetGroups.JSON.writeValueAsString(s);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  // ---- what the collectors did ----

  /** Each target's owner in the service's snapshot, as "job address" to collector name. */
  private static Map<String, String> owners(Allocation snapshot) {
    Map<String, String> out = new TreeMap<>();
    for (Collector c : snapshot.collectors()) {
      for (String key : PrometheusEndToEndTest.expected(snapshot, c.name())) {
        out.put(key, c.name());
      }
    }
    return out;
  }

  /**
   * Waits until the snapshot holds exactly {@code collectors}, places every target, and every
   * target was scraped within the last {@link #WINDOW} by exactly its owner.
   */
  private void awaitSplit(Service service, List<ScrapeTarget> targets, Map<String, Otelcol> collectors, Duration timeout) {
    PrometheusEndToEndTest.await(
        timeout,
        () -> splitHolds(service, targets, collectors.keySet()),
        () -> "the collectors did not converge on the snapshot: " + describe(service, targets, collectors));
  }

  private static boolean splitHolds(Service service, List<ScrapeTarget> targets, Set<String> collectors) {
    Allocation snapshot = service.allocator().snapshot();
    Set<String> names = new TreeSet<>();
    snapshot.collectors().forEach(c -> names.add(c.name()));
    if (!names.equals(collectors) || !snapshot.unassigned().isEmpty()) {
      return false;
    }
    Map<String, String> owners = owners(snapshot);
    long since = System.nanoTime() - WINDOW.toNanos();
    for (ScrapeTarget t : targets) {
      String owner = owners.get(t.key());
      if (owner == null || !t.scrapersSince(since).equals(Set.of(owner))) {
        return false;
      }
    }
    return true;
  }

  private static String describe(Service service, List<ScrapeTarget> targets, Map<String, Otelcol> collectors) {
    Allocation snapshot = service.allocator().snapshot();
    Map<String, String> owners = owners(snapshot);
    long since = System.nanoTime() - WINDOW.toNanos();
    Map<String, Object> out = new TreeMap<>();
    for (ScrapeTarget t : targets) {
      out.put(t.key(), "owner " + owners.get(t.key()) + ", scraped by " + t.scrapersSince(since));
    }
    out.put("collectors", snapshot.collectors());
    out.put("unassigned", snapshot.unassigned().size());
    collectors.forEach((name, c) -> out.put("process " + name, c.state()));
    return out.toString();
  }

  /** Every collector exported, within the window, exactly its share of the snapshot. */
  private void assertExported(Service service, Set<String> collectors) {
    Map<String, String> owners = owners(service.allocator().snapshot());
    PrometheusEndToEndTest.await(
        Duration.ofSeconds(10),
        () -> {
          long since = System.nanoTime() - WINDOW.toNanos();
          for (String c : collectors) {
            Set<String> want = new TreeSet<>();
            owners.forEach((key, owner) -> {
              if (owner.equals(c)) {
                want.add(key);
              }
            });
            if (!exportedBy(c).keysSince(since).equals(want)) {
              return false;
            }
          }
          return true;
        },
        () -> {
          long since = System.nanoTime() - WINDOW.toNanos();
          Map<String, Object> out = new TreeMap<>();
          collectors.forEach(c -> out.put(c, exportedBy(c).keysSince(since)));
          return "the exports do not match the snapshot " + owners + ": " + out;
        });
  }

  private void awaitExportedLabels(Duration timeout) {
    PrometheusEndToEndTest.await(
        timeout,
        () -> {
          Map<String, Map<String, String>> labels = new TreeMap<>();
          exported.values().forEach(e -> labels.putAll(e.labels));
          for (ScrapeTarget t : sharedTargets) {
            Map<String, String> l = labels.get(t.key());
            if (l == null) {
              return false;
            }
            Map<String, String> want =
                t.job.equals(TUNED) ? Map.of("team", "exposed") : Map.of("team", "sd", "exported_team", "exposed");
            if (!l.equals(want)) {
              fail(t + " exported with " + l + ", expected " + want);
            }
          }
          return true;
        },
        () -> "not every target's series was exported");
  }

  private Exported exportedBy(String collector) {
    return exported.computeIfAbsent(collector, c -> new Exported());
  }

  private double medianGapSeconds(String job) {
    List<Long> gaps = new ArrayList<>();
    for (ScrapeTarget t : sharedTargets) {
      if (!t.job.equals(job)) {
        continue;
      }
      Map<String, Long> last = new TreeMap<>();
      for (Scrape s : t.scrapes) {
        Long before = last.put(s.collector, s.at);
        if (before != null) {
          gaps.add(s.at - before);
        }
      }
    }
    assertFalse(gaps.isEmpty(), job + " was never scraped twice");
    Collections.sort(gaps);
    return gaps.get(gaps.size() / 2) / 1e9;
  }

  /** The OTLP/HTTP sink: {@code POST /c/{collector}} with an ExportMetricsServiceRequest in JSON. */
  private void export(HttpExchange ex) throws IOException {
    try {
      String collector = ex.getRequestURI().getPath().substring("/c/".length());
      JsonNode body = TargetGroups.JSON.readTree(ex.getRequestBody());
      long now = System.nanoTime();
      Exported e = exportedBy(collector);
      for (JsonNode rm : body.path("resourceMetrics")) {
        Map<String, String> resource = attributes(rm.path("resource").path("attributes"));
        String key = resource.get("service.name") + " " + resource.get("service.instance.id");
        for (JsonNode sm : rm.path("scopeMetrics")) {
          for (JsonNode m : sm.path("metrics")) {
            if (!m.path("name").asText().equals("apportion_e2e_target")) {
              continue;
            }
            for (JsonNode dp : m.path("gauge").path("dataPoints")) {
              if ((dp.path("flags").asInt() & 1) == 0) { // 1: no recorded value (a stale marker)
                e.last.put(key, now);
                e.labels.put(key, attributes(dp.path("attributes")));
              }
            }
          }
        }
      }
      byte[] ok = "{}".getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", "application/json");
      ex.sendResponseHeaders(200, ok.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(ok);
      }
    } finally {
      ex.close();
    }
  }

  private static Map<String, String> attributes(JsonNode list) {
    Map<String, String> out = new TreeMap<>();
    for (JsonNode a : list) {
      out.put(a.path("key").asText(), a.path("value").path("stringValue").asText());
    }
    return out;
  }

  /** What one collector exported: when each "job address" last had a sample, and its labels. */
  private static final class Exported {
    final Map<String, Long> last = new ConcurrentHashMap<>();
    final Map<String, Map<String, String>> labels = new ConcurrentHashMap<>();

    Set<String> keysSince(long since) {
      Set<String> out = new TreeSet<>();
      last.forEach((k, at) -> {
        if (at >= since) {
          out.add(k);
        }
      });
      return out;
    }
  }

  /** One scrape as the target saw it. */
  private record Scrape(String collector, String path, String query, long at) {}

  /** A target: an HTTP server on a loopback port that answers any path and records each scrape. */
  private static final class ScrapeTarget {
    final String job;
    final String node;
    final String address;
    final HttpServer server;
    final ConcurrentLinkedQueue<Scrape> scrapes = new ConcurrentLinkedQueue<>();

    ScrapeTarget(String job, String node) throws IOException {
      this.job = job;
      this.node = node;
      this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
      server.createContext(
          "/",
          ex -> {
            try {
              scrapes.add(
                  new Scrape(
                      String.valueOf(ex.getRequestHeaders().getFirst(WHO)),
                      ex.getRequestURI().getRawPath(),
                      ex.getRequestURI().getRawQuery(),
                      System.nanoTime()));
              byte[] body = "apportion_e2e_target{team=\"exposed\"} 1\n".getBytes(StandardCharsets.UTF_8);
              ex.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4");
              ex.sendResponseHeaders(200, body.length);
              try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
              }
            } finally {
              ex.close();
            }
          });
      server.start();
      this.address = "127.0.0.1:" + server.getAddress().getPort();
    }

    String key() {
      return job + " " + address;
    }

    Set<String> scrapersSince(long since) {
      Set<String> out = new TreeSet<>();
      for (Scrape s : scrapes) {
        if (s.at >= since) {
          out.add(s.collector);
        }
      }
      return out;
    }

    long firstScrapeBy(String collector) {
      for (Scrape s : scrapes) {
        if (s.collector.equals(collector)) {
          return s.at;
        }
      }
      return -1;
    }

    @Override
    public String toString() {
      return key();
    }
  }

  /**
   * The collector binary: {@value #BINARY_VARIABLE} if set, else {@code
   * ~/.cache/apportion-otelcol/otelcol} (where {@code .ci/run} builds it).
   */
  static String collectorBinary() {
    String named = System.getenv(BINARY_VARIABLE);
    Path p =
        named != null && !named.isBlank()
            ? Path.of(named)
            : Path.of(System.getProperty("user.home"), ".cache", "apportion-otelcol", "otelcol");
    String message =
        "no OpenTelemetry Collector binary at " + p + ": build it with (cd allocation-server/src/test/otelcol"
            + " && go build -o " + p + " .), as .ci/run does, or name one in " + BINARY_VARIABLE
            + ", to run the end-to-end test with the real collector";
    return ExternalBinaries.require(p, message);
  }

  /** One real collector process whose Prometheus receiver reads its targets from the service. */
  static final class Otelcol {
    final String name;
    final Process process;
    final Path log;

    private Otelcol(String name, Process process, Path log) {
      this.name = name;
      this.process = process;
      this.log = log;
    }

    /**
     * Starts {@code name} against the service at {@code endpoint}, with client certificates from
     * {@code tls} (null for plain HTTP), asking for each job's targets every {@code sdRefresh}
     * (null for the receiver's default), exporting to {@code sink + name}.
     */
    static Otelcol start(String binary, Path dir, String name, String endpoint, Path tls, Duration sdRefresh, String sink)
        throws IOException {
      Path home = Files.createDirectories(dir.resolve(name));
      Path config = home.resolve("otelcol.yaml");
      StringBuilder ta =
          new StringBuilder()
              .append("      endpoint: ").append(endpoint).append('\n')
              .append("      interval: ").append(TA_INTERVAL.toSeconds()).append("s\n")
              .append("      collector_id: ").append(name).append('\n')
              .append("      http_scrape_config:\n")
              .append("        http_headers: {").append(WHO).append(": {values: [").append(name).append("]}}\n");
      if (sdRefresh != null) {
        ta.append("      http_sd_config: {refresh_interval: ").append(sdRefresh.toSeconds()).append("s}\n");
      }
      if (tls != null) {
        ta.append("      tls: {ca_file: '%s', cert_file: '%s', key_file: '%s'}\n"
            .formatted(tls.resolve("server.crt"), tls.resolve("otelcol.crt"), tls.resolve("otelcol.key")));
      }
      Files.writeString(
          config,
          """
          receivers:
            prometheus:
              config:
                global: {scrape_interval: 1s, scrape_timeout: 1s}
                scrape_configs: []
              target_allocator:
          %sexporters:
            otlphttp:
              metrics_endpoint: %s%s
              encoding: json
              compression: none
          service:
            telemetry:
              metrics: {level: none}
            pipelines:
              metrics: {receivers: [prometheus], exporters: [otlphttp]}
          """
              .formatted(ta, sink, name));
      Path log = home.resolve("otelcol.log");
      Process p =
          new ProcessBuilder(binary, "--config=file:" + config)
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      return new Otelcol(name, p, log);
    }

    /** Whether the process is alive, and the last lines of its log: for failure messages. */
    String state() {
      String tail;
      try {
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        tail = String.join(" | ", lines.subList(Math.max(0, lines.size() - 4), lines.size()));
      } catch (IOException e) {
        tail = "(no log: " + e + ")";
      }
      return (process.isAlive() ? "alive" : "exited " + process.exitValue()) + ", log: " + tail;
    }

    void stop() {
      process.destroy();
      try {
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
