package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.sun.net.httpserver.HttpServer;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Target;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Continuity as users feel it: real Prometheus processes (and vmagent ones) scrape targets that log
 * every scrape with the scraper's name, while collectors join, leave on purpose, restart, get
 * killed, and the server itself restarts or fails over to a second replica. Per target, the union
 * of every scraper's scrapes is read from the targets' own logs, and each change is measured over
 * its window: a missed scrape is a gap between two scrapes of about two intervals or more (each
 * interval past the first without a scrape), a doubled scrape is one that a second scraper took
 * less than half an interval after the other, the longest gap is the longest time without a scrape.
 *
 * <p>Settings: scrape interval and HTTP SD refresh 2 s, 3 jobs of 8 targets on 4 nodes, server
 * {@code refreshInterval: 1s}, polls {@code expireAfter: 6s}, the handover on with its default hold
 * (pickup 10 s plus the job's 2 s interval plus the new owner's refresh). The scrapers poll one
 * address, a proxy in front of the server, as a Service is in front of its pods. Fleets (static
 * list, polls, Kubernetes pods in fabric8's mock API server, vmagent with polls; {@code
 * consistent-hashing}, and {@code per-node} with collectors on three of the four nodes) run side
 * by side, each its scenarios in turn. The table is printed; the goals are asserted: no missed
 * scrape for a planned change, a server restart or a failover, doubled scrapes at most the overlap
 * window plus one refresh per moved target.
 *
 * <p>When the {@code prometheus} binary is missing the test fails if the environment variable
 * {@code CI} is set and is skipped otherwise; the vmagent fleet runs when {@code vmagent} is on
 * the PATH (the Debian package {@code victoria-metrics}) and, under {@code CI}, must.
 */
class ContinuityEndToEndTest {
  static final Duration INTERVAL = Duration.ofSeconds(2);
  static final Duration EXPIRE = Duration.ofSeconds(6);
  /** The handover's default hold for these jobs: pickup, the job's interval, the owner's refresh. */
  static final Duration HOLD = HandoverConfig.DEFAULT_PICKUP.plus(INTERVAL).plus(INTERVAL);
  /**
   * Doubled scrapes allowed per moved target: the overlap window (the hold after the new owner's
   * fetch, plus the old owner's refresh and pickup before it stops) and one refresh, in intervals.
   */
  static final long DOUBLED_PER_MOVE =
      HOLD.plus(INTERVAL).plus(HandoverConfig.DEFAULT_PICKUP).plus(INTERVAL).plus(INTERVAL).toSeconds()
          / INTERVAL.toSeconds();
  static final List<String> JOBS = List.of("api", "db", "web");
  static final int PER_JOB = 8;

  /** One measured change: a row of the table. */
  record Row(
      String what,
      String fleet,
      String strategy,
      boolean planned,
      /** For a change that is not planned (a killed collector), the longest gap allowed, in s. */
      long bound,
      int moved,
      long ownerChanges,
      int targetsMissing,
      int missed,
      double longestGap,
      int doubled) {}

  private final List<Row> rows = Collections.synchronizedList(new ArrayList<>());

  /**
   * {@code -Dcontinuity.handover=off} runs the same scenarios with the handover off, to compare;
   * the goals are then printed, not asserted.
   */
  static final boolean HANDOVER = !"off".equals(System.getProperty("continuity.handover"));

  /** The way a fleet's collectors are known to the server. */
  enum Membership {
    STATIC("static"),
    POLLS("polls"),
    KUBERNETES("Kubernetes");

    final String label;

    Membership(String label) {
      this.label = label;
    }
  }

  /** A fleet to run: its scrapers, how the server knows them, its strategy and its scenarios. */
  record FleetSpec(
      String prefix, boolean vmagent, Membership membership, boolean perNode, int replicas, Chain chain) {
    FleetSpec(String prefix, boolean vmagent, Membership membership, boolean perNode, Chain chain) {
      this(prefix, vmagent, membership, perNode, 1, chain);
    }

    String label() {
      return (vmagent ? "vmagent, " : "Prometheus, ") + membership.label;
    }

    String strategy() {
      return (perNode ? "per-node" : "consistent-hashing") + (replicas > 1 ? ", " + replicas + " replicas" : "");
    }
  }

  /**
   * The fleets, longest first: each runs its scenarios in turn on its own server and scrapers, and
   * up to {@link #PARALLEL} fleets run side by side. A new scenario goes into a chain below, a new
   * kind of fleet here.
   */
  private List<FleetSpec> fleets(boolean withVmagent) {
    List<FleetSpec> out = new ArrayList<>();
    out.add(new FleetSpec("p", false, Membership.POLLS, false, this::pollChain));
    out.add(new FleetSpec("r", false, Membership.POLLS, false, 2, this::replicatedChain));
    out.add(new FleetSpec("np", false, Membership.POLLS, true, this::perNodeChain));
    out.add(new FleetSpec("s", false, Membership.STATIC, false, this::staticChain));
    out.add(new FleetSpec("k", false, Membership.KUBERNETES, false, this::kubernetesChain));
    if (withVmagent) {
      out.add(new FleetSpec("v", true, Membership.POLLS, false, this::vmagentChain));
    }
    out.add(new FleetSpec("ns", false, Membership.STATIC, true, this::perNodeChain));
    out.add(new FleetSpec("nk", false, Membership.KUBERNETES, true, this::perNodeChain));
    return out;
  }

