package dev.apportion.allocation.server;

import static dev.apportion.allocation.server.CostQueryResponseTest.sample;
import static dev.apportion.allocation.server.CostQueryResponseTest.vector;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.ref.WeakReference;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a fault on the outgoing side (a source, the cost query) may do: every background loop
 * survives any throwable and serves the next good read; every read has one deadline over its whole
 * body; costs never leave a target unscraped; a slow source delays only itself; reloads start no
 * new clients; credentials in a URL are never shown.
 */
class OutgoingFaultsTest {
  @TempDir Path dir;
  private final List<HttpServer> servers = new ArrayList<>();
  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
    for (HttpServer s : servers) {
      s.stop(0);
    }
  }

  /** An HTTP server whose handler is {@code handler}. */
  private URI serve(com.sun.net.httpserver.HttpHandler handler) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    server.createContext("/", handler);
    server.start();
    servers.add(server);
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  private static void answer(com.sun.net.httpserver.HttpExchange ex, int status, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.sendResponseHeaders(status, b.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(b);
    }
  }

  private static void await(BooleanSupplier condition, Duration within, String what) throws InterruptedException {
    long end = System.nanoTime() + within.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  private static CostsConfig costs(URI url, Duration refresh) {
    return new CostsConfig(
        List.of(url), CostsConfig.DEFAULT_QUERY, refresh, CostQueryResponse.DEFAULT_MATCH, HttpClientOptions.NONE);
  }

  // 1. An out-of-memory error inside a read leaves nothing of the read reachable; the next serves.
  @Test
  void aReadThatDiesOfAnErrorKeepsNothingItMadeAndTheNextReadStartsAfresh() throws Exception {
    InternedReads reads = new InternedReads();
    List<WeakReference<Target>> made = new ArrayList<>();
    for (Throwable error : new Throwable[] {new OutOfMemoryError("thrown by the test"), new StackOverflowError()}) {
      assertThrows(
          error.getClass(),
          () ->
              reads.read(
                  "test",
                  (interner, names, out) -> {
                    for (int i = 0; i < 1000; i++) {
                      made.add(new WeakReference<>(interner.intern("j", "h:" + i, Map.of("k", "v" + i))));
                    }
                    if (error instanceof OutOfMemoryError oom) {
                      throw oom;
                    }
                    throw (StackOverflowError) error;
                  }));
    }
    for (int i = 0; i < 20 && made.stream().anyMatch(r -> r.get() != null); i++) {
      System.gc();
      Thread.sleep(20);
    }
    assertTrue(made.stream().allMatch(r -> r.get() == null), "the failed reads' targets are unreachable");
    List<Target> good = reads.read("test", (interner, names, out) -> out.add(interner.intern("j", "h:1", Map.of())));
    assertEquals(List.of(Target.of("j", "h:1")), good);
  }

  // 1. An Error inside an HTTP read may have killed the client's selector thread: a new client next.
  @Test
  void anErrorInsideAnHttpReadReplacesTheSharedClient() throws Exception {
    URI url = serve(ex -> answer(ex, 200, "[]"));
    HttpFetch fetch = new HttpFetch(HttpClientOptions.NONE, null, Duration.ofSeconds(5), 1 << 20, Set.of());
    java.net.http.HttpClient before = HttpClientOptions.NONE.client();
    assertThrows(
        OutOfMemoryError.class,
        () -> fetch.get(url, in -> {
          throw new OutOfMemoryError("thrown by the test");
        }));
    java.net.http.HttpClient after = HttpClientOptions.NONE.client();
    assertNotSame(before, after, "the client the error may have broken is not used again");
    assertEquals("[]", fetch.get(url, in -> new String(in.readAllBytes(), StandardCharsets.UTF_8)));
  }

  // 1 and 2. Each feed survives OutOfMemoryError and StackOverflowError inside a read.
  @Test
  void theTargetFeedServesTheGoodFileThatFollowsAReadThatRanOutOfMemory() throws Exception {
    Path file = dir.resolve("t.json");
    Files.writeString(file, "[{\"targets\":[\"a:1\"]}]");
    FileSdSource files = new FileSdSource("j", List.of(file), SourceLimits.DEFAULT);
    AtomicReference<Throwable> next = new AtomicReference<>();
    TargetSource failing =
        new TargetSource() {
          @Override
          public String describe() {
            return files.describe();
          }

          @Override
          public List<Target> read() throws IOException, InterruptedException {
            Throwable t = next.getAndSet(null);
            if (t instanceof Error e) {
              throw e;
            }
            return files.read();
          }
        };
    Allocator allocator = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    allocator.setCollectors(List.of(Collector.of("c")));
    TargetFeed feed = TargetFeed.builder(allocator).source(failing).interval(Duration.ofMillis(200)).build();
    closing.add(feed);
    feed.start();
    await(() -> allocator.snapshot().targets().size() == 1, Duration.ofSeconds(10), "the first read");
    next.set(new OutOfMemoryError("thrown by the test"));
    await(() -> !feed.isUp(0), Duration.ofSeconds(10), "the source down");
    Files.writeString(file, "[{\"targets\":[\"a:1\",\"b:1\"]}]");
    // Within two refresh intervals (plus scheduling slack): the good file is served.
    await(() -> allocator.snapshot().targets().size() == 2, Duration.ofSeconds(5), "the good file served");
    next.set(new StackOverflowError());
    await(() -> !feed.isUp(0), Duration.ofSeconds(10), "the source down again");
    Files.writeString(file, "[{\"targets\":[\"a:1\",\"b:1\",\"c:1\"]}]");
    await(() -> allocator.snapshot().targets().size() == 3, Duration.ofSeconds(5), "the next good file served");
    assertTrue(feed.isUp(0));
    assertEquals(2, feed.failureEpisodes(), "each error one episode, logged once");
  }

  @Test
  void theCostFeedSurvivesOutOfMemoryAndStackOverflowInsideARead() throws Exception {
    URI url = serve(ex -> answer(ex, 200, vector(sample("j", "a:1", "5"))));
    AtomicInteger calls = new AtomicInteger();
    CostFeed feed =
        new CostFeed(
            costs(url, Duration.ofMillis(100)),
            Duration.ofSeconds(5),
            () -> {},
            null,
            in -> {
              int n = calls.incrementAndGet();
              if (n == 1) {
                throw new OutOfMemoryError("thrown by the test");
              }
              if (n == 2) {
                throw new StackOverflowError();
              }
              return CostQueryResponse.read(in, TargetReader.json(SourceLimits.DEFAULT), CostQueryResponse.DEFAULT_MATCH, 10);
            });
    closing.add(feed);
    feed.start();
    await(() -> feed.reads() >= 1, Duration.ofSeconds(10), "a good read after the errors");
    assertTrue(calls.get() >= 3);
    assertTrue(feed.isUp());
    assertEquals(1, feed.failureEpisodes(), "two failures in a row are one episode");
  }

  // 2. The cost answer is read streaming, with a series cap like the sources' target cap.
  @Test
  void aCostAnswerWithMoreSeriesThanTheCapFailsWithoutBeingHeld() throws Exception {
    StringBuilder b = new StringBuilder("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[");
    for (int i = 0; i < 50; i++) {
      b.append(i == 0 ? "" : ",").append(sample("j", "h:" + i, "1"));
    }
    b.append("]}}");
    byte[] body = b.toString().getBytes(StandardCharsets.UTF_8);
    IOException e =
        assertThrows(
            IOException.class,
            () -> CostQueryResponse.read(new ByteArrayInputStream(body), TargetReader.json(SourceLimits.DEFAULT), CostQueryResponse.DEFAULT_MATCH, 20));
    assertTrue(e.getMessage().startsWith("more than 20 series"), e.getMessage());
    assertEquals(50, CostQueryResponse.read(new ByteArrayInputStream(body), TargetReader.json(SourceLimits.DEFAULT), CostQueryResponse.DEFAULT_MATCH, 50).costs().size());
  }

  // 3. The cost query's body is under the request deadline.
  @Test
  void aCostAnswerThatDripsIsCutAtTheDeadlineAndMarksTheFeedDown() throws Exception {
    URI url =
        serve(
            ex -> {
              ex.sendResponseHeaders(200, 0);
              try (OutputStream out = ex.getResponseBody()) {
                out.write("{\"status\":\"success\",".getBytes(StandardCharsets.UTF_8));
                out.flush();
                for (int i = 0; i < 30; i++) {
                  Thread.sleep(1000);
                  out.write(' ');
                  out.flush();
                }
              } catch (IOException | InterruptedException e) {
                // the client went away: what the test wants
              }
            });
    CostFeed feed = new CostFeed(costs(url, Duration.ofMinutes(1)), Duration.ofSeconds(1), () -> {}, null);
    long start = System.nanoTime();
    assertFalse(feed.refresh());
    long millis = (System.nanoTime() - start) / 1_000_000;
    assertTrue(millis < 4000, "cut at the 1 s deadline, not after the 30 s drip: " + millis + " ms");
    assertFalse(feed.isUp());
    assertEquals(1, feed.failureEpisodes());
  }

  // 4. The cost query's error text is escaped and cut before it reaches a log line.
  @Test
  void aCostErrorTextIsEscapedAndCut() throws Exception {
    String forged = "bad\n[main] ERROR forged line \u001b[31m" + "x".repeat(60_000);
    String answer = "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":" + TargetGroups.JSON.writeValueAsString(forged) + "}";
    URI url = serve(ex -> answer(ex, 400, answer));
    CostFeed feed = new CostFeed(costs(url, Duration.ofMinutes(1)), Duration.ofSeconds(5), () -> {}, null);
    IOException e =
        assertThrows(
            IOException.class,
            () ->
                CostQueryResponse.read(
                    new ByteArrayInputStream(answer.getBytes(StandardCharsets.UTF_8)),
                    TargetReader.json(SourceLimits.DEFAULT),
                    CostQueryResponse.DEFAULT_MATCH,
                    10));
    String m = e.getMessage();
    assertFalse(m.contains("\n") || m.contains("\u001b"), m);
    assertTrue(m.length() < 600, "cut: " + m.length());
    assertTrue(m.contains("\\n[main] ERROR forged"), "escaped, still readable: " + m);
    String line = FeedLoop.Episode.describe(new IOException("http://p/ " + forged));
    assertFalse(line.contains("\n") || line.contains("\u001b"));
    assertTrue(line.length() <= LogSafe.MAX_CHARS + 3, line);
    assertFalse(feed.refresh());
    assertEquals(1, feed.failureEpisodes());
  }

  // 5. Costs never leave a target unscraped: absurd costs are scaled to what fits, logged once.
  @Test
  void absurdCostsUnderAPerCollectorLimitLeaveNoTargetUnassigned() {
    List<Collector> collectors = List.of(Collector.of("a"), Collector.of("b"), Collector.of("c"));
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      targets.add(Target.of("j", "h:" + i).withCost(Target.MAX_COST));
    }
    Allocator unclamped = Allocators.builder(Allocators.CONSISTENT_HASHING).maxCostPerCollector(20_000).build();
    unclamped.setCollectors(collectors);
    unclamped.setTargets(targets);
    assertTrue(unclamped.snapshot().unassigned().size() > 100, "without the clamp the limit strands targets");

    Allocator allocator = Allocators.builder(Allocators.CONSISTENT_HASHING).maxCostPerCollector(20_000).build();
    allocator.setCollectors(collectors);
    CostClamp clamp = new CostClamp(20_000, () -> allocator.snapshot().collectors());
    allocator.setTargets(clamp.apply(targets));
    assertEquals(Set.of(), allocator.snapshot().unassigned());
    allocator.setTargets(clamp.apply(targets));
    assertEquals(1, clamp.episodes(), "logged once");

    List<Target> modest = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      modest.add(Target.of("j", "h:" + i).withCost(10 + i % 7));
    }
    assertSame(modest, clamp.apply(modest), "costs that fit are given as they are");
  }

  // 11. A slow source delays only itself.
  @Test
  void aSlowSourceDelaysNoOtherSourcesChange() throws Exception {
    AtomicReference<List<Target>> fast = new AtomicReference<>(List.of(Target.of("fast", "f:1")));
    TargetSource quick =
        new TargetSource() {
          @Override
          public String describe() {
            return "quick";
          }

          @Override
          public List<Target> read() {
            return fast.get();
          }
        };
    TargetSource slow =
        new TargetSource() {
          @Override
          public String describe() {
            return "slow";
          }

          @Override
          public List<Target> read() throws InterruptedException {
            Thread.sleep(3_000);
            return List.of(Target.of("slow", "s:1"));
          }
        };
    Allocator allocator = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    allocator.setCollectors(List.of(Collector.of("c")));
    TargetFeed feed =
        TargetFeed.builder(allocator)
            .source(slow)
            .source(quick)
            .interval(Duration.ofMillis(200))
            .readTimeout(Duration.ofSeconds(10))
            .build();
    closing.add(feed);
    feed.start();
    await(() -> allocator.snapshot().targets().size() == 2, Duration.ofSeconds(15), "both sources read");
    fast.set(List.of(Target.of("fast", "f:1"), Target.of("fast", "f:2")));
    long start = System.nanoTime();
    await(() -> allocator.snapshot().targets().size() == 3, Duration.ofSeconds(10), "the quick change");
    long millis = (System.nanoTime() - start) / 1_000_000;
    assertTrue(millis < 1_500, "served within a few intervals, not after the slow source's 3 s: " + millis + " ms");
  }

  // 12. Reloads start no new HTTP client (a selector thread and its descriptors each).
  @Test
  void reloadsLeaveThreadsAndDescriptorsWhereTheyWere() throws Exception {
    URI sd = serve(ex -> answer(ex, 200, "[{\"targets\":[\"a:1\",\"b:1\"]}]"));
    URI prom = serve(ex -> answer(ex, 200, vector(sample("j", "a:1", "5"))));
    Path file = dir.resolve("c.yaml");
    int port = PrometheusEndToEndTest.freePort();
    java.util.function.IntFunction<String> config =
        i -> "listen: 127.0.0.1:" + port + "\nrefreshInterval: " + (i % 2 == 0 ? "5s" : "6s") + "\n"
            + "targets: [{httpSd: {job: j, url: '" + sd + "/sd'}}]\n"
            + "costs: {url: '" + prom + "', refreshInterval: 5s}\n"
            + "collectors: {static: [x]}\n";
    Files.writeString(file, config.apply(0));
    Reloader reloader = new Reloader(file, true);
    Service first = new Service(ServerConfig.read(file), null, reloader).start();
    reloader.started(first);
    try {
      await(first::isReady, Duration.ofSeconds(20), "ready");
      Files.writeString(file, config.apply(1));
      reloader.reload(); // warm-up: classes, pools
      long newestBefore = newestClient();
      int threadsBefore = Thread.activeCount();
      long fdsBefore = openFileDescriptors();
      for (int i = 2; i < 32; i++) {
        Files.writeString(file, config.apply(i));
        assertEquals("reloaded", reloader.reload());
      }
      Thread.sleep(500); // closed loops' threads end
      assertEquals(List.of(), clientsAfter(newestBefore), "no HttpClient (a selector thread) made by the reloads");
      assertTrue(Thread.activeCount() <= threadsBefore + 4, "threads: " + threadsBefore + " -> " + Thread.activeCount());
      long fdsAfter = openFileDescriptors();
      assertTrue(fdsBefore < 0 || fdsAfter <= fdsBefore + 10, "descriptors: " + fdsBefore + " -> " + fdsAfter);
    } finally {
      reloader.current().close();
    }
  }

  /** The JDK numbers its clients in order: the selector threads' numbers, of live clients. */
  private static List<Long> clientNumbers() {
    return Thread.getAllStackTraces().keySet().stream()
        .map(Thread::getName)
        .filter(n -> n.startsWith("HttpClient-") && n.endsWith("-SelectorManager"))
        .map(n -> Long.parseLong(n.substring("HttpClient-".length(), n.length() - "-SelectorManager".length())))
        .toList();
  }

  private static long newestClient() {
    return clientNumbers().stream().mapToLong(Long::longValue).max().orElse(0);
  }

  private static List<Long> clientsAfter(long newest) {
    return clientNumbers().stream().filter(n -> n > newest).toList();
  }

  private static long openFileDescriptors() throws IOException {
    Path fds = Path.of("/proc/self/fd");
    if (!Files.isDirectory(fds)) {
      return -1;
    }
    try (var s = Files.list(fds)) {
      return s.count();
    }
  }

  // 13. Credentials in a query string are shown nowhere.
  @Test
  void secretsInTheQueryStringAreRedactedInLogsMetricsAndMetaUrl() throws Exception {
    assertEquals(
        "http://u:<secret>@sd:80/targets?token=<secret>&zone=a&ACCESS_TOKEN=<secret>&apikey=<secret>&password=<secret>&sig=<secret>",
        Redaction.url(
            URI.create("http://u:pw@sd:80/targets?token=t0p&zone=a&ACCESS_TOKEN=t1&apikey=k&password=p&sig=s"),
            Set.of("sig")));
    assertEquals("http://sd/targets?zone=a", Redaction.url(URI.create("http://sd/targets?zone=a"), Set.of()));

    List<String> seen = new CopyOnWriteArrayList<>();
    URI sd = serve(ex -> {
      seen.add(ex.getRequestURI().getRawQuery());
      answer(ex, 200, "[{\"targets\":[\"a:1\"]}]");
    });
    Path file = dir.resolve("c.yaml");
    Files.writeString(
        file,
        "listen: 127.0.0.1:0\n"
            + "targets: [{httpSd: {job: j, url: '" + sd + "/sd?token=t0psecret&team=a&sig=s1gned', secret_params: [sig]}}]\n"
            + "collectors: {static: [x]}\n");
    try (Service s = new Service(ServerConfig.read(file)).start()) {
      s.feed().refresh();
      assertTrue(seen.contains("token=t0psecret&team=a&sig=s1gned"), "the request carries them: " + seen);
      String served = Http.get("http://127.0.0.1:" + s.port() + "/targets?collector=x").body();
      String metrics = Http.get("http://127.0.0.1:" + s.port() + "/metrics").body();
      String describe = s.feed().sources().get(0).describe();
      for (String shown : List.of(served, metrics, describe)) {
        assertFalse(shown.contains("t0psecret") || shown.contains("s1gned"), shown);
      }
      assertTrue(served.contains("token=<secret>&team=a&sig=<secret>"), served);
    }
  }
}
