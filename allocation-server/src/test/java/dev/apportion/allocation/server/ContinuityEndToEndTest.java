package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.sun.net.httpserver.HttpServer;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
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
 * killed, and the server itself restarts. Per target, the union of every scraper's scrapes is read
 * from the targets' own logs, and each change is measured over its window: a missed scrape is a
 * gap between two scrapes of about two intervals or more (each interval past the first without a
 * scrape), a doubled scrape is one that a second scraper took less than half an interval after the
 * other, the longest gap is the longest time without a scrape.
 *
 * <p>Settings: scrape interval and HTTP SD refresh 2 s, 3 jobs of 8 targets, server {@code
 * refreshInterval: 1s}, polls {@code expireAfter: 6s}, {@code consistent-hashing}, the handover on
 * with its default hold (pickup 10 s plus the job's 2 s interval plus the new owner's refresh).
 * Three fleets run side by side (static list, polls, vmagent with polls), each its scenarios in
 * turn. The table is printed; the goals are asserted: no missed scrape for a planned change or a
 * server restart, doubled scrapes at most the overlap window plus one refresh per moved target.
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
      boolean planned,
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

  @Test
  void plannedChangesAndServerRestartsMissNoScrape(@TempDir Path dir) throws Exception {
    String prometheus = binary("prometheus", true);
    String vmagent = binary("vmagent", false);
    ExecutorService pool = Executors.newFixedThreadPool(3);
    List<Future<?>> runs = new ArrayList<>();
    runs.add(pool.submit(() -> fleet(dir.resolve("static"), "s", prometheus, false, this::staticChain)));
    runs.add(pool.submit(() -> fleet(dir.resolve("polls"), "p", prometheus, true, this::pollChain)));
    if (vmagent != null) {
      runs.add(pool.submit(() -> fleet(dir.resolve("vmagent"), "v", vmagent, true, this::vmagentChain)));
    }
    pool.shutdown();
    List<Throwable> failures = new ArrayList<>();
    for (Future<?> f : runs) {
      try {
        f.get(10, TimeUnit.MINUTES);
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
            r.what() + " doubled " + r.doubled() + " scrapes, more than " + DOUBLED_PER_MOVE
                + " per owner change:\n" + table());
      } else {
        // A killed collector: its targets wait for the expiry, one evaluation, one SD refresh and
        // Prometheus's pickup, then the new owner's first scrape.
        Duration bound = EXPIRE.plusSeconds(1).plus(INTERVAL).plus(HandoverConfig.DEFAULT_PICKUP).plus(INTERVAL);
        assertTrue(
            r.longestGap() <= bound.toSeconds(),
            r.what() + ": a gap of " + r.longestGap() + " s, more than " + bound.toSeconds() + " s:\n" + table());
      }
    }
    assertTrue(rows.size() >= (vmagent == null ? 9 : 12), "every scenario ran:\n" + table());
  }

  private interface Chain {
    void run(Fleet f) throws Exception;
  }

  private Void fleet(Path dir, String prefix, String binary, boolean polls, Chain chain) throws Exception {
    try (Fleet f = new Fleet(dir, prefix, binary, polls)) {
      chain.run(f);
    }
    return null;
  }

  // ---- the scenarios ----

  private void staticChain(Fleet f) throws Exception {
    f.startScrapers(0, 1, 2, 3);
    f.writeConfig(0, 1, 2);
    f.startServer();
    f.awaitSteady();
    f.measure("a collector added (static list, reload)", true, () -> f.reload(0, 1, 2, 3));
    f.measure(
        "a collector removed gracefully (static list, reload, then stopped)",
        true,
        () -> {
          f.reload(0, 1, 2);
          f.awaitDrained(3);
          f.scraper(3).stop();
        });
    f.measure("the server restarted (static)", true, f::restartServer);
    f.measure(
        "rolling replacement, new names (static, three reloads)",
        true,
        () -> {
          int[] names = {0, 1, 2};
          for (int i = 0; i < 3; i++) {
            f.startScrapers(4 + i);
            names[i] = 4 + i;
            f.reload(names);
            f.awaitDrained(i);
            f.scraper(i).stop();
          }
        });
  }

  private void pollChain(Fleet f) throws Exception {
    f.startServer();
    f.startScrapers(0, 1, 2);
    f.awaitSteady();
    f.measure("a collector added (polls)", true, () -> f.join(3));
    f.measure(
        "a collector removed gracefully (polls, DELETE, then SIGTERM)",
        true,
        () -> {
          f.leave(3);
          f.awaitDrained(3);
          f.scraper(3).stop();
        });
    f.measure("the server restarted (polls)", true, f::restartServer);
    f.measure(
        "rolling restart, same names (polls, each announces its leave)",
        true,
        () -> {
          for (int i = 0; i < 3; i++) {
            f.leave(i);
            f.awaitDrained(i);
            f.scraper(i).stop();
            f.startScrapers(i);
            int n = i;
            f.await(Duration.ofSeconds(60), () -> f.isCollector(n), "the restarted collector rejoins");
            f.awaitSteady();
          }
        });
    f.measure("a collector killed (polls, kill -9)", false, () -> f.scraper(0).kill());
  }

  private void vmagentChain(Fleet f) throws Exception {
    f.startServer();
    f.startScrapers(0, 1);
    f.awaitSteady();
    f.measure("a collector added (polls)", true, () -> f.join(2));
    f.measure("the server restarted (polls)", true, f::restartServer);
    f.measure(
        "a collector removed gracefully (polls, DELETE, then SIGTERM)",
        true,
        () -> {
          f.leave(2);
          f.awaitDrained(2);
          f.scraper(2).stop();
        });
  }

  // ---- the table ----

  private String table() {
    StringBuilder sb = new StringBuilder();
    sb.append(
        "| what happened | scrapers | targets moved (owner changes) | targets that missed a scrape"
            + " | missed scrapes | longest gap | doubled scrapes |\n|---|---|---:|---:|---:|---:|---:|\n");
    List<Row> sorted;
    synchronized (rows) {
      sorted = new ArrayList<>(rows);
    }
    List<String> fleets = List.of("Prometheus, static", "Prometheus, polls", "vmagent, polls");
    sorted.sort(java.util.Comparator.comparingInt(r -> fleets.indexOf(r.fleet()))); // stable
    for (Row r : sorted) {
      sb.append(
          String.format(
              java.util.Locale.ROOT,
              "| %s | %s | %s | %d | %d | %.1f s | %d |%n",
              r.what(),
              r.fleet(),
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

  // ---- a fleet: targets, a server, scrapers ----

  final class Fleet implements AutoCloseable {
    final Path dir;
    final String prefix;
    final String binary;
    final boolean polls;
    final boolean vmagent;
    final int port;
    final List<HttpServer> endpoints = new ArrayList<>();
    /** Scrapes by "job address". */
    final Map<String, List<Hit>> hits = new LinkedHashMap<>();
    final Map<Integer, Scraper> scrapers = new HashMap<>();
    final HttpServer sink;
    Reloader reloader;
    Service service;
    long movesOfStopped;

    Fleet(Path dir, String prefix, String binary, boolean polls) throws IOException {
      this.dir = Files.createDirectories(dir);
      this.prefix = prefix;
      this.binary = binary;
      this.polls = polls;
      this.vmagent = binary.endsWith("vmagent");
      this.port = PrometheusEndToEndTest.freePort();
      for (String job : JOBS) {
        StringBuilder sd = new StringBuilder("[{\"targets\":[");
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
          sd.append(i == 0 ? "" : ",").append('"').append(address).append('"');
        }
        Files.writeString(dir.resolve(job + ".json"), sd.append("]}]").toString());
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
    }

    String name(int i) {
      return prefix + "-" + i;
    }

    String label() {
      return (vmagent ? "vmagent" : "Prometheus") + (polls ? ", polls" : ", static");
    }

    Path configFile() {
      return dir.resolve("server.yaml");
    }

    void writeConfig(int... members) throws IOException {
      StringBuilder sb = new StringBuilder();
      sb.append("listen: 127.0.0.1:").append(port).append('\n');
      sb.append("strategy: consistent-hashing\nrefreshInterval: 1s\ntargets:\n");
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
      if (polls) {
        sb.append("collectors: {polls: {expireAfter: ").append(EXPIRE.toSeconds()).append("s}}\n");
      } else {
        sb.append("collectors:\n  static:\n");
        for (int m : members) {
          sb.append("    - ").append(name(m)).append('\n');
        }
      }
      Files.writeString(configFile(), sb.toString());
    }

    void startServer() throws Exception {
      if (polls) {
        writeConfig();
      }
      reloader = new Reloader(configFile(), false);
      service = new Service(ServerConfig.read(configFile()), null, reloader).start();
      reloader.started(service);
    }

    Service current() {
      return reloader.current();
    }

    void reload(int... members) throws Exception {
      writeConfig(members);
      reloader.reload();
    }

    void restartServer() throws Exception {
      movesOfStopped += moves() - movesOfStopped;
      current().close();
      Thread.sleep(2000);
      startServer();
      await(Duration.ofSeconds(60), () -> current().isReady(), "the restarted server is ready");
    }

    void startScrapers(int... which) throws IOException {
      for (int i : which) {
        Scraper old = scrapers.get(i);
        scrapers.put(i, Scraper.start(binary, dir, name(i), port, sink.getAddress().getPort(), old == null ? 0 : old.port));
      }
    }

    /** Starts a scraper and waits until it is a member (polls). */
    void join(int i) throws IOException {
      startScrapers(i);
      await(Duration.ofSeconds(60), () -> isCollector(i), name(i) + " joins");
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
              String owner = snapshot.collectorOf(t).orElse("");
              List<Hit> log = hits.get(t.job() + " " + t.address());
              synchronized (log) {
                if (log.stream().noneMatch(h -> h.at() > recent && h.collector().equals(owner))
                    || log.stream().anyMatch(h -> h.at() > recent && !h.collector().equals(owner))) {
                  return false;
                }
              }
            }
            return true;
          },
          "steady: every target scraped by its owner, nothing held");
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
        out.put(t.job() + " " + t.address(), snapshot.collectorOf(t).orElse(""));
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
      Row row = new Row(what, label(), planned, moved, ownerChanges, targetsMissing, (int) missed, longest / 1e9, (int) doubled);
      rows.add(row);
      System.out.printf("continuity: %s%n", row);
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
      if (reloader != null && reloader.current() != null) {
        reloader.current().close();
      }
      endpoints.forEach(s -> s.stop(0));
      sink.stop(0);
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
    static Scraper start(String binary, Path dir, String name, int serverPort, int sinkPort, int port)
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
                  - url: 'http://127.0.0.1:%d/targets?collector=%s'
            """
                .formatted(INTERVAL.toSeconds(), name, serverPort, name)
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