  /** Fleets running at once (each runs a server and three to four scrapers). */
  static final int PARALLEL = 4;

  private final List<String> fleetOrder = Collections.synchronizedList(new ArrayList<>());

  @Test
  void plannedChangesAndServerRestartsMissNoScrape(@TempDir Path dir) throws Exception {
    String prometheus = binary("prometheus", true);
    String vmagent = binary("vmagent", false);
    List<FleetSpec> specs = fleets(vmagent != null);
    specs.forEach(s -> fleetOrder.add(s.label() + " " + s.strategy()));
    ExecutorService pool = Executors.newFixedThreadPool(PARALLEL);
    List<Future<?>> runs = new ArrayList<>();
    for (FleetSpec spec : specs) {
      String binary = spec.vmagent() ? vmagent : prometheus;
      runs.add(pool.submit(() -> fleet(dir.resolve(spec.prefix()), spec, binary)));
    }
    pool.shutdown();
    List<Throwable> failures = new ArrayList<>();
    for (Future<?> f : runs) {
      try {
        f.get(15, TimeUnit.MINUTES);
      } catch (java.util.concurrent.ExecutionException e) {
        failures.add(e.getCause());
      }
    }
    System.out.println(table());
    if (!failures.isEmpty()) {
      failures.forEach(Throwable::printStackTrace);
      fail("a fleet failed: " + failures.get(0));
    }
    for (Row r : rows) {
      if (!HANDOVER) {
        continue;
      }
      if (r.planned()) {
        assertEquals(0, r.missed(), r.what() + " (" + r.fleet() + ") missed scrapes:\n" + table());
        assertTrue(
            r.doubled() <= DOUBLED_PER_MOVE * r.ownerChanges(),
            r.what() + " (" + r.fleet() + ") doubled " + r.doubled() + " scrapes, more than "
                + DOUBLED_PER_MOVE + " per owner change:\n" + table());
      } else {
        if (r.strategy().contains("replicas")) {
          assertEquals(0, r.missed(), r.what() + " (" + r.strategy() + ") missed scrapes:\n" + table());
        }
        assertTrue(
            r.longestGap() <= r.bound(),
            r.what() + ": a gap of " + r.longestGap() + " s, more than " + r.bound() + " s:\n" + table());
      }
    }
    assertTrue(rows.size() >= (vmagent == null ? 27 : 30), "every scenario ran:\n" + table());
  }

  private interface Chain {
    void run(Fleet f) throws Exception;
  }

  private Void fleet(Path dir, FleetSpec spec, String binary) throws Exception {
    long start = System.nanoTime();
    try (Fleet f = new Fleet(dir, spec, binary)) {
      spec.chain().run(f);
    } finally {
      System.out.printf(
          java.util.Locale.ROOT,
          "continuity: %s, %s took %.0f s%n",
          spec.label(),
          spec.strategy(),
          (System.nanoTime() - start) / 1e9);
    }
    return null;
  }

  // ---- the scenarios ----

  private void staticChain(Fleet f) throws Exception {
    f.startScrapers(0, 1, 2, 3);
    f.writeConfig(0, 1, 2);
    f.startServer();
    f.awaitSteady();
    f.measure(added(Membership.STATIC), true, () -> f.add(3));
    f.measure(removed(Membership.STATIC), true, () -> f.remove(3));
    f.measure("the server restarted (static)", true, f::restartServer);
    f.measure(rollingReplacement(Membership.STATIC), true, f::rollingReplacement);
    f.startReplica();
    f.measure("a failover to a second server replica (static)", true, f::failover);
  }

  private void pollChain(Fleet f) throws Exception {
    f.startServer();
    f.startScrapers(0, 1, 2);
    f.awaitSteady();
    f.measure(added(Membership.POLLS), true, () -> f.add(3));
    f.measure(removed(Membership.POLLS), true, () -> f.remove(3));
    f.measure("the server restarted (polls)", true, f::restartServer);
    f.measure(ROLLING_RESTART, true, f::rollingRestart);
    f.startReplica();
    f.measure("a failover to a second server replica (polls)", true, f::failover);
    f.measure("a collector killed (polls, kill -9)", false, () -> f.scraper(0).kill());
  }

  /**
   * Every target on two collectors: a collector killed with {@code kill -9} loses nothing, since
   * the other replica of each of its targets goes on scraping while the membership notices.
   */
  private void replicatedChain(Fleet f) throws Exception {
    f.startServer();
    f.startScrapers(0, 1, 2);
    f.awaitSteady();
    f.measure("a collector killed (polls, kill -9)", false, () -> f.scraper(0).kill());
  }

