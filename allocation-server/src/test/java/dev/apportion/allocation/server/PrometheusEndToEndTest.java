package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole path with real clients: the service in process, and real Prometheus 2.42 processes
 * (the Debian package) on loopback ports, each configured with nothing but {@code http_sd_configs}
 * pointing at the service for its own name. Everything is read back from each Prometheus's own
 * {@code /api/v1/targets}.
 *
 * <p>Two independent set-ups run side by side, so their start-up waits overlap:
 *
 * <ul>
 *   <li><b>shared</b>: {@code rendezvous}, collectors known from their polls (strict: 3 expected),
 *       targets from a file SD JSON file and an HTTP SD endpoint combined;
 *   <li><b>per-node</b>: {@code per-node}, three static collectors on three nodes, targets from a
 *       file SD YAML file whose groups carry the Kubernetes node label.
 * </ul>
 *
 * <p>Timing. The service answers from its new snapshot at once; a Prometheus then needs up to one
 * HTTP SD refresh interval to ask, and Prometheus 2.42 adds up to 5 s in its discovery manager (it
 * sends target-group updates at most every 5 s) and up to 5 s in its scrape manager (it applies
 * them at most every 5 s). Those 10 s are Prometheus's, fixed and not configurable in 2.42. So the
 * shared set-up's Prometheus processes refresh their HTTP SD every {@link #SD_REFRESH} = 10 s:
 * then "picked up within two refresh intervals" holds with no allowance, since one interval to
 * ask plus Prometheus's 10 s is two intervals. It is measured from the moment the stopped
 * Prometheus leaves the collector set; leaving itself takes the membership's expiry window after
 * its last poll, which must be longer than one refresh interval (a live member would otherwise
 * expire between two polls), so no bound counted from the stop itself can be two intervals.
 *
 * <p>When the {@code prometheus} binary is missing the test fails if the environment variable
 * {@code CI} is set ({@code .ci/run} installs the package) and is skipped otherwise.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PrometheusEndToEndTest {
  /**
   * The shared set-up's HTTP SD refresh interval: as long as Prometheus 2.42's own update throttles
   * (discovery manager 5 s, scrape manager 5 s), so that one interval to ask plus the throttles is
   * two intervals.
   */
  static final Duration SD_REFRESH = Duration.ofSeconds(10);
  /** The poll membership's expiry window: one SD refresh interval and a margin. */
  private static final Duration EXPIRE = Duration.ofSeconds(13);
  /** The bound: picked up within two refresh intervals of leaving the collector set. */
  private static final Duration CONVERGE = SD_REFRESH.multipliedBy(2);
  /** The per-node set-up's HTTP SD refresh interval, and both services' own refresh interval. */
  private static final Duration FAST_REFRESH = Duration.ofSeconds(1);
  private static final int TARGETS = 12;

  private Path dir;

  private final List<HttpServer> endpoints = new ArrayList<>();
  private final List<String> addresses = new ArrayList<>();
  private HttpServer httpSd;
  private Service shared;
  private Service perNode;
  private final List<Prom> sharedProms = new ArrayList<>();
  private final List<Prom> perNodeProms = new ArrayList<>();
  private final Map<String, String> nodeOf = new HashMap<>();

  @BeforeAll
  void start(@TempDir Path tmp) throws Exception {
    this.dir = tmp;
    String binary = prometheusBinary();
    for (int i = 0; i < TARGETS; i++) {
      HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
      int n = i;
      s.createContext(
          "/metrics",
          ex -> {
            byte[] body = ("apportion_e2e_target{n=\"" + n + "\"} 1\n").getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4");
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream out = ex.getResponseBody()) {
              out.write(body);
            }
          });
      s.start();
      endpoints.add(s);
      addresses.add("127.0.0.1:" + s.getAddress().getPort());
    }

    // Shared set-up: half the targets from file SD (JSON), half from HTTP SD.
    StringBuilder fileSd = new StringBuilder("[{\"labels\":{\"team\":\"files\"},\"targets\":[");
    StringBuilder httpSdBody = new StringBuilder("[{\"labels\":{\"team\":\"http\"},\"targets\":[");
    for (int i = 0; i < TARGETS; i++) {
      StringBuilder b = i % 2 == 0 ? fileSd : httpSdBody;
      b.append(b.charAt(b.length() - 1) == '[' ? "" : ",").append('"').append(addresses.get(i)).append('"');
    }
    fileSd.append("]}]");
    httpSdBody.append("]}]");
    Files.writeString(dir.resolve("targets.json"), fileSd);
    httpSd = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    byte[] sdBytes = httpSdBody.toString().getBytes(StandardCharsets.UTF_8);
    httpSd.createContext(
        "/sd",
        ex -> {
          ex.getResponseHeaders().set("Content-Type", "application/json");
          ex.sendResponseHeaders(200, sdBytes.length);
          try (OutputStream out = ex.getResponseBody()) {
            out.write(sdBytes);
          }
        });
    httpSd.start();
    Path sharedConfig = dir.resolve("shared.yaml");
    Files.writeString(
        sharedConfig,
        """
        listen: 127.0.0.1:0
        strategy: rendezvous
        refreshInterval: 1s
        targets:
          - fileSd: {job: files, files: [targets.json]}
          - httpSd: {job: http, url: 'http://127.0.0.1:%d/sd'}
        collectors:
          polls: {expireAfter: %ds, expected: 3}
        """
            .formatted(httpSd.getAddress().getPort(), EXPIRE.toSeconds()));
    shared = new Service(ServerConfig.read(sharedConfig)).start();

    // Per-node set-up: four targets on each of three nodes, through file SD (YAML).
    StringBuilder yaml = new StringBuilder();
    List<String> nodes = List.of("node-a", "node-b", "node-c");
    for (int n = 0; n < nodes.size(); n++) {
      yaml.append("- labels: {__meta_kubernetes_pod_node_name: ").append(nodes.get(n)).append("}\n  targets:\n");
      for (int i = n * 4; i < n * 4 + 4; i++) {
        yaml.append("    - '").append(addresses.get(i)).append("'\n");
        nodeOf.put(addresses.get(i), nodes.get(n));
      }
    }
    Files.writeString(dir.resolve("nodes.yaml"), yaml);
    // The per-node service serves HTTPS and requires a client certificate; its Prometheus
    // processes present one through tls_config in their http_sd_configs.
    Certs.make(dir, "server", "localhost");
    Certs.make(dir, "prometheus", "prometheus");
    Files.writeString(
        dir.resolve("web.yml"),
        """
        tls_server_config:
          cert_file: server.crt
          key_file: server.key
          client_auth_type: RequireAndVerifyClientCert
          client_ca_file: prometheus.crt
        """);
    Path perNodeConfig = dir.resolve("per-node.yaml");
    Files.writeString(
        perNodeConfig,
        """
        listen: 127.0.0.1:0
        webConfigFile: web.yml
        strategy: {name: per-node, fallback: ''}
        refreshInterval: 1s
        targets:
          - fileSd: {job: node-local, files: ['nodes.yaml']}
        collectors:
          static:
            - {name: prom-node-0, node: node-a}
            - {name: prom-node-1, node: node-b}
            - {name: prom-node-2, node: node-c}
        """);
    perNode = new Service(ServerConfig.read(perNodeConfig)).start();

    for (int i = 0; i < 3; i++) {
      sharedProms.add(Prom.start(binary, dir, "prom-" + i, shared.port(), SD_REFRESH, null));
      perNodeProms.add(Prom.start(binary, dir, "prom-node-" + i, perNode.port(), FAST_REFRESH, dir));
    }
  }

  @AfterAll
  void stop() {
    for (Prom p : sharedProms) {
      p.stop();
    }
    for (Prom p : perNodeProms) {
      p.stop();
    }
    if (shared != null) {
      shared.close();
    }
    if (perNode != null) {
      perNode.close();
    }
    if (httpSd != null) {
      httpSd.stop(0);
    }
    for (HttpServer s : endpoints) {
      s.stop(0);
    }
  }

  @Test
  @Order(1)
  void everyTargetIsScrapedByExactlyOnePrometheusAsTheSnapshotSays() {
    long t0 = System.nanoTime();
    await(
        Duration.ofSeconds(45),
        () -> shared.allocator().snapshot().collectors().size() == 3 && matches(shared, sharedProms, true),
        () -> "the Prometheus processes did not converge on the snapshot: " + describe(shared, sharedProms));
    System.out.printf(
        "e2e: three Prometheus processes scrape the snapshot's split, every target up, after %d ms%n",
        (System.nanoTime() - t0) / 1_000_000);
    Map<String, Integer> owners = new HashMap<>();
    for (Prom p : sharedProms) {
      for (String key : p.active().keySet()) {
        owners.merge(key, 1, Integer::sum);
      }
    }
    assertEquals(TARGETS, owners.size(), "every target is scraped: " + owners);
    owners.forEach((k, n) -> assertEquals(1, n, k + " is scraped by " + n + " Prometheus processes"));
    // The split is a split. Not "every Prometheus holds targets": the ports are ephemeral, so the
    // targets' hashes are random, and rendezvous leaves one of three collectors without any of 12
    // targets in about 2.2% of runs (3 x (2/3)^12; 442 of 20,000 simulated port draws); two empty
    // ones would take 3 x (1/3)^12, about 6 in a million.
    long holding = sharedProms.stream()
        .filter(p -> !expected(shared.allocator().snapshot(), p.name).isEmpty())
        .count();
    assertTrue(holding >= 2, "the targets are split between at least two Prometheus processes: " + describe(shared, sharedProms));
  }

  @Test
  @Order(2)
  void whenOnePrometheusStopsItsTargetsMoveToTheOthers() {
    await(Duration.ofSeconds(45), () -> matches(shared, sharedProms, false), () -> describe(shared, sharedProms));
    // The one that stops is one that holds targets (the last such), so that something moves.
    Prom gone = null;
    for (Prom p : sharedProms) {
      if (!expected(shared.allocator().snapshot(), p.name).isEmpty()) {
        gone = p;
      }
    }
    assertNotNull(gone, "a Prometheus holds targets");
    Prom leaving = gone;
    List<Prom> survivors = sharedProms.stream().filter(p -> p != leaving).toList();
    Set<String> itsTargets = expected(shared.allocator().snapshot(), gone.name);
    gone.stop();
    long stopped = System.nanoTime();
    await(
        EXPIRE.plus(Duration.ofSeconds(5)),
        () -> shared.allocator().snapshot().collectors().stream().noneMatch(c -> c.name().equals(leaving.name)),
        () -> leaving.name + " did not leave the collector set");
    long left = System.nanoTime();
    assertEquals(
        survivors.stream().map(p -> Collector.of(p.name)).toList(),
        List.copyOf(shared.allocator().snapshot().collectors()));

    // Sample the survivors until they scrape the new split, tracking targets scraped twice.
    Map<String, Long> doubleSince = new HashMap<>();
    long longestDouble = 0;
    long deadline = left + CONVERGE.toNanos();
    long converged = -1;
    while (System.nanoTime() < deadline + Duration.ofSeconds(20).toNanos()) {
      Map<String, Integer> count = new HashMap<>();
      for (Prom p : survivors) {
        for (String key : p.active().keySet()) {
          count.merge(key, 1, Integer::sum);
        }
      }
      long now = System.nanoTime();
      for (String key : addressesKeys()) {
        if (count.getOrDefault(key, 0) > 1) {
          long since = doubleSince.computeIfAbsent(key, k -> now);
          longestDouble = Math.max(longestDouble, now - since);
        } else {
          doubleSince.remove(key);
        }
      }
      if (matches(shared, survivors, false)) {
        converged = now;
        break;
      }
      sleep(200);
    }
    assertTrue(converged > 0, "the survivors never scraped the new split: " + describe(shared, survivors));
    System.out.printf(
        "e2e: %s left the collector set %d ms after it stopped; the survivors scrape its %d targets"
            + " %d ms after it left; longest double scrape %d ms%n",
        gone.name,
        (left - stopped) / 1_000_000,
        itsTargets.size(),
        (converged - left) / 1_000_000,
        longestDouble / 1_000_000);
    assertTrue(
        converged - left <= CONVERGE.toNanos(),
        "the survivors took " + (converged - left) / 1_000_000 + " ms after " + gone.name
            + " left, more than two refresh intervals (" + CONVERGE.toSeconds() + " s)");
    assertTrue(
        longestDouble <= SD_REFRESH.toNanos(),
        "a target was scraped twice for " + longestDouble / 1_000_000 + " ms, more than one refresh interval");
  }

  @Test
  @Order(3)
  void perNodeEachPrometheusScrapesOnlyItsNodesTargets() {
    await(
        Duration.ofSeconds(45),
        () -> matches(perNode, perNodeProms, true),
        () -> "per-node did not converge: " + describe(perNode, perNodeProms));
    Map<String, String> nodeOfCollector =
        Map.of("prom-node-0", "node-a", "prom-node-1", "node-b", "prom-node-2", "node-c");
    for (Prom p : perNodeProms) {
      Map<String, JsonNode> active = p.active();
      assertEquals(4, active.size(), p.name + ": " + active.keySet());
      for (JsonNode t : active.values()) {
        String address = t.get("discoveredLabels").get("__address__").asText();
        assertEquals(nodeOfCollector.get(p.name), nodeOf.get(address), p.name + " scrapes " + address);
        assertEquals(
            nodeOfCollector.get(p.name),
            t.get("discoveredLabels").get("__meta_kubernetes_pod_node_name").asText());
        assertTrue(
            t.get("discoveredLabels").get("__meta_url").asText().startsWith("https://"),
            "discovered over HTTPS with a client certificate: " + t.get("discoveredLabels"));
      }
    }
  }

  // ---- helpers (CostEndToEndTest uses them too) ----

  private Set<String> addressesKeys() {
    Set<String> out = new HashSet<>();
    for (int i = 0; i < TARGETS; i++) {
      out.add((i % 2 == 0 ? "files" : "http") + " " + addresses.get(i));
    }
    return out;
  }

  /** The snapshot's targets of {@code collector}, as "job address". */
  static Set<String> expected(Allocation snapshot, String collector) {
    Set<String> out = new TreeSet<>();
    for (String job : snapshot.jobsFor(collector)) {
      for (Target t : snapshot.targetsFor(collector, job)) {
        out.add(job + " " + t.address());
      }
    }
    return out;
  }

  /** Whether every Prometheus scrapes exactly what the snapshot gives its name (and is up). */
  static boolean matches(Service service, List<Prom> proms, boolean requireUp) {
    Allocation snapshot = service.allocator().snapshot();
    if (snapshot.targets().isEmpty() || !snapshot.unassigned().isEmpty()) {
      return false;
    }
    for (Prom p : proms) {
      Map<String, JsonNode> active = p.active();
      if (!active.keySet().equals(expected(snapshot, p.name))) {
        return false;
      }
      if (requireUp && active.values().stream().anyMatch(t -> !"up".equals(t.path("health").asText()))) {
        return false;
      }
    }
    return true;
  }

  static String describe(Service service, List<Prom> proms) {
    Allocation snapshot = service.allocator().snapshot();
    Map<String, Object> out = new TreeMap<>();
    for (Prom p : proms) {
      out.put(p.name + " expected", expected(snapshot, p.name));
      out.put(p.name + " active", new TreeSet<>(p.active().keySet()));
      out.put(p.name + " process", p.state());
    }
    out.put("collectors", snapshot.collectors());
    return out.toString();
  }

  static void await(Duration timeout, BooleanSupplier condition, java.util.function.Supplier<String> message) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("after " + timeout.toSeconds() + " s: " + message.get());
      }
      sleep(200);
    }
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static String prometheusBinary() {
    return ExternalBinaries.require(
        "prometheus",
        "install the Debian package (apt-get install -y prometheus; .ci/run does it) to run the"
            + " end-to-end test with real Prometheus");
  }

  /**
   * A loopback port that is free now, below Linux's ephemeral range (32768-60999). A port from
   * that range (what binding port 0 gives) can be taken, between this check and Prometheus
   * binding it, by any outgoing connection on the machine (six Prometheus processes open many);
   * Prometheus then exits with "address already in use" and its test sees no targets.
   */
  static int freePort() throws IOException {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = 20_000 + ThreadLocalRandom.current().nextInt(12_000);
      try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        return s.getLocalPort();
      } catch (IOException taken) {
        // try another
      }
    }
    throw new IOException("no free loopback port found in 20000-31999");
  }

  /** One real Prometheus process, configured with only HTTP SD for its own name. */
  static final class Prom {
    final String name;
    final int port;
    final Process process;
    final Path log;

    private Prom(String name, int port, Process process, Path log) {
      this.name = name;
      this.port = port;
      this.process = process;
      this.log = log;
    }

    /** Over HTTP, listening on a free port. */
    static Prom start(String binary, Path dir, String name, int servicePort, Duration sdRefresh)
        throws IOException {
      return start(binary, dir, name, servicePort, sdRefresh, (Path) null);
    }

    /**
     * With {@code tls} not null, over HTTPS with the certificates in that folder; on a free port,
     * and ready when this returns (a process that lost its port to another is started again on
     * another).
     */
    static Prom start(String binary, Path dir, String name, int servicePort, Duration sdRefresh, Path tls)
        throws IOException {
      for (int attempt = 1; ; attempt++) {
        Prom p = start(binary, dir, name, servicePort, sdRefresh, tls, freePort());
        if (p.awaitReady(Duration.ofSeconds(30)) || attempt == 3) {
          return p;
        }
        p.stop();
      }
    }

    /** Over HTTP, listening on {@code port} (known before it starts, or the same after a restart). */
    static Prom start(String binary, Path dir, String name, int servicePort, Duration sdRefresh, int port)
        throws IOException {
      return start(binary, dir, name, servicePort, sdRefresh, null, port);
    }

    private static Prom start(
        String binary, Path dir, String name, int servicePort, Duration sdRefresh, Path tls, int port)
        throws IOException {
      Path home = Files.createDirectories(dir.resolve(name));
      Path config = home.resolve("prometheus.yml");
      Files.writeString(
          config,
          """
          global:
            scrape_interval: 1s
            scrape_timeout: 1s
          scrape_configs:
            - job_name: apportion
              http_sd_configs:
                - url: '%s://127.0.0.1:%d/targets?collector=%s'
                  refresh_interval: %ds
          """
              .formatted(tls == null ? "http" : "https", servicePort, name, sdRefresh.toSeconds())
              + (tls == null
                  ? ""
                  : "        tls_config: {ca_file: '%s', cert_file: '%s', key_file: '%s'}\n"
                      .formatted(
                          tls.resolve("server.crt"), tls.resolve("prometheus.crt"), tls.resolve("prometheus.key"))));
      Path log = home.resolve("prometheus.log");
      Process p =
          new ProcessBuilder(
                  binary,
                  "--config.file=" + config,
                  "--storage.tsdb.path=" + home.resolve("data"),
                  "--web.listen-address=127.0.0.1:" + port,
                  "--log.level=warn")
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      return new Prom(name, port, p, log);
    }

    /**
     * Whether the process answers {@code /-/ready} within {@code timeout}; false as soon as it
     * exits.
     */
    boolean awaitReady(Duration timeout) {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (System.nanoTime() < deadline) {
        if (!process.isAlive()) {
          return false;
        }
        try {
          if (Http.get("http://127.0.0.1:" + port + "/-/ready").status() == 200) {
            return true;
          }
        } catch (RuntimeException e) {
          // still starting
        }
        sleep(50);
      }
      return false;
    }

    /** Whether the process is alive, and the last lines of its log: for failure messages. */
    String state() {
      String tail;
      try {
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        tail = String.join(" | ", lines.subList(Math.max(0, lines.size() - 3), lines.size()));
      } catch (IOException e) {
        tail = "(no log: " + e + ")";
      }
      String alive = process.isAlive() ? "alive" : "exited " + process.exitValue();
      return alive + " on port " + port + ", log: " + tail;
    }

    /** Active targets by "job address", from this Prometheus's own API; empty if it is down. */
    Map<String, JsonNode> active() {
      Map<String, JsonNode> out = new HashMap<>();
      if (!process.isAlive()) {
        return out;
      }
      Http.Response r;
      try {
        r = Http.get("http://127.0.0.1:" + port + "/api/v1/targets?state=active");
      } catch (RuntimeException e) {
        return out; // still starting
      }
      if (r.status() != 200) {
        return out;
      }
      for (JsonNode t : r.json().path("data").path("activeTargets")) {
        out.put(t.path("labels").path("job").asText() + " " + t.path("discoveredLabels").path("__address__").asText(), t);
      }
      return out;
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
