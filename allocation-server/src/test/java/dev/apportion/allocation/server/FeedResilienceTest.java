package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The target feed survives anything a source does: errors, slowness, huge or malformed answers,
 * credentials that must not be shown.
 */
class FeedResilienceTest {
  @TempDir Path dir;
  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  private static Set<String> addresses(Allocator a) {
    Set<String> out = new TreeSet<>();
    a.snapshot().targets().forEach(t -> out.add(t.address()));
    return out;
  }

  private static Allocator allocator() {
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    a.setCollectors(List.of(Collector.of("x")));
    return a;
  }

  /** A source whose reads do what the test says. */
  private static final class Scripted implements TargetSource {
    final AtomicReference<Object> next = new AtomicReference<>(List.of());
    final AtomicInteger reads = new AtomicInteger();

    @Override
    public String describe() {
      return "scripted";
    }

    @Override
    @SuppressWarnings("unchecked")
    public List<Target> read() throws IOException {
      reads.incrementAndGet();
      Object o = next.get();
      if (o instanceof Error e) {
        throw e;
      }
      if (o instanceof RuntimeException e) {
        throw e;
      }
      return (List<Target>) o;
    }
  }

  /**
   * A raw HTTP server on loopback: each connection gets {@code headers}, then {@code body} chunks
   * written {@code pauseMillis} apart until the client goes; counts the body bytes written.
   */
  private final class RawServer implements AutoCloseable {
    final ServerSocket socket;
    final AtomicLong written = new AtomicLong();
    final ConcurrentLinkedQueue<String> requests = new ConcurrentLinkedQueue<>();
    volatile String headers;
    volatile byte[] first = new byte[0];
    volatile byte[] chunk;
    volatile long pauseMillis;
    volatile long chunks;

    RawServer(String headers, byte[] chunk, long pauseMillis, long chunks) throws IOException {
      this.headers = headers;
      this.chunk = chunk;
      this.pauseMillis = pauseMillis;
      this.chunks = chunks;
      this.socket = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
      Thread t = new Thread(this::serve, "raw-server");
      t.setDaemon(true);
      t.start();
      closing.add(this);
    }

    URI uri(String path) {
      return URI.create("http://127.0.0.1:" + socket.getLocalPort() + path);
    }