  private void kubernetesChain(Fleet f) throws Exception {
    f.startScrapers(0, 1, 2);
    f.createPods(0, 1, 2);
    f.startServer();
    f.awaitSteady();
    f.measure(added(Membership.KUBERNETES), true, () -> f.add(3));
    f.measure(removed(Membership.KUBERNETES), true, () -> f.remove(3));
    f.measure("the server restarted (Kubernetes)", true, f::restartServer);
    f.measure(rollingReplacement(Membership.KUBERNETES), true, f::rollingReplacement);
    f.startReplica();
    f.measure("a failover to a second server replica (Kubernetes)", true, f::failover);
    f.measure(
        "a collector killed (Kubernetes: kill -9, its pod deleted at once)",
        false,
        () -> {
          f.scraper(4).kill(); // collector 4 replaced collector 0 above
          f.client.pods().inNamespace(NAMESPACE).withName(f.name(4)).delete();
        });
  }

  private void vmagentChain(Fleet f) throws Exception {
    f.startServer();
    f.startScrapers(0, 1);
    f.awaitSteady();
    f.measure(added(Membership.POLLS), true, () -> f.add(2));
    f.measure("the server restarted (polls)", true, f::restartServer);
    f.measure(removed(Membership.POLLS), true, () -> f.remove(2));
  }

  /**
   * Per-node: targets on four nodes, three collectors on three of them (the fourth node's targets
   * go to the fallback); a collector joins on the fourth node and leaves it again; then the three
   * are replaced by new names on their nodes (static, Kubernetes) or restarted (polls).
   */
  private void perNodeChain(Fleet f) throws Exception {
    switch (f.spec.membership()) {
      case STATIC -> {
        f.startScrapers(0, 1, 2, 3);
        f.writeConfig(0, 1, 2);
        f.startServer();
      }
      case POLLS -> {
        f.startServer();
        f.startScrapers(0, 1, 2);
      }
      case KUBERNETES -> {
        f.startScrapers(0, 1, 2);
        f.createPods(0, 1, 2);
        f.startServer();
      }
    }
    f.awaitSteady();
    f.measure(added(f.spec.membership()), true, () -> f.add(3));
    f.measure(removed(f.spec.membership()), true, () -> f.remove(3));
    if (f.polls) {
      f.measure(ROLLING_RESTART, true, f::rollingRestart);
    } else {
      f.measure(rollingReplacement(f.spec.membership()), true, f::rollingReplacement);
    }
  }

  static final String ROLLING_RESTART = "rolling restart, same names (polls, each announces its leave)";

  static String rollingReplacement(Membership m) {
    return m == Membership.STATIC
        ? "rolling replacement, new names (static, three reloads)"
        : "rolling replacement, new names (Kubernetes: each new pod Ready, then the old one deleted)";
  }

  static String added(Membership m) {
    return switch (m) {
      case STATIC -> "a collector added (static list, reload)";
      case POLLS -> "a collector added (polls)";
      case KUBERNETES -> "a collector added (Kubernetes, pod created)";
    };
  }

  static String removed(Membership m) {
    return switch (m) {
      case STATIC -> "a collector removed gracefully (static list, reload, then stopped)";
      case POLLS -> "a collector removed gracefully (polls, DELETE, then SIGTERM)";
      case KUBERNETES -> "a collector removed gracefully (Kubernetes: pod terminating, drained, then gone)";
    };
  }

  // ---- the table ----

  private String table() {
    StringBuilder sb = new StringBuilder();
    sb.append(
        "| what happened | scrapers | strategy | targets moved (owner changes) | targets that missed a"
            + " scrape | missed scrapes | longest gap | doubled scrapes |\n"
            + "|---|---|---|---:|---:|---:|---:|---:|\n");
    List<Row> sorted;
    synchronized (rows) {
      sorted = new ArrayList<>(rows);
    }
    sorted.sort(java.util.Comparator.comparingInt(r -> fleetOrder.indexOf(r.fleet() + " " + r.strategy()))); // stable
    for (Row r : sorted) {
      sb.append(
          String.format(
              java.util.Locale.ROOT,
              "| %s | %s | %s | %s | %d | %d | %.1f s | %d |%n",
              r.what(),
              r.fleet(),
              r.strategy(),
              // owner changes are counted by the handover
              HANDOVER ? r.moved() + " (" + r.ownerChanges() + ")" : Integer.toString(r.moved()),
              r.targetsMissing(),
              r.missed(),
              r.longestGap(),
              r.doubled()));
    }
    return sb.toString();
  }

  /**
   * Missed, doubled and the longest gap of one target's scrapes within {@code [from, to)}; the
   * last scrape before {@code from} anchors the first gap, and the time from the last scrape to
   * {@code to} counts as a gap too.
   */
  static long[] score(List<Hit> hits, long from, long to, long interval) {
    long missed = 0;
    long doubled = 0;
    long longest = 0;
    Hit prev = null;
    for (Hit h : hits) {
      if (h.at() < from) {
        prev = h;
        continue;
      }
      if (h.at() >= to) {
        break;
      }
      if (prev != null) {
        long gap = h.at() - prev.at();
        missed += Math.max(0, Math.round((double) gap / interval) - 1);
        longest = Math.max(longest, gap);
        if (gap < interval / 2 && !h.collector().equals(prev.collector())) {
          doubled++;
        }
      }
      prev = h;
    }
    long tail = to - (prev == null ? from : prev.at());
    if (tail > interval * 3 / 2) {
      missed += Math.round((double) tail / interval) - 1;
      longest = Math.max(longest, tail);
    }
    return new long[] {missed, doubled, longest};
  }

