package dev.apportion.allocation.server;

import static dev.apportion.allocation.server.CostQueryResponseTest.sample;
import static dev.apportion.allocation.server.CostQueryResponseTest.vector;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.io.OutputStream;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The live cost feed against an in-process query API. */
class CostFeedTest {
  @TempDir Path dir;
  private final List<HttpServer> servers = new ArrayList<>();
  private final AtomicReference<String> body = new AtomicReference<>(vector());
  private final AtomicReference<Integer> status = new AtomicReference<>(200);
  private final List<String> requests = new CopyOnWriteArrayList<>();
  private final List<String> authorizations = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    for (HttpServer s : servers) {
      s.stop(0);
    }
  }

  private URI serve(AtomicReference<String> answer) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
    server.createContext(
        "/",
        ex -> {
          requests.add(ex.getRequestURI().toString());
          String auth = ex.getRequestHeaders().getFirst("Authorization");
          authorizations.add(auth == null ? "" : auth);
          byte[] b = answer.get().getBytes(StandardCharsets.UTF_8);
          ex.sendResponseHeaders(status.get(), b.length);
          try (OutputStream out = ex.getResponseBody()) {
            out.write(b);
          }
        });
    server.start();
    servers.add(server);
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  private static CostsConfig config(List<URI> urls, HttpClientOptions http) {
    return new CostsConfig(urls, CostsConfig.DEFAULT_QUERY, Duration.ofSeconds(1), CostQueryResponse.DEFAULT_MATCH, http);
  }

  private static List<Long> costs(List<Target> targets) {
    return targets.stream().map(Target::cost).toList();
  }

  @Test
  void queriesTheInstantQueryApiAndAttachesTheCosts() throws Exception {
    URI url = serve(body);
    AtomicInteger reads = new AtomicInteger();
    CostFeed feed = new CostFeed(config(List.of(url), HttpClientOptions.NONE), Duration.ofSeconds(5), reads::incrementAndGet, null);
    List<Target> targets = List.of(Target.of("j", "a:1"), Target.of("j", "b:1"), Target.of("j", "c:1"));
    assertEquals(List.of(1L, 1L, 1L), costs(feed.attach(targets)), "before a read: the count balance");

    body.set(vector(sample("j", "a:1", "100"), sample("j", "b:1", "3000"), sample("other", "a:1", "7")));
    assertTrue(feed.refresh());
    assertEquals(1, reads.get(), "onRead runs after a successful read");
    assertEquals("/api/v1/query?query=scrape_samples_scraped", requests.get(0));
    assertEquals("", authorizations.get(0));
    // c has no sample: until a read covers every target, or the third read, the counts stand, so
    // that costs arrive all at once.
    assertEquals(List.of(1L, 1L, 1L), costs(feed.attach(targets)));
    assertTrue(feed.refresh());
    assertEquals(List.of(1L, 1L, 1L), costs(feed.attach(targets)));
    assertTrue(feed.refresh());
    List<Target> costed = feed.attach(targets);
    assertEquals(List.of(100L, 3000L, 3000L), costs(costed), "c has no sample: the median of 100 and 3000 (upper)");
    assertEquals(targets, costed);
    assertEquals(2, feed.lastMatched());
    assertEquals(3000, feed.lastFallback());
  }

  @Test
  void aFailedReadKeepsTheLastCostsAndIsOneEpisode() throws Exception {
    URI url = serve(body);
    AtomicInteger reads = new AtomicInteger();
    CostFeed feed = new CostFeed(config(List.of(url), HttpClientOptions.NONE), Duration.ofSeconds(5), reads::incrementAndGet, null);
    List<Target> targets = List.of(Target.of("j", "a:1"), Target.of("j", "b:1"));
    feed.attach(targets);
    body.set(vector(sample("j", "a:1", "10"), sample("j", "b:1", "20")));
    assertTrue(feed.refresh());
    assertEquals(List.of(10L, 20L), costs(feed.attach(targets)), "the first read covers every target");

    status.set(500);
    assertFalse(feed.refresh());
    assertFalse(feed.refresh());
    status.set(400);
    body.set("{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\"}");
    assertFalse(feed.refresh());
    status.set(200);
    body.set("{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1,\"4\"]}}");
    assertFalse(feed.refresh(), "a scalar cannot be matched with targets");
    assertEquals(1, feed.failureEpisodes(), "four failures in a row: one episode, one WARN");
    assertFalse(feed.isUp());
    assertEquals(1, reads.get(), "no re-apply after a failed read");
    assertEquals(List.of(10L, 20L), costs(feed.attach(targets)), "the last costs stay");

    body.set(vector(sample("j", "a:1", "11"), sample("j", "b:1", "21")));
    assertTrue(feed.refresh());
    assertTrue(feed.isUp());
    assertEquals(List.of(11L, 21L), costs(feed.attach(targets)));
    stop();
    servers.clear();
    assertFalse(feed.refresh(), "unreachable");
    assertEquals(2, feed.failureEpisodes(), "a new episode after the recovery");
    assertEquals(List.of(11L, 21L), costs(feed.attach(targets)));
  }

  @Test
  void aTargetWithoutASampleKeepsItsLastCostWhileItExists() throws Exception {
    URI url = serve(body);
    CostFeed feed = new CostFeed(config(List.of(url), HttpClientOptions.NONE), Duration.ofSeconds(5), () -> {}, null);
    Target a = Target.of("j", "a:1");
    Target b = Target.of("j", "b:1");
    Target big = Target.of("j", "big:1");
    feed.attach(List.of(a, b, big));
    body.set(vector(sample("j", "a:1", "10"), sample("j", "b:1", "20"), sample("j", "big:1", "5000")));
    assertTrue(feed.refresh());

    // big moves between collectors: the old one marked its series stale, the new one has not
    // scraped it yet. Forgetting its cost now would give it the median and move targets twice.
    body.set(vector(sample("j", "a:1", "10"), sample("j", "b:1", "20")));
    assertTrue(feed.refresh());
    assertEquals(List.of(10L, 20L, 5000L), costs(feed.attach(List.of(a, b, big))));

    // A bad sample is skipped: its target keeps its last cost too.
    body.set(vector(sample("j", "a:1", "10"), sample("j", "b:1", "NaN")));
    assertTrue(feed.refresh(), "a bad sample does not fail the read");
    assertEquals(List.of(10L, 20L, 5000L), costs(feed.attach(List.of(a, b, big))));

    // A failed scrape reports 0 samples: a target with a cost keeps it.
    body.set(vector(sample("j", "a:1", "10"), sample("j", "b:1", "20"), sample("j", "big:1", "0")));
    assertTrue(feed.refresh());
    assertEquals(List.of(10L, 20L, 5000L), costs(feed.attach(List.of(a, b, big))));
    Target empty = Target.of("j", "empty:1");
    body.set(vector(sample("j", "a:1", "10"), sample("j", "b:1", "20"), sample("j", "empty:1", "0")));
    assertTrue(feed.refresh());
    assertEquals(0, feed.attach(List.of(a, b, empty)).get(2).cost(), "0 with no cost before: 0");

    // Once big is gone from the targets, its cost is forgotten at the next read.
    feed.attach(List.of(a, b));
    assertTrue(feed.refresh());
    assertEquals(List.of(10L, 20L, 20L), costs(feed.attach(List.of(a, b, big))),
        "back again without a sample: the median of 10 and 20 (upper), not 5000");
  }

  @Test
  void severalUrlsAreCombinedAndAnyFailureKeepsTheLastCosts() throws Exception {
    // a:1 is in both answers: a handover in progress, scraped by two collectors for a moment.
    AtomicReference<String> other = new AtomicReference<>(vector(sample("j", "b:1", "200"), sample("j", "a:1", "90")));
    URI one = serve(body);
    URI two = serve(other);
    CostFeed feed = new CostFeed(config(List.of(one, URI.create(two + "/")), HttpClientOptions.NONE), Duration.ofSeconds(5), () -> {}, null);
    List<Target> targets = List.of(Target.of("j", "a:1"), Target.of("j", "b:1"));
    feed.attach(targets);
    body.set(vector(sample("j", "a:1", "100")));
    assertTrue(feed.refresh());
    assertEquals(List.of(100L, 200L), costs(feed.attach(targets)), "a:1 counts once, at the larger value");
    other.set("not json");
    body.set(vector(sample("j", "a:1", "1")));
    assertFalse(feed.refresh(), "one answer is not JSON: the whole read fails");
    assertEquals(List.of(100L, 200L), costs(feed.attach(targets)), "no half-read costs");
  }

  @Test
  void basicAuthAndBearerCredentialsAreSentAndFilesReReadAtEveryRequest() throws Exception {
    URI url = serve(body);
    new CostFeed(config(List.of(url), new HttpClientOptions("user", "pw", null, null, null, null, null, null, null, false)),
        Duration.ofSeconds(5), () -> {}, null).refresh();
    assertEquals("Basic dXNlcjpwdw==", authorizations.get(0), "user:pw");

    Path token = Files.writeString(dir.resolve("token"), "abc\n");
    HttpClientOptions bearer = new HttpClientOptions(null, null, null, "Bearer", null, token, null, null, null, false);
    CostFeed feed = new CostFeed(config(List.of(url), bearer), Duration.ofSeconds(5), () -> {}, null);
    feed.refresh();
    assertEquals("Bearer abc", authorizations.get(1));
    Files.writeString(token, "rotated");
    feed.refresh();
    assertEquals("Bearer rotated", authorizations.get(2));
    assertFalse(bearer.toString().contains("rotated") || bearer.toString().contains("abc"), bearer.toString());
    assertFalse(new HttpClientOptions("user", "s3cret", null, null, null, null, null, null, null, false).toString().contains("s3cret"));

    Files.delete(token);
    assertFalse(feed.refresh(), "an unreadable credentials file fails the read, keeping the costs");
    assertNull(HttpClientOptions.NONE.authorizationHeader());
  }

  @Test
  void theServiceAttachesCostsAndShowsTheBandInMetrics() throws Exception {
    URI url = serve(body);
    body.set(vector(sample("files", "a:1", "1000"), sample("files", "b:1", "100"), sample("files", "c:1", "100"),
        sample("files", "d:1", "100")));
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\",\"b:1\",\"c:1\",\"d:1\"]}]");
    Path config = dir.resolve("c.yaml");
    Files.writeString(config, """
        listen: 127.0.0.1:0
        refreshInterval: 1s
        targets: [{fileSd: {job: files, files: [t.json]}}]
        collectors:
          static: [{name: x, capacity: 2}, y]
        costs: {url: '%s', refreshInterval: 1s}
        """.formatted(url));
    try (Service s = new Service(ServerConfig.read(config)).start()) {
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      // A snapshot's target instances keep the cost they were placed with; the totals are current.
      while (s.allocator().snapshot().costOf("x") + s.allocator().snapshot().costOf("y") != 1300
          && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      Allocation a = s.allocator().snapshot();
      assertEquals(1300, a.costOf("x") + a.costOf("y"), "every cost read and attached");
      assertTrue(a.costOf("x") >= 1000 || a.costOf("y") >= 1000);
      String metrics = Http.get("http://127.0.0.1:" + s.port() + "/metrics").body();
      assertEquals(1.15, value(metrics, "apportion_server_cost_band_ratio{bound=\"upper\"}"), 1e-9);
      assertEquals(0.85, value(metrics, "apportion_server_cost_band_ratio{bound=\"lower\"}"), 1e-9);
      assertEquals(1, value(metrics, "apportion_server_costs_up"), 0);
      assertEquals(4, value(metrics, "apportion_server_cost_targets_matched"), 0);
      assertEquals(a.costOf("x") / (1300 * 2 / 3.0),
          value(metrics, "apportion_server_collector_cost_share_ratio{collector=\"x\"}"), 1e-9);
      assertEquals(a.costOf("y") / (1300 / 3.0),
          value(metrics, "apportion_server_collector_cost_share_ratio{collector=\"y\"}"), 1e-9);
      assertTrue(metrics.contains("allocator_cost_per_collector{collector=\"x\""), metrics);
    }
  }

  /** The value of the one line of {@code metrics} that starts with {@code series} and a space. */
  static double value(String metrics, String series) {
    for (String line : metrics.split("\n", -1)) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim());
      }
    }
    throw new AssertionError(series + " not in\n" + metrics);
  }
}