    private void serve() {
      while (!socket.isClosed()) {
        try {
          Socket s = socket.accept();
          Thread t =
              new Thread(
                  () -> {
                    try (s) {
                      InputStream in = s.getInputStream();
                      StringBuilder req = new StringBuilder();
                      while (!req.toString().endsWith("\r\n\r\n")) {
                        int b = in.read();
                        if (b < 0) {
                          return;
                        }
                        req.append((char) b);
                      }
                      requests.add(req.toString());
                      OutputStream out = s.getOutputStream();
                      out.write(headers.getBytes(StandardCharsets.US_ASCII));
                      out.write(first);
                      out.flush();
                      for (long i = 0; i < chunks; i++) {
                        out.write(chunk);
                        out.flush();
                        written.addAndGet(chunk.length);
                        if (pauseMillis > 0) {
                          Thread.sleep(pauseMillis);
                        }
                      }
                    } catch (IOException | InterruptedException e) {
                      // the client went away: what the tests provoke
                    }
                  });
          t.setDaemon(true);
          t.start();
        } catch (IOException e) {
          return;
        }
      }
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  private static final String CHUNKED =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

  /** One HTTP/1.1 chunk holding {@code data}. */
  private static byte[] chunk(String data) {
    byte[] d = data.getBytes(StandardCharsets.US_ASCII);
    return (Integer.toHexString(d.length) + "\r\n" + data + "\r\n").getBytes(StandardCharsets.US_ASCII);
  }

  private TargetFeed feed(Allocator a, Duration readTimeout, TargetSource... sources) {
    TargetFeed.Builder b = TargetFeed.builder(a).interval(Duration.ofMillis(100)).readTimeout(readTimeout);
    for (TargetSource s : sources) {
      b.source(s);
    }
    TargetFeed f = b.build();
    closing.add(f);
    return f;
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  @Test
  void anErrorInAReadMarksTheSourceDownKeepsItsTargetsAndTheScheduleGoesOn() throws Exception {
    Scripted s = new Scripted();
    s.next.set(List.of(Target.of("j", "a:1")));
    Allocator a = allocator();
    TargetFeed feed = feed(a, Duration.ofSeconds(5), s).start();
    await(feed::isReady, "the first read");
    s.next.set(new OutOfMemoryError("Java heap space (thrown by the test)"));
    int before = s.reads.get();
    await(() -> s.reads.get() > before + 3, "three more scheduled reads after the error");
    assertFalse(feed.isUp(0), "marked down");
    assertEquals(Set.of("a:1"), addresses(a), "last good targets kept");
    assertEquals(1, feed.failureEpisodes(), "logged once for the episode");
    s.next.set(new StackOverflowError());
    int more = s.reads.get();
    await(() -> s.reads.get() > more + 2, "reads after another kind of error");
    assertEquals(1, feed.failureEpisodes(), "still one episode");
    s.next.set(List.of(Target.of("j", "b:1")));
    await(() -> addresses(a).equals(Set.of("b:1")), "the recovered source's targets");
    assertTrue(feed.isUp(0));
  }

  @Test
  void aBodyThatDripsIsCutAtTheDeadlineAndDelaysNoOtherSource() throws Exception {
    // One byte of whitespace per 100 ms for ever: the headers came at once, the body never ends.
    RawServer drip = new RawServer(CHUNKED, chunk(" "), 100, Long.MAX_VALUE);
    Path file = dir.resolve("t.json");
    Files.writeString(file, "[{\"targets\":[\"f:1\"]}]");
    Scripted good = new Scripted();
    good.next.set(List.of(Target.of("h", "old:1")));
    AtomicReference<TargetSource> current = new AtomicReference<>(good);
    TargetSource http = TargetSource.httpSd("h", drip.uri("/sd"), HttpClient.newHttpClient(), Duration.ofSeconds(1));
    TargetSource switching =
        new TargetSource() {
          @Override
          public String describe() {
            return "switching";
          }

          @Override
          public List<Target> read() throws IOException, InterruptedException {
            return current.get().read();
          }
        };
    Allocator a = allocator();
    TargetFeed feed = feed(a, Duration.ofSeconds(1), TargetSource.fileSd("f", List.of(file)), switching);
    feed.refresh();
    assertEquals(Set.of("f:1", "old:1"), addresses(a));
    current.set(http);
    assertTimeoutPreemptively(
        Duration.ofSeconds(15),
        () -> {
          feed.refresh();
          assertFalse(feed.isUp(1), "the dripping source is down after the deadline");
          assertTrue(feed.isUp(0));
          Files.writeString(file, "[{\"targets\":[\"f:2\"]}]");
          Files.setLastModifiedTime(
              file, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 5000));
          feed.refresh();
          assertTrue(feed.isUp(0));
          assertFalse(feed.isUp(1));
        });
    assertEquals(Set.of("f:2", "old:1"), addresses(a), "the file's change is served meanwhile");
    assertEquals(1, feed.failureEpisodes());
  }

  @Test
  void anEndlessBodyIsCutAtTheByteCapWithoutBeingHeld() throws Exception {
    // An endless list of empty groups as fast as the socket takes it.
    StringBuilder groups = new StringBuilder();
    for (int i = 0; i < 1000; i++) {
      groups.append("{\"targets\":[]},");
    }
    RawServer endless = new RawServer(CHUNKED, chunk(groups.toString()), 0, Long.MAX_VALUE);
    endless.first = chunk("[");
    SourceLimits limits = new SourceLimits(1 << 20, 1000, 16, 1024);
    HttpSdSource s = new HttpSdSource("h", endless.uri("/sd"), new HttpFetch(HttpClientOptions.NONE, null, Duration.ofSeconds(10), limits.maxBytes(), java.util.Set.of()), limits);
    IOException e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class, s::read);
    assertTrue(e.getMessage().contains("larger than 1048576 bytes"), e.getMessage());
  }