  @Test
  void theScoreCountsMissedAndDoubledScrapes() {
    long s = 1_000_000_000L;
    List<Hit> steady = List.of(new Hit(0, "a"), new Hit(2 * s, "a"), new Hit(4 * s, "a"), new Hit(6 * s, "a"));
    assertEquals(List.of(0L, 0L, 2 * s), List.of(box(score(steady, s, 7 * s, 2 * s))));
    List<Hit> gap = List.of(new Hit(0, "a"), new Hit(2 * s, "a"), new Hit(6 * s, "b"), new Hit(8 * s, "b"));
    assertEquals(List.of(1L, 0L, 4 * s), List.of(box(score(gap, s, 9 * s, 2 * s))), "4 s without a scrape: one missed");
    List<Hit> both = List.of(new Hit(0, "a"), new Hit(s / 2, "b"), new Hit(2 * s, "a"), new Hit(2 * s + s / 2, "b"));
    assertEquals(1L, score(both, s, 3 * s, 2 * s)[1], "b half a second after a: doubled");
    List<Hit> stopped = List.of(new Hit(0, "a"), new Hit(2 * s, "a"));
    assertEquals(3L, score(stopped, s, 10 * s, 2 * s)[0], "8 s without a scrape up to the end: three missed");
  }

  private static Long[] box(long[] a) {
    return new Long[] {a[0], a[1], a[2]};
  }

  record Hit(long at, String collector) {}

  // ---- a fleet: targets, a server behind one address, scrapers ----

  static final int NODES = 4;
  static final String NAMESPACE = "monitoring";

  final class Fleet implements AutoCloseable {
    final Path dir;
    final FleetSpec spec;
    final String prefix;
    final String binary;
    final boolean polls;
    final boolean vmagent;
    /** The one address the scrapers poll: a proxy in front of the server (or its replica). */
    final int port;
    final Proxy proxy;
    /** The port the running server (the active replica) listens on, behind the proxy. */
    int serverPort;
    Path configFile;
    int[] members = {};
    final List<HttpServer> endpoints = new ArrayList<>();
    /** Scrapes by "job address". */
    final Map<String, List<Hit>> hits = new LinkedHashMap<>();
    final Map<Integer, Scraper> scrapers = new HashMap<>();
    final HttpServer sink;
    /** The Kubernetes API server the collectors are pods of (fabric8's mock, CRUD mode), or null. */
    final KubernetesMockServer api;
    final KubernetesClient client;
    Reloader reloader;
    /** A second replica started for a failover, not yet serving. */
    Reloader standby;
    long movesOfStopped;

    Fleet(Path dir, FleetSpec spec, String binary) throws IOException {
      this.dir = Files.createDirectories(dir);
      this.spec = spec;
      this.prefix = spec.prefix();
      this.binary = binary;
      this.polls = spec.membership() == Membership.POLLS;
      this.vmagent = spec.vmagent();
      this.serverPort = PrometheusEndToEndTest.freePort();
      this.configFile = dir.resolve("server.yaml");
      this.proxy = new Proxy(serverPort);
      this.port = proxy.port();
      for (String job : JOBS) {
        List<List<String>> byNode = new ArrayList<>();
        for (int n = 0; n < NODES; n++) {
          byNode.add(new ArrayList<>());
        }
        for (int i = 0; i < PER_JOB; i++) {
          HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
          String address = "127.0.0.1:" + s.getAddress().getPort();
          List<Hit> log = Collections.synchronizedList(new ArrayList<>());
          hits.put(job + " " + address, log);
          s.createContext(
              "/metrics",
              ex -> {
                String q = ex.getRequestURI().getRawQuery();
                String who = q != null && q.startsWith("collector=") ? q.substring("collector=".length()) : "?";
                log.add(new Hit(System.nanoTime(), who));
                byte[] body = "continuity_target 1\n".getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4");
                ex.sendResponseHeaders(200, body.length);
                try (OutputStream out = ex.getResponseBody()) {
                  out.write(body);
                }
              });
          s.start();
          endpoints.add(s);
          byNode.get(i % NODES).add('"' + address + '"');
        }
        // one group per node, labelled as Kubernetes service discovery labels a pod's node
        StringBuilder sd = new StringBuilder("[");
        for (int n = 0; n < NODES; n++) {
          sd.append(n == 0 ? "" : ",")
              .append("{\"labels\":{\"__meta_kubernetes_pod_node_name\":\"")
              .append(node(n))
              .append("\"},\"targets\":[")
              .append(String.join(",", byNode.get(n)))
              .append("]}");
        }
        Files.writeString(dir.resolve(job + ".json"), sd.append(']').toString());
      }
      // vmagent needs somewhere to write to: a sink that accepts everything.
      sink = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
      sink.createContext(
          "/",
          ex -> {
            ex.getRequestBody().readAllBytes();
            ex.sendResponseHeaders(204, -1);
            ex.close();
          });
      sink.start();
      if (spec.membership() == Membership.KUBERNETES) {
        api =
            new KubernetesMockServer(
                new Context(), new MockWebServer(), new HashMap<>(), new KubernetesCrudDispatcher(), false);
        api.init(InetAddress.getLoopbackAddress(), 0);
        client = api.createClient();
      } else {
        api = null;
        client = null;
      }
    }

