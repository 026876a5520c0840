package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a client may do to the serving side: drip headers on a kept-alive connection or stall a
 * TLS handshake (closed at the header timeout), read slowly (answers are shared, not copied per
 * connection), call the reload endpoint (off unless enabled, quiet when nothing changed), swap
 * TLS files one at a time (only a matching pair is taken), signal the process while it starts
 * (never killed), or ask for a collector nobody knows (counted).
 */
class IncomingFaultsTest {
  @TempDir Path dir;
  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : closing) {
      try {
        c.close();
      } catch (IOException e) {
        // closing anyway
      }
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

  private static Allocator allocator(int targets) {
    Allocator allocator = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    List<Target> ts = new ArrayList<>();
    for (int i = 0; i < targets; i++) {
      ts.add(Target.of("j", "host-" + i + ".example:9100", Map.of("pod", "pod-" + i, "zone", "zone-" + (i % 3))));
    }
    allocator.setTargets(ts);
    return allocator;
  }

  /** Whether the server closed the socket (a read sees the end), waiting at most 1 ms. */
  private static boolean closedByServer(Socket s) throws IOException {
    s.setSoTimeout(1);
    try {
      return s.getInputStream().read() < 0;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // reset
    }
  }

  private static void readAnswer(InputStream in) throws IOException {
    // Headers, then Content-Length bytes.
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("closed");
      }
      head.write(b);
    }
    String h = head.toString(StandardCharsets.ISO_8859_1).toLowerCase(java.util.Locale.ROOT);
    int at = h.indexOf("content-length: ");
    int length = Integer.parseInt(h.substring(at + 16, h.indexOf("\r\n", at)).trim());
    in.readNBytes(length);
  }

  // 6. Every request's headers, not only the first's, are under the header timeout.
  @Test
  void keptAliveConnectionsThatDripTheirNextRequestAreClosedAtTheHeaderTimeout() throws Exception {
    AllocationServer server =
        AllocationServer.builder(allocator(10)).headerTimeout(Duration.ofSeconds(1)).idleTimeout(Duration.ofSeconds(30)).build().start();
    closing.add(server);
    List<Socket> dripping = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port());
      closing.add(s);
      OutputStream out = s.getOutputStream();
      out.write("GET /targets?collector=a HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      readAnswer(s.getInputStream());
      out.write("GET /targets?coll".getBytes(StandardCharsets.US_ASCII));
      dripping.add(s);
    }
    long start = System.nanoTime();
    int closed = 0;
    while (closed < dripping.size() && System.nanoTime() - start < Duration.ofSeconds(6).toNanos()) {
      closed = 0;
      for (Socket s : dripping) {
        if (s.isClosed() || closedByServer(s)) {
          closed++;
        } else {
          try {
            s.getOutputStream().write('e'); // one byte now and then: never idle
          } catch (IOException e) {
            closed++;
          }
        }
      }
      assertEquals(200, Http.get("http://127.0.0.1:" + server.port() + "/targets?collector=a").status());
      Thread.sleep(250);
    }
    long millis = (System.nanoTime() - start) / 1_000_000;
    assertEquals(dripping.size(), closed, "every dripping connection closed");
    assertTrue(millis < 4_000, "closed near the 1 s header timeout: " + millis + " ms");
  }

  // 6. A TLS handshake is under the header timeout too.
  @Test
  void tlsHandshakesThatStallAreClosedAtTheHeaderTimeout() throws Exception {
    Certs.make(dir, "server", "localhost");
    AllocationServer server =
        AllocationServer.builder(allocator(10))
            .tls(webConfig())
            .headerTimeout(Duration.ofSeconds(1))
            .idleTimeout(Duration.ofSeconds(30))
            .build()
            .start();
    closing.add(server);
    List<Socket> stalled = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port());
      closing.add(s);
      s.getOutputStream().write(new byte[] {0x16, 0x03, 0x01}); // the start of a ClientHello, no more
      stalled.add(s);
    }
    long start = System.nanoTime();
    int closed = 0;
    while (closed < stalled.size() && System.nanoTime() - start < Duration.ofSeconds(6).toNanos()) {
      closed = 0;
      for (Socket s : stalled) {
        closed += closedByServer(s) ? 1 : 0;
      }
      Thread.sleep(100);
    }
    long millis = (System.nanoTime() - start) / 1_000_000;
    assertEquals(stalled.size(), closed, "every stalled handshake closed");
    assertTrue(millis < 4_000, "closed near the 1 s header timeout: " + millis + " ms");
    assertEquals(new BigInteger(serial("server.crt")), served(server.port()).getSerialNumber(), "a real client is served");
  }

  private WebConfig webConfig() throws Exception {
    Files.writeString(dir.resolve("web.yml"), "tls_server_config: {cert_file: server.crt, key_file: server.key}\n");
    return WebConfig.read(dir.resolve("web.yml"));
  }

  private String serial(String certFile) throws Exception {
    return ((X509Certificate) WebConfig.certificates(dir.resolve(certFile), "cert").get(0)).getSerialNumber().toString();
  }

  /** The certificate a new TLS connection (a new context: no session resumed) is served. */
  private static X509Certificate served(int port) throws IOException, GeneralSecurityException {
    javax.net.ssl.SSLContext ctx =
        new HttpClientOptions(null, null, null, null, null, null, null, null, null, true).sslContext();
    try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port)) {
      s.setSoTimeout(5000);
      s.startHandshake();
      return (X509Certificate) s.getSession().getPeerCertificates()[0];
    }
  }

  // 7. Slow readers of one answer share its encoding instead of holding a copy each.
  @Test
  void slowReadersOfOneAnswerHoldOneEncodingNotOneEach() throws Exception {
    Allocator allocator = allocator(20_000);
    Rendering rendering = new Rendering(Map.of());
    Allocation snapshot = allocator.snapshot();
    byte[] first = rendering.jobTargets(snapshot, "a", "j");
    assertSame(first, rendering.jobTargets(snapshot, "a", "j"), "one encoding per answer and snapshot");
    assertSame(rendering.httpSd(snapshot, "b"), rendering.httpSd(snapshot, "b"));
    assertTrue(first.length > 500_000, "a large answer: " + first.length);

    AllocationServer server = AllocationServer.builder(allocator).build().start();
    closing.add(server);
    System.gc();
    long before = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    int readers = 40;
    for (int i = 0; i < readers; i++) {
      Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port());
      s.setReceiveBufferSize(4096);
      closing.add(s);
      s.getOutputStream().write("GET /jobs/j/targets?collector_id=a HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      s.getInputStream().readNBytes(512); // reads a little, then stops
    }
    Thread.sleep(500);
    System.gc();
    long held = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() - before;
    assertTrue(
        held < (long) readers * first.length / 4,
        readers + " slow readers of a " + first.length + "-byte answer hold " + held + " bytes of heap");
    assertEquals(200, Http.get("http://127.0.0.1:" + server.port() + "/targets?collector=b").status());
  }

  // 8. POST /-/reload is off unless enabled; an unchanged reload logs nothing.
  @Test
  void reloadOverHttpIsOffUnlessEnabledAndAnUnchangedOneLogsNothing() throws Exception {
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\"]}]");
    Path file = dir.resolve("c.yaml");
    Files.writeString(file, "listen: 127.0.0.1:0\ntargets: [{fileSd: {job: j, files: [t.json]}}]\ncollectors: {static: [x]}\n");
    for (boolean enabled : new boolean[] {false, true}) {
      Reloader reloader = new Reloader(file, enabled);
      Service s = new Service(ServerConfig.read(file), null, reloader).start();
      reloader.started(s);
      closing.add(s);
      String url = "http://127.0.0.1:" + s.port() + "/-/reload";
      PrintStream err = System.err;
      ByteArrayOutputStream log = new ByteArrayOutputStream();
      List<Integer> statuses = new ArrayList<>();
      System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
      try {
        for (int i = 0; i < 50; i++) {
          statuses.add(
              Http.send(HttpRequest.newBuilder(URI.create(url)).POST(HttpRequest.BodyPublishers.noBody()).build()).status());
        }
      } finally {
        System.setErr(err);
      }
      assertEquals(List.of(enabled ? 200 : 403), statuses.stream().distinct().toList());
      assertFalse(log.toString(StandardCharsets.UTF_8).contains("reload"), log.toString(StandardCharsets.UTF_8));
    }
  }

  // 9. TLS files are taken only as a pair whose key is the certificate's.
  @Test
  void aRenewedCertificateWithoutItsKeyKeepsTheOldPairUntilTheKeyComes() throws Exception {
    Certs.make(dir, "server", "localhost");
    Certs.make(dir, "renewed", "localhost");
    GeneralSecurityException mismatch =
        assertThrows(
            GeneralSecurityException.class,
            () -> WebConfig.requireMatch(WebConfig.privateKey(dir.resolve("server.key")), WebConfig.certificates(dir.resolve("renewed.crt"), "c").get(0)));
    assertTrue(mismatch.getMessage().contains("does not match"), mismatch.getMessage());
    AllocationServer server =
        AllocationServer.builder(allocator(10)).tls(webConfig()).certificateCheck(Duration.ofMillis(100)).build().start();
    closing.add(server);
    BigInteger old = new BigInteger(serial("server.crt"));
    BigInteger renewed = new BigInteger(serial("renewed.crt"));
    assertEquals(old, served(server.port()).getSerialNumber());

    Files.copy(dir.resolve("renewed.crt"), dir.resolve("server.crt"), StandardCopyOption.REPLACE_EXISTING);
    for (int i = 0; i < 10; i++) {
      Thread.sleep(100);
      assertEquals(old, served(server.port()).getSerialNumber(), "every handshake gets the old pair");
    }
    Files.copy(dir.resolve("renewed.key"), dir.resolve("server.key"), StandardCopyOption.REPLACE_EXISTING);
    await(() -> {
      try {
        return served(server.port()).getSerialNumber().equals(renewed);
      } catch (IOException | GeneralSecurityException e) {
        throw new AssertionError("a handshake failed", e);
      }
    }, Duration.ofSeconds(10), "the renewed pair served");
    assertNotEquals(old, renewed);
  }

  // 10. A SIGHUP while the process starts reloads it (once it runs) and never kills it.
  @Test
  void sighupDuringTheStartNeverKillsTheProcess() throws Exception {
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\"]}]");
    Path file = dir.resolve("c.yaml");
    int port = PrometheusEndToEndTest.freePort();
    Files.writeString(file, "listen: 127.0.0.1:" + port + "\ntargets: [{fileSd: {job: j, files: [t.json]}}]\ncollectors: {static: [x]}\n");
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process p =
        new ProcessBuilder(
                java.toString(), "-Xlog:class+load=info:stdout", "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), file.toString())
            .redirectError(dir.resolve("err.log").toFile())
            .start();
    try {
      // The moment the config is about to be read (the reloader's class loads): from here to the
      // service running, a signal used to kill the process (exit 129).
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      String line;
      while ((line = out.readLine()) != null && !line.contains("dev.apportion.allocation.server.Reloader ")) {
        // class loading before the config is read
      }
      Thread drain = new Thread(() -> {
        try {
          p.getInputStream().transferTo(OutputStream.nullOutputStream());
        } catch (IOException e) {
          // the process ended
        }
      });
      drain.setDaemon(true);
      drain.start();
      for (int i = 0; i < 20; i++) {
        new ProcessBuilder("kill", "-HUP", Long.toString(p.pid())).start().waitFor();
        Thread.sleep(50);
      }
      String base = "http://127.0.0.1:" + port;
      await(() -> {
        if (!p.isAlive()) {
          throw new AssertionError("killed by SIGHUP: exit " + p.exitValue());
        }
        try {
          return Http.get(base + "/readyz").status() == 200;
        } catch (RuntimeException e) {
          return false;
        }
      }, Duration.ofSeconds(30), "the process serving");
      assertTrue(p.isAlive());
    } finally {
      p.destroy();
      p.waitFor();
    }
  }

  // A request for a collector the server does not know is counted (and logged once per name).
  @Test
  void aRequestForAnUnknownCollectorIsCounted() throws Exception {
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\"]}]");
    Path file = dir.resolve("c.yaml");
    Files.writeString(file, "listen: 127.0.0.1:0\ntargets: [{fileSd: {job: j, files: [t.json]}}]\ncollectors: {static: [agent-0]}\n");
    try (Service s = new Service(ServerConfig.read(file)).start()) {
      s.feed().refresh();
      String base = "http://127.0.0.1:" + s.port();
      assertEquals("[]", Http.get(base + "/targets?collector=prometheus-0").body().strip());
      Http.get(base + "/targets?collector=prometheus-0");
      Http.get(base + "/jobs/j/targets?collector_id=prometheus-0");
      Http.get(base + "/targets?collector=agent-0");
      String metrics = Http.get(base + "/metrics").body();
      assertTrue(metrics.contains("apportion_server_unknown_collector_requests_total 3.0"), metrics);
    }
  }
}
