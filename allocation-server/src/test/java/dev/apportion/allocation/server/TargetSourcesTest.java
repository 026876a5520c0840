package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TargetSourcesTest {
  @TempDir Path dir;
  private HttpServer server;
  private final AtomicReference<String> body = new AtomicReference<>("[]");
  private final AtomicReference<Integer> status = new AtomicReference<>(200);

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop(0);
    }
  }

  private URI serve() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
    server.createContext(
        "/",
        ex -> {
          byte[] b = body.get().getBytes(StandardCharsets.UTF_8);
          ex.sendResponseHeaders(status.get(), b.length);
          try (OutputStream out = ex.getResponseBody()) {
            out.write(b);
          }
        });
    server.start();
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  private static Set<String> addresses(List<Target> targets) {
    Set<String> out = new TreeSet<>();
    targets.forEach(t -> out.add(t.address()));
    return out;
  }

  @Test
  void fileSdReadsJsonAndYamlWithPrometheusLabels() throws Exception {
    Files.writeString(dir.resolve("a.json"), "[{\"targets\":[\"h1:1\",\"h2:1\"],\"labels\":{\"env\":\"prod\"}}]");
    Files.writeString(
        dir.resolve("b.yaml"),
        "- targets: ['h3:1']\n  labels: {__meta_kubernetes_pod_node_name: n1}\n");
    Files.writeString(dir.resolve("ignored.txt"), "not targets");
    TargetSource s = TargetSource.fileSd("j", List.of(dir.resolve("*.json"), dir.resolve("b.yaml")));
    List<Target> targets = s.read();
    assertEquals(Set.of("h1:1", "h2:1", "h3:1"), addresses(targets));
    Target h1 = targets.stream().filter(t -> t.address().equals("h1:1")).findFirst().orElseThrow();
    assertEquals("j", h1.job());
    assertEquals("prod", h1.labels().get("env"));
    assertEquals("h1:1", h1.labels().get("__address__"));
    assertEquals(dir.resolve("a.json").toString(), h1.labels().get("__meta_filepath"));
    Target h3 = targets.stream().filter(t -> t.address().equals("h3:1")).findFirst().orElseThrow();
    assertEquals(Optional.of("n1"), h3.node());
  }

  @Test
  void fileSdReReadsOnlyWhenAFileChanges() throws Exception {
    Path f = dir.resolve("t.json");
    Files.writeString(f, "[{\"targets\":[\"h1:1\"]}]");
    TargetSource s = TargetSource.fileSd("j", List.of(dir.resolve("*.json")));
    List<Target> first = s.read();
    assertSame(first, s.read(), "unchanged files are not re-read");
    Files.writeString(f, "[{\"targets\":[\"h1:1\",\"h2:2\"]}]");
    Files.setLastModifiedTime(f, FileTime.fromMillis(Files.getLastModifiedTime(f).toMillis() + 2000));
    assertEquals(Set.of("h1:1", "h2:2"), addresses(s.read()));
    Files.writeString(dir.resolve("u.json"), "[{\"targets\":[\"h3:3\"]}]");
    assertEquals(Set.of("h1:1", "h2:2", "h3:3"), addresses(s.read()), "a new file matching the glob");
    Files.delete(f);
    assertEquals(Set.of("h3:3"), addresses(s.read()), "a file that went");
  }

  @Test
  void malformedFilesAreErrorsNamingTheFile() throws Exception {
    Path f = dir.resolve("t.json");
    Files.writeString(f, "{\"targets\": 1}");
    IOException e = assertThrows(IOException.class, () -> TargetSource.fileSd("j", List.of(f)).read());
    assertTrue(e.getMessage().contains(f.toString()), e.getMessage());
    Files.writeString(f, "[{\"targets\": [\"\"]}]");
    assertThrows(IOException.class, () -> TargetSource.fileSd("j", List.of(f)).read());
  }

  @Test
  void httpSdAddsTheUrlMetaLabel() throws Exception {
    URI base = serve();
    body.set("[{\"targets\":[\"a:1\"],\"labels\":{\"x\":\"y\"}}]");
    URI url = base.resolve("/sd");
    TargetSource s = TargetSource.httpSd("apps", url, HttpClient.newHttpClient(), Duration.ofSeconds(5));
    List<Target> t = s.read();
    assertEquals(1, t.size());
    assertEquals("apps", t.get(0).job());
    assertEquals("y", t.get(0).labels().get("x"));
    assertEquals(url.toString(), t.get(0).labels().get("__meta_url"));
    status.set(500);
    IOException e = assertThrows(IOException.class, s::read);
    assertTrue(e.getMessage().contains("HTTP 500"), e.getMessage());
  }

  /**
   * A source reads through a target interner, so an unchanged target of the answer comes
   * back as the same instance (which the allocator recognises at once), a changed one is new.
   */
  @Test
  void anUnchangedAnswerGivesBackTheSameTargets() throws Exception {
    URI base = serve();
    body.set("[{\"targets\":[\"a:1\",\"b:1\"],\"labels\":{\"x\":\"y\"}},"
        + "{\"targets\":[\"c:1\"],\"labels\":{\"x\":\"z\"}}]");
    TargetSource http = TargetSource.httpSd("apps", base.resolve("/sd"), HttpClient.newHttpClient(),
        Duration.ofSeconds(5));
    List<Target> first = http.read();
    List<Target> second = http.read();
    assertEquals(3, second.size());
    for (int i = 0; i < 3; i++) {
      assertSame(first.get(i), second.get(i), "unchanged target " + i);
    }
    body.set("[{\"targets\":[\"a:1\",\"b:1\"],\"labels\":{\"x\":\"y\"}},"
        + "{\"targets\":[\"c:1\"],\"labels\":{\"x\":\"w\"}}]");
    List<Target> third = http.read();
    assertSame(first.get(0), third.get(0));
    assertSame(first.get(1), third.get(1));
    assertFalse(first.get(2).sameLabels(third.get(2)), "c:1's labels changed");
    assertEquals("w", third.get(2).labels().get("x"));

    body.set(
        """
        {"status":"success","data":{"activeTargets":[
          {"discoveredLabels":{"__address__":"10.0.0.1:9100","job":"node"},"scrapePool":"node"}],
         "droppedTargets":[]}}
        """);
    TargetSource prometheus =
        TargetSource.prometheusTargets(base, HttpClient.newHttpClient(), Duration.ofSeconds(5));
    assertSame(prometheus.read().get(0), prometheus.read().get(0));
  }

  @Test
  void prometheusTargetsKeepDiscoveredLabelsUnderTheScrapePool() throws Exception {
    URI base = serve();
    body.set(
        """
        {"status":"success","data":{"activeTargets":[
          {"discoveredLabels":{"__address__":"10.0.0.1:9100","job":"node",
             "__meta_kubernetes_pod_node_name":"n1","__metrics_path__":"/metrics"},
           "labels":{"instance":"10.0.0.1:9100","job":"node"},"scrapePool":"node","health":"up"},
          {"discoveredLabels":{"__address__":"10.0.0.2:8080","job":"apps"},
           "scrapePool":"apps","health":"up"}],
         "droppedTargets":[]}}
        """);
    TargetSource s = TargetSource.prometheusTargets(base, HttpClient.newHttpClient(), Duration.ofSeconds(5));
    List<Target> t = s.read();
    assertEquals(2, t.size());
    Target node = t.get(0);
    assertEquals("node", node.job());
    assertEquals("10.0.0.1:9100", node.address());
    assertEquals(Optional.of("n1"), node.node());
    assertEquals("apps", t.get(1).job());
    body.set("{\"status\":\"error\"}");
    assertThrows(IOException.class, s::read);
  }

  @Test
  void theFeedCombinesSourcesAndKeepsAFailingSourcesLastGoodTargets() throws Exception {
    URI base = serve();
    body.set("[{\"targets\":[\"a:1\",\"b:1\"]}]");
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"c:1\"]}]");
    Allocator allocator = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    allocator.setCollectors(List.of(Collector.of("x")));
    TargetFeed feed =
        TargetFeed.builder(allocator)
            .source(TargetSource.httpSd("h", base.resolve("/sd"), HttpClient.newHttpClient(), Duration.ofSeconds(5)))
            .source(TargetSource.fileSd("f", List.of(dir.resolve("t.json"))))
            .build();
    assertFalse(feed.isReady());
    feed.refresh();
    assertTrue(feed.isReady());
    assertEquals(Set.of("a:1", "b:1", "c:1"), addresses(List.copyOf(allocator.snapshot().targets())));
    status.set(503);
    feed.refresh();
    assertFalse(feed.isUp(0));
    assertTrue(feed.isUp(1));
    assertEquals(3, allocator.snapshot().targets().size(), "the failing source keeps its targets");
    status.set(200);
    body.set("[{\"targets\":[\"a:1\"]}]");
    feed.refresh();
    assertTrue(feed.isUp(0));
    assertEquals(Set.of("a:1", "c:1"), addresses(List.copyOf(allocator.snapshot().targets())));
  }

  @Test
  void theFeedSetsNothingUntilEverySourceWasReadOnce() throws Exception {
    URI base = serve();
    status.set(500);
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"c:1\"]}]");
    Allocator allocator = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    TargetFeed feed =
        TargetFeed.builder(allocator)
            .source(TargetSource.fileSd("f", List.of(dir.resolve("t.json"))))
            .source(TargetSource.httpSd("h", base.resolve("/sd"), HttpClient.newHttpClient(), Duration.ofSeconds(5)))
            .build();
    feed.refresh();
    assertFalse(feed.isReady());
    assertTrue(allocator.snapshot().targets().isEmpty());
  }

  @Test
  void invalidLabelNamesAreDroppedAtIngestionAndReportedOncePerEpisode() throws Exception {
    URI base = serve();
    body.set("[{\"targets\":[\"a:1\"],\"labels\":{\"env\":\"prod\",\"team-name\":\"x\",\"1st\":\"y\",\"\":\"z\"}}]");
    HttpSdSource s = (HttpSdSource) TargetSource.httpSd("apps", base.resolve("/sd"), HttpClient.newHttpClient(), Duration.ofSeconds(5));
    List<Target> t = s.read();
    assertEquals(1, t.size(), "the target is kept");
    assertEquals(Set.of("env", "__address__", "__meta_url"), t.get(0).labels().keySet());
    assertEquals(3, s.labelNames().lastDropped());
    s.read();
    assertEquals(1, s.labelNames().episodes(), "a second bad read is the same episode");
    body.set("[{\"targets\":[\"a:1\"],\"labels\":{\"env\":\"prod\"}}]");
    s.read();
    assertEquals(0, s.labelNames().lastDropped());
    body.set("[{\"targets\":[\"a:1\"],\"labels\":{\"bad.name\":\"x\"}}]");
    s.read();
    assertEquals(2, s.labelNames().episodes(), "bad again after a clean read: a new episode");

    assertTrue(LabelNames.valid("_a1"));
    assertTrue(LabelNames.valid("__meta_kubernetes_pod_node_name"));
    assertFalse(LabelNames.valid("a-b"));
    assertFalse(LabelNames.valid("9a"));
    assertFalse(LabelNames.valid("zoné"));
  }

  @Test
  void prometheusTargetsDropInvalidLabelNamesToo() throws Exception {
    URI base = serve();
    body.set(
        "{\"status\":\"success\",\"data\":{\"activeTargets\":[{\"scrapePool\":\"p\",\"discoveredLabels\":"
            + "{\"__address__\":\"a:1\",\"ok\":\"1\",\"not-ok\":\"2\"}}]}}");
    TargetSource s = TargetSource.prometheusTargets(base, HttpClient.newHttpClient(), Duration.ofSeconds(5));
    List<Target> t = s.read();
    assertEquals(Set.of("__address__", "ok"), t.get(0).labels().keySet());
  }

  @Test
  void prometheusTargetsWithSpacesAroundTheAddressAreReadWithTheTrimmedOne() throws Exception {
    URI base = serve();
    body.set(
        "{\"status\":\"success\",\"data\":{\"activeTargets\":[{\"scrapePool\":\"p\",\"discoveredLabels\":"
            + "{\"__address__\":\" a:1 \",\"team\":\"x\"}}]}}");
    TargetSource s = TargetSource.prometheusTargets(base, HttpClient.newHttpClient(), Duration.ofSeconds(5));
    List<Target> t = s.read();
    assertEquals(1, t.size());
    assertEquals("a:1", t.get(0).address());
    assertEquals("a:1", t.get(0).labels().get("__address__"));
  }

  /** One file with a bad label name must not make the HTTP SD answer one Prometheus rejects. */
  @Test
  void aFileWithABadLabelNameDoesNotBreakTheTargetsEndpoint() throws Exception {
    Files.writeString(dir.resolve("good.json"), "[{\"targets\":[\"g:1\"],\"labels\":{\"team\":\"a\"}}]");
    Files.writeString(dir.resolve("bad.yaml"), "- targets: ['b:1']\n  labels: {team-name: b, env: prod}\n");
    Path config = dir.resolve("c.yaml");
    Files.writeString(
        config,
        """
        listen: 127.0.0.1:0
        refreshInterval: 1h
        targets:
          - fileSd: {job: good, files: [good.json]}
          - fileSd: {job: bad, files: [bad.yaml]}
        collectors: {static: [only]}
        """);
    try (Service service = new Service(ServerConfig.read(config)).start()) {
      service.feed().refresh();
      var groups = Http.get("http://127.0.0.1:" + service.port() + "/targets?collector=only").json();
      Set<String> served = new TreeSet<>();
      Set<String> names = new TreeSet<>();
      for (var g : groups) {
        g.get("targets").forEach(a -> served.add(a.asText()));
        g.get("labels").fieldNames().forEachRemaining(names::add);
      }
      assertEquals(Set.of("b:1", "g:1"), served, "both files' targets are served");
      for (String n : names) {
        assertTrue(LabelNames.valid(n), "served label name " + n);
      }
      assertTrue(names.contains("env"));
    }
  }

  @Test
  void aFailingSetTargetsIsLoggedOncePerEpisode() throws Exception {
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"c:1\"]}]");
    Allocator real = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    java.util.concurrent.atomic.AtomicBoolean refuse = new java.util.concurrent.atomic.AtomicBoolean(true);
    Allocator refusing =
        (Allocator)
            java.lang.reflect.Proxy.newProxyInstance(
                Allocator.class.getClassLoader(),
                new Class<?>[] {Allocator.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("setTargets") && refuse.get()) {
                    throw new IllegalStateException("refused");
                  }
                  try {
                    return method.invoke(real, args);
                  } catch (java.lang.reflect.InvocationTargetException e) {
                    throw e.getCause();
                  }
                });
    TargetFeed feed =
        TargetFeed.builder(refusing).source(TargetSource.fileSd("f", List.of(dir.resolve("t.json")))).build();
    for (int i = 0; i < 3; i++) {
      assertThrows(IllegalStateException.class, feed::refresh);
    }
    assertEquals(1, feed.setFailureEpisodes(), "three failing refreshes, one episode");
    assertFalse(feed.isReady());
    refuse.set(false);
    feed.refresh();
    assertTrue(feed.isReady());
    refuse.set(true);
    assertThrows(IllegalStateException.class, feed::refresh);
    assertThrows(IllegalStateException.class, feed::refresh);
    assertEquals(2, feed.setFailureEpisodes(), "failing again after a recovery: a second episode");
  }
}