    String name(int i) {
      return prefix + "-" + i;
    }

    /** Collector i runs on node i modulo four (per-node places by it; the others ignore it). */
    String node(int i) {
      return "node-" + (i % NODES);
    }

    String label() {
      return spec.label();
    }

    String config(int listen, int... names) {
      StringBuilder sb = new StringBuilder();
      sb.append("listen: 127.0.0.1:").append(listen).append('\n');
      String replicas = spec.replicas() > 1 ? ", replicas: " + spec.replicas() : "";
      sb.append(
          spec.perNode()
              ? "strategy: {name: per-node, fallback: consistent-hashing" + replicas + "}\n"
              : "strategy: {name: consistent-hashing" + replicas + "}\n");
      sb.append("refreshInterval: 1s\ntargets:\n");
      for (String job : JOBS) {
        sb.append("  - fileSd: {job: ").append(job).append(", files: [").append(job).append(".json]}\n");
      }
      sb.append("scrapeConfigs:\n");
      for (String job : JOBS) {
        sb.append("  ").append(job).append(": {scrape_interval: ").append(INTERVAL.toSeconds()).append("s}\n");
      }
      if (!HANDOVER) {
        sb.append("handover: {enabled: false}\n");
      }
      switch (spec.membership()) {
        case POLLS -> sb.append("collectors: {polls: {expireAfter: ").append(EXPIRE.toSeconds()).append("s}}\n");
        case KUBERNETES ->
            sb.append("collectors: {kubernetes: {namespace: ")
                .append(NAMESPACE)
                .append(", labelSelector: app=continuity}}\n");
        case STATIC -> {
          sb.append("collectors:\n  static:\n");
          for (int m : names) {
            sb.append("    - ");
            sb.append(spec.perNode() ? "{name: " + name(m) + ", node: " + node(m) + "}" : name(m)).append('\n');
          }
        }
      }
      return sb.toString();
    }

    void writeConfig(int... names) throws IOException {
      members = names.clone();
      Files.writeString(configFile, config(serverPort, names));
    }

    void startServer() throws Exception {
      if (!Files.exists(configFile)) {
        writeConfig();
      }
      reloader = new Reloader(configFile, false);
      Service s = new Service(ServerConfig.read(configFile), client, reloader).start();
      reloader.started(s);
    }

    Service current() {
      return reloader.current();
    }

    void reload(int... names) throws Exception {
      writeConfig(names);
      reloader.reload();
    }

    void restartServer() throws Exception {
      movesOfStopped = moves();
      current().close();
      Thread.sleep(2000);
      startServer();
      await(Duration.ofSeconds(60), () -> current().isReady(), "the restarted server is ready");
    }

    /**
     * A second replica: the same config on a port of its own, started and ready, that nobody
     * polls yet (the proxy forwards to the first).
     */
    void startReplica() throws Exception {
      int other = PrometheusEndToEndTest.freePort();
      Path file = dir.resolve("server-" + other + ".yaml");
      Files.writeString(file, config(other, members));
      standby = new Reloader(file, false);
      Service s = new Service(ServerConfig.read(file), client, standby).start();
      standby.started(s);
      await(Duration.ofSeconds(60), s::isReady, "the second replica is ready");
    }

    /** The active replica stops; the proxy forwards to the other from then on. */
    void failover() throws Exception {
      movesOfStopped = moves();
      current().close();
      Service next = standby.current();
      proxy.forwardTo(next.port());
      serverPort = next.port();
      configFile = dir.resolve("server-" + serverPort + ".yaml");
      reloader = standby;
      standby = null;
    }

    void startScrapers(int... which) throws IOException {
      for (int i : which) {
        Scraper old = scrapers.get(i);
        scrapers.put(
            i,
            Scraper.start(
                binary,
                dir,
                name(i),
                spec.perNode() && polls ? node(i) : null,
                port,
                sink.getAddress().getPort(),
                old == null ? 0 : old.port));
      }
    }

    /** Collector i joins (its scraper started if it is not running) and is a member. */
    void add(int i) throws Exception {
      if (scrapers.get(i) == null || !scrapers.get(i).process.isAlive()) {
        startScrapers(i);
      }
      switch (spec.membership()) {
        case STATIC -> {
          int[] next = java.util.Arrays.copyOf(members, members.length + 1);
          next[members.length] = i;
          reload(next);
        }
        case KUBERNETES -> createPods(i);
        case POLLS -> { }
      }
      await(Duration.ofSeconds(60), () -> isCollector(i), name(i) + " joins");
    }

