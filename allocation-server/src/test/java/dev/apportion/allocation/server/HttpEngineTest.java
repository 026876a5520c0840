package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The HTTP engine under slow, idle and odd clients. */
class HttpEngineTest {
  private AllocationServer server;
  private final List<Socket> sockets = new ArrayList<>();

  @BeforeEach
  void start() throws IOException {
    Allocator allocator = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    allocator.setTargets(List.of(Target.of("node", "h:1"), Target.of("node", "h:2")));
    server =
        AllocationServer.builder(allocator)
            .headerTimeout(Duration.ofSeconds(2))
            .idleTimeout(Duration.ofSeconds(30))
            .build()
            .start();
  }

  @AfterEach
  void stop() {
    for (Socket s : sockets) {
      try {
        s.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
    server.close();
  }

  private Socket open() throws IOException {
    Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port());
    sockets.add(s);
    return s;
  }

  private String raw(String requestLine) throws IOException {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      s.setSoTimeout(10_000);
      s.getOutputStream()
          .write((requestLine + "\r\nHost: x\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.UTF_8));
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void aNormalClientGetsEveryAnswerWhileManySlowClientsSendHeaders() throws Exception {
    // 300 connections each sending a request's headers one byte at a time, round-robin; with the
    // JDK server four of them (one per request thread) starved everyone else.
    int slow = 300;
    byte[] partial = "GET /livez HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII);
    for (int i = 0; i < slow; i++) {
      open().getOutputStream().write(partial, 0, 3);
    }
    Thread dripper =
        new Thread(
            () -> {
              try {
                for (int round = 0; round < 20 && !Thread.currentThread().isInterrupted(); round++) {
                  for (int i = 0; i < slow; i++) {
                    try {
                      sockets.get(i).getOutputStream().write('a');
                    } catch (IOException e) {
                      // closed by the server's header timeout: that is allowed
                    }
                  }
                  Thread.sleep(100);
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    dripper.setDaemon(true);
    dripper.start();
    String base = "http://127.0.0.1:" + server.port();
    assertTimeoutPreemptively(
        Duration.ofSeconds(30),
        () -> {
          for (int i = 0; i < 50; i++) {
            assertEquals(200, Http.get(base + "/livez").status());
            assertEquals(200, Http.get(base + "/targets?collector=a").status());
          }
        });
    dripper.interrupt();
    dripper.join();
  }

  @Test
  void aConnectionThatDoesNotCompleteItsHeadersIsClosedAtTheHeaderTimeout() throws Exception {
    Socket s = open();
    s.setSoTimeout(15_000);
    OutputStream out = s.getOutputStream();
    out.write("GET /livez HTTP/1.1\r\nHo".getBytes(StandardCharsets.US_ASCII));
    long start = System.nanoTime();
    // Keep sending a byte now and then: idle timeouts alone would never close it.
    Thread dripper =
        new Thread(
            () -> {
              try {
                for (int i = 0; i < 100; i++) {
                  out.write('o');
                  Thread.sleep(200);
                }
              } catch (IOException | InterruptedException e) {
                // closed by the server: expected
              }
            });
    dripper.setDaemon(true);
    dripper.start();
    InputStream in = s.getInputStream();
    int b;
    try {
      do {
        b = in.read();
      } while (b >= 0);
    } catch (IOException e) {
      // a reset is a close too
    }
    long tookMillis = (System.nanoTime() - start) / 1_000_000;
    assertTrue(tookMillis < 12_000, "closed after " + tookMillis + " ms, header timeout 2 s");
    dripper.interrupt();
  }

  @Test
  void jobsTargetsWithoutAJobIsNotFoundAndALongUriIs414NotAReset() throws IOException {
    assertTrue(raw("GET /jobs/targets HTTP/1.1").startsWith("HTTP/1.1 404"), "GET /jobs/targets");
    assertTrue(raw("GET /jobs//targets HTTP/1.1").startsWith("HTTP/1.1 404"));
    String longUri = "GET /targets?collector=" + "x".repeat(20_000) + " HTTP/1.1";
    String answer = raw(longUri);
    assertTrue(answer.startsWith("HTTP/1.1 414"), answer.isEmpty() ? "no answer" : answer.substring(0, Math.min(200, answer.length())));
    String mid = raw("GET /targets?collector=" + "x".repeat(4_000) + " HTTP/1.1");
    assertTrue(mid.startsWith("HTTP/1.1 414"), mid);
  }

  @Test
  void encodedSlashesInJobNamesAreData() throws IOException {
    String answer = raw("GET /jobs/serviceMonitor%2Fmonitoring%2Fnode%2F0/targets?collector_id=a HTTP/1.1");
    assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
    assertTrue(answer.strip().endsWith("[]"), answer);
  }
}