  @Test
  void tooManyTargetsOrLabelsFailTheReadAtTheLimit() throws Exception {
    SourceLimits limits = new SourceLimits(1 << 20, 3, 2, 1024);
    Path f = dir.resolve("many.json");
    Files.writeString(f, "[{\"targets\":[\"a:1\",\"b:1\"]},{\"targets\":[\"c:1\",\"d:1\"]}]");
    FileSdSource many = new FileSdSource("j", List.of(f), limits);
    IOException e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class, many::read);
    assertTrue(e.getMessage().contains("more than 3 targets"), e.getMessage());
    Path g = dir.resolve("labels.json");
    Files.writeString(g, "[{\"targets\":[\"a:1\"],\"labels\":{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"}}]");
    FileSdSource wide = new FileSdSource("j", List.of(g), limits);
    e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class, wide::read);
    assertTrue(e.getMessage().contains("more than 2 labels"), e.getMessage());
  }

  @Test
  void anEmptyHttpSdAnswerKeepsTheLastGoodTargets() throws Exception {
    RawServer sd = new RawServer("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 23\r\n\r\n", "[{\"targets\":[\"a:1\"]}]  ".getBytes(StandardCharsets.US_ASCII), 0, 1);
    Allocator a = allocator();
    TargetFeed feed = feed(a, Duration.ofSeconds(5), TargetSource.httpSd("h", sd.uri("/sd"), HttpClient.newHttpClient(), Duration.ofSeconds(5)));
    feed.refresh();
    assertEquals(Set.of("a:1"), addresses(a));
    sd.headers = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n";
    sd.chunks = 0;
    feed.refresh();
    assertFalse(feed.isUp(0));
    assertEquals(Set.of("a:1"), addresses(a), "an empty answer is not 'no targets'");
    sd.headers = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
    feed.refresh();
    assertFalse(feed.isUp(0), "no body and no length either");
    assertEquals(Set.of("a:1"), addresses(a));
    assertEquals(1, feed.failureEpisodes());
  }

  @Test
  void anEmptyFileKeepsTheLastGoodTargetsAndAnExplicitEmptyListClearsThem() throws Exception {
    Path f = dir.resolve("t.yaml");
    Files.writeString(f, "- targets: ['a:1']\n");
    Allocator a = allocator();
    TargetFeed feed = feed(a, Duration.ofSeconds(5), TargetSource.fileSd("j", List.of(f)));
    feed.refresh();
    assertEquals(Set.of("a:1"), addresses(a));
    Files.writeString(f, "");
    feed.refresh();
    assertFalse(feed.isUp(0));
    assertEquals(Set.of("a:1"), addresses(a));
    Files.writeString(f, "[]\n");
    feed.refresh();
    assertTrue(feed.isUp(0));
    assertEquals(Set.of(), addresses(a));
  }

  @Test
  void pathsThatCanNeverHoldTargetsAreErrorsNotEmptySources() throws Exception {
    Files.createDirectory(dir.resolve("d.json"));
    FileSdSource globbed = new FileSdSource("j", List.of(dir.resolve("*.json")), SourceLimits.DEFAULT);
    IOException e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class, globbed::read);
    assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
    FileSdSource device = new FileSdSource("j", List.of(Path.of("/dev/zero")), SourceLimits.DEFAULT);
    e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class, device::read);
    assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
    Path fifo = dir.resolve("fifo.json");
    Process mk = new ProcessBuilder("mkfifo", fifo.toString()).start();
    if (mk.waitFor() == 0) {
      FileSdSource pipe = new FileSdSource("j", List.of(fifo), SourceLimits.DEFAULT);
      IOException p =
          assertTimeoutPreemptively(
              Duration.ofSeconds(10),
              () -> org.junit.jupiter.api.Assertions.assertThrows(IOException.class, pipe::read));
      assertTrue(p.getMessage().contains("not a regular file"), p.getMessage());
    }
  }

  @Test
  void thePrometheusSourceDropsTheDiscoveringServersScrapeSettings() throws Exception {
    String answer =
        "{\"status\":\"success\",\"data\":{\"activeTargets\":[{\"discoveredLabels\":{"
            + "\"__address__\":\"a:1\",\"__meta_kubernetes_pod_node_name\":\"n1\",\"job\":\"pool\","
            + "\"__scrape_interval__\":\"1m\",\"__scrape_timeout__\":\"10s\",\"__metrics_path__\":\"/m\","
            + "\"__scheme__\":\"https\",\"__param_module\":\"http_2xx\"},"
            + "\"labels\":{\"job\":\"pool\"},\"scrapePool\":\"pool\",\"health\":\"up\"}],"
            + "\"droppedTargets\":[]}}";
    byte[] body = answer.getBytes(StandardCharsets.UTF_8);
    RawServer prom = new RawServer("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n", body, 0, 1);
    List<Target> targets =
        TargetSource.prometheusTargets(prom.uri(""), HttpClient.newHttpClient(), Duration.ofSeconds(5)).read();
    assertEquals(1, targets.size());
    assertEquals(
        Set.of("__address__", "__meta_kubernetes_pod_node_name", "job"),
        targets.get(0).labels().keySet());
    assertEquals("n1", targets.get(0).node().orElseThrow());
  }

  @Test
  void aPasswordInTheUrlIsSentAsBasicAuthAndNeverShown() throws Exception {
    byte[] body = "[{\"targets\":[\"a:1\"]}]".getBytes(StandardCharsets.UTF_8);
    RawServer sd = new RawServer("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n", body, 0, 1);
    URI url = URI.create(sd.uri("/sd").toString().replace("://", "://user:s3cr%40t@"));
    TargetSource s = TargetSource.httpSd("h", url, HttpClient.newHttpClient(), Duration.ofSeconds(5));
    List<Target> targets = s.read();
    assertFalse(s.describe().contains("s3cr"), s.describe());
    assertTrue(s.describe().contains("user:<secret>@"), s.describe());
    String meta = targets.get(0).labels().get("__meta_url");
    assertFalse(meta.contains("s3cr"), meta);
    String request = sd.requests.peek();
    String expected = "Basic " + Base64.getEncoder().encodeToString("user:s3cr@t".getBytes(StandardCharsets.UTF_8));
    assertTrue(request.contains("Authorization: " + expected), request);
  }
}