    /**
     * Collector i leaves on purpose: it announces it (a reload without it, a {@code DELETE}, its
     * pod deleted), waits until drained, then stops (and its pod is gone).
     */
    void remove(int i) throws Exception {
      switch (spec.membership()) {
        case STATIC -> reload(java.util.Arrays.stream(members).filter(m -> m != i).toArray());
        case POLLS -> leave(i);
        case KUBERNETES -> client.pods().inNamespace(NAMESPACE).withName(name(i)).delete();
      }
      awaitDrained(i);
      scraper(i).stop();
      if (spec.membership() == Membership.KUBERNETES) {
        podGone(i);
      }
    }

    /**
     * Collectors 0 to 2 replaced one by one by collectors 4 to 6 on the same nodes: the new one
     * joins (listed, or its pod Ready), the old one leaves, is drained and stopped.
     */
    void rollingReplacement() throws Exception {
      for (int i = 0; i < 3; i++) {
        int old = i;
        int next = 4 + i;
        startScrapers(next);
        if (spec.membership() == Membership.STATIC) {
          reload(java.util.Arrays.stream(members).map(m -> m == old ? next : m).toArray());
        } else {
          createPods(next);
          await(Duration.ofSeconds(60), () -> isCollector(next), name(next) + " joins");
          client.pods().inNamespace(NAMESPACE).withName(name(old)).delete();
        }
        awaitDrained(old);
        scraper(old).stop();
        if (spec.membership() == Membership.KUBERNETES) {
          podGone(old);
        }
      }
    }

    /** Polls: each collector in turn announces its leave, is drained, stopped, started again. */
    void rollingRestart() throws Exception {
      for (int i = 0; i < 3; i++) {
        int n = i;
        leave(n);
        awaitDrained(n);
        scraper(n).stop();
        startScrapers(n);
        await(Duration.ofSeconds(60), () -> isCollector(n), "the restarted collector rejoins");
        awaitSteady();
      }
    }

    /** The kubelet saw the pod's containers stop: its finalizer goes, and the pod with it. */
    void podGone(int i) {
      client
          .pods()
          .inNamespace(NAMESPACE)
          .withName(name(i))
          .edit(p -> new PodBuilder(p).editMetadata().withFinalizers().endMetadata().build());
    }

    /**
     * Pods for collectors on their nodes, Running and Ready; each with a finalizer, so a delete
     * leaves it terminating (a deletion timestamp) until its containers have stopped.
     */
    void createPods(int... which) {
      String now = java.time.Instant.now().toString();
      for (int i : which) {
        client
            .pods()
            .inNamespace(NAMESPACE)
            .resource(
                new PodBuilder()
                    .withNewMetadata()
                    .withName(name(i))
                    .withNamespace(NAMESPACE)
                    .addToLabels("app", "continuity")
                    .addToFinalizers("continuity/stopped")
                    .endMetadata()
                    .withNewSpec()
                    .withNodeName(node(i))
                    .addNewContainer()
                    .withName("collector")
                    .withImage("prometheus")
                    .endContainer()
                    .endSpec()
                    .withNewStatus()
                    .withPhase("Running")
                    .withStartTime(now)
                    .addNewCondition()
                    .withType("Ready")
                    .withStatus("True")
                    .withLastTransitionTime(now)
                    .endCondition()
                    .endStatus()
                    .build())
            .create();
      }
    }

    Scraper scraper(int i) {
      return scrapers.get(i);
    }

    void leave(int i) {
      Http.Response r =
          Http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/targets?collector=" + name(i)))
                  .timeout(Duration.ofSeconds(10))
                  .DELETE()
                  .build());
      assertEquals(202, r.status(), r.body());
    }

    void awaitDrained(int i) {
      await(
          Duration.ofSeconds(90),
          () -> {
            try {
              return Http.get("http://127.0.0.1:" + port + "/drained?collector=" + name(i)).status() == 200;
            } catch (RuntimeException e) {
              return false;
            }
          },
          name(i) + " drained");
    }

    boolean isCollector(int i) {
      return current().allocator().snapshot().collectors().stream().anyMatch(c -> c.name().equals(name(i)));
    }

    /**
     * Every target owned, nothing held, and over the last two intervals every target scraped by its
     * owner and by nobody else.
     */
    void awaitSteady() {
      await(
          Duration.ofSeconds(90),
          () -> {
            Service s = current();
            if (!s.isReady()) {
              return false;
            }
            Allocation snapshot = s.allocator().snapshot();
            if (snapshot.targets().size() != JOBS.size() * PER_JOB || !snapshot.unassigned().isEmpty()) {
              return false;
            }
            if (s.handover() != null) {
              s.handover().served(snapshot);
              if (s.handover().heldCount() > 0) {
                return false;
              }
            }
            long recent = System.nanoTime() - INTERVAL.multipliedBy(2).toNanos();
            for (Target t : snapshot.targets()) {
              List<String> owners = snapshot.ownersOf(t);
              List<Hit> log = hits.get(t.job() + " " + t.address());
              synchronized (log) {
                for (String owner : owners) {
                  if (log.stream().noneMatch(h -> h.at() > recent && h.collector().equals(owner))) {
                    return false;
                  }
                }
                if (log.stream().anyMatch(h -> h.at() > recent && !owners.contains(h.collector()))) {
                  return false;
                }
              }
            }
            return true;
          },
          "steady: every target scraped by its owners, nothing held");
    }

    /** Owner changes so far; a restarted server starts from nothing, so its count is added on. */
    long moves() {
      Handover h = current().handover();
      return movesOfStopped + (h == null ? 0 : h.moves());
    }

    Map<String, String> owners() {
      Allocation snapshot = current().allocator().snapshot();
      Map<String, String> out = new HashMap<>();
      for (Target t : snapshot.targets()) {
        out.put(t.job() + " " + t.address(), String.join(",", snapshot.ownersOf(t)));
      }
      return out;
    }

    interface Change {
      void run() throws Exception;
    }

    /** Runs {@code change}, waits until steady again and one pickup more, and adds its row. */
    void measure(String what, boolean planned, Change change) throws Exception {
      Map<String, String> before = owners();
      long movesBefore = moves();
      long from = System.nanoTime();
      change.run();
      awaitSteady();
      // and still steady two intervals later: a client that dropped targets would show by then
      Thread.sleep(INTERVAL.multipliedBy(2).toMillis());
      awaitSteady();
      long to = System.nanoTime();
      long ownerChanges = moves() - movesBefore;
      Map<String, String> after = owners();
      int moved = 0;
      for (Map.Entry<String, String> e : before.entrySet()) {
        if (!e.getValue().equals(after.get(e.getKey()))) {
          moved++;
        }
      }
      int targetsMissing = 0;
      long missed = 0;
      long doubled = 0;
      long longest = 0;
      for (List<Hit> log : hits.values()) {
        List<Hit> copy;
        synchronized (log) {
          copy = new ArrayList<>(log);
        }
        long[] s = score(copy, from, to, INTERVAL.toNanos());
        if (s[0] > 0) {
          targetsMissing++;
        }
        missed += s[0];
        doubled += s[1];
        longest = Math.max(longest, s[2]);
      }
      long bound = planned ? 0 : killedBound().toSeconds();
      Row row =
          new Row(
              what,
              label(),
              spec.strategy(),
              planned,
              bound,
              moved,
              ownerChanges,
              targetsMissing,
              (int) missed,
              longest / 1e9,
              (int) doubled);
      rows.add(row);
      System.out.printf(java.util.Locale.ROOT, "continuity: %s (%.0f s)%n", row, (to - from) / 1e9);
    }

    /**
     * The longest a killed collector's targets may go unscraped: from its last scrape until the
     * membership notices (polls: the expiry after its last poll, then one evaluation; Kubernetes:
     * one interval back to its last scrape, then the watch event and the source's 1 s), then the
     * new owner's SD refresh, Prometheus's pickup and the scrape offset.
     */
    Duration killedBound() {
      Duration noticed = polls ? EXPIRE.plusSeconds(1) : INTERVAL.plusSeconds(1);
      return noticed.plus(INTERVAL).plus(HandoverConfig.DEFAULT_PICKUP).plus(INTERVAL);
    }

    void await(Duration timeout, BooleanSupplier condition, String what) {
      PrometheusEndToEndTest.await(timeout, condition, () -> label() + ": " + what + "; " + describe());
    }

    String describe() {
      StringBuilder sb = new StringBuilder();
      scrapers.forEach((i, s) -> sb.append(name(i)).append(": ").append(s.state()).append("; "));
      return sb.toString();
    }

    @Override
    public void close() {
      scrapers.values().forEach(Scraper::stop);
      if (api != null) {
        api.destroy(); // before the sources close their watches, as allocation-kubernetes' tests do
      }
      for (Reloader r : java.util.Arrays.asList(reloader, standby)) {
        if (r != null && r.current() != null) {
          r.current().close();
        }
      }
      if (client != null) {
        client.close();
      }
      proxy.close();
      endpoints.forEach(s -> s.stop(0));
      sink.stop(0);
    }
  }

  /**
   * One address in front of the server, as a Service is in front of its pods: a TCP proxy that
   * forwards each connection to the replica it is told, and when told another, drops the
   * connections it had (the stopped replica's are gone anyway). A connection the replica refuses is
   * closed, so a scraper sees its refresh fail.
   */
  static final class Proxy implements AutoCloseable {
    private final ServerSocket socket;
    private final ExecutorService threads =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "continuity-proxy");
              t.setDaemon(true);
              return t;
            });
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile int backend;

    Proxy(int backend) throws IOException {
      this.backend = backend;
      this.socket = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
      threads.execute(this::accept);
    }

    int port() {
      return socket.getLocalPort();
    }

    void forwardTo(int port) {
      backend = port;
      for (Socket s : open) {
        closeQuietly(s);
      }
    }

    private void accept() {
      while (!socket.isClosed()) {
        try {
          Socket in = socket.accept();
          threads.execute(() -> forward(in));
        } catch (IOException e) {
          return; // closed
        }
      }
    }

    private void forward(Socket in) {
      Socket out = new Socket();
      open.add(in);
      open.add(out);
      try {
        out.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), backend), 2000);
        threads.execute(() -> pump(out, in));
        pump(in, out);
      } catch (IOException e) {
        closeQuietly(in);
        closeQuietly(out);
        open.remove(in);
        open.remove(out);
      }
    }

    /** Copies until either side ends, then closes both. */
    private void pump(Socket from, Socket to) {
      try (InputStream i = from.getInputStream(); OutputStream o = to.getOutputStream()) {
        byte[] buffer = new byte[8192];
        for (int n; (n = i.read(buffer)) >= 0; ) {
          o.write(buffer, 0, n);
          o.flush();
        }
      } catch (IOException e) {
        // one side closed
      } finally {
        closeQuietly(from);
        closeQuietly(to);
        open.remove(from);
        open.remove(to);
      }
    }

    private static void closeQuietly(Socket s) {
      try {
        s.close();
      } catch (IOException e) {
        // closing anyway
      }
    }

    @Override
    public void close() {
      try {
        socket.close();
      } catch (IOException e) {
        // closing anyway
      }
      open.forEach(Proxy::closeQuietly);
      threads.shutdownNow();
    }
  }

  /** One Prometheus or vmagent process, configured with HTTP SD for its own name. */
  static final class Scraper {
    final int port;
    final Process process;
    final Path log;

    private Scraper(int port, Process process, Path log) {
      this.port = port;
      this.process = process;
      this.log = log;
    }

    /** Started, and answering, on {@code port} (a free one for 0). */
    /** With {@code node} non-null, the scraper names its node in its poll (per-node with polls). */
    static Scraper start(String binary, Path dir, String name, String node, int serverPort, int sinkPort, int port)
        throws IOException {
      boolean vm = binary.endsWith("vmagent");
      for (int attempt = 1; ; attempt++) {
        int p = port != 0 ? port : PrometheusEndToEndTest.freePort();
        Path home = Files.createDirectories(dir.resolve(name));
        Path config = home.resolve("scrape.yml");
        Files.writeString(
            config,
            """
            global:
              scrape_interval: %ds
              scrape_timeout: 1s
            scrape_configs:
              - job_name: continuity
                params: {collector: ['%s']}
                http_sd_configs:
                  - url: 'http://127.0.0.1:%d/targets?collector=%s%s'
            """
                .formatted(INTERVAL.toSeconds(), name, serverPort, name, node == null ? "" : "&node=" + node)
                + (vm ? "" : "        refresh_interval: %ds\n".formatted(INTERVAL.toSeconds())));
        Path log = home.resolve("log");
        List<String> command =
            vm
                ? List.of(
                    binary,
                    "-promscrape.config=" + config,
                    "-promscrape.httpSDCheckInterval=" + INTERVAL.toSeconds() + "s",
                    "-httpListenAddr=127.0.0.1:" + p,
                    "-remoteWrite.url=http://127.0.0.1:" + sinkPort + "/api/v1/write",
                    "-remoteWrite.tmpDataPath=" + home.resolve("data"),
                    "-loggerLevel=WARN")
                : List.of(
                    binary,
                    "--config.file=" + config,
                    "--storage.tsdb.path=" + home.resolve("data"),
                    "--web.listen-address=127.0.0.1:" + p,
                    "--log.level=warn");
        Process process =
            new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        // a test JVM stopped from outside must not leave scrapers running
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
        Scraper s = new Scraper(p, process, log);
        if (s.awaitReady(vm ? "/health" : "/-/ready") || attempt == 3) {
          return s;
        }
        s.stop();
      }
    }

    boolean awaitReady(String path) {
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (System.nanoTime() < deadline && process.isAlive()) {
        try {
          if (Http.get("http://127.0.0.1:" + port + path).status() == 200) {
            return true;
          }
        } catch (RuntimeException e) {
          // still starting
        }
        PrometheusEndToEndTest.sleep(50);
      }
      return false;
    }

    String state() {
      String tail;
      try {
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        tail = String.join(" | ", lines.subList(Math.max(0, lines.size() - 2), lines.size()));
      } catch (IOException e) {
        tail = "(no log)";
      }
      return (process.isAlive() ? "alive" : "exited") + " on " + port + ", log: " + tail;
    }

    /** SIGTERM, and waits for the exit. */
    void stop() {
      process.destroy();
      try {
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    /** SIGKILL. */
    void kill() throws InterruptedException {
      process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
    }
  }

  static String binary(String name, boolean required) {
    String hint = "install the Debian package (.ci/run does it) to run the continuity test";
    return required ? ExternalBinaries.require(name, hint) : ExternalBinaries.optional(name, hint);
  }
}
