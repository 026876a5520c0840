package dev.apportion.bench.jmh;

import com.sun.net.httpserver.HttpServer;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.server.TargetFeed;
import dev.apportion.allocation.server.TargetSource;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code allocation-server}'s refresh of one HTTP SD source answering {@code targets} targets,
 * from the first byte of the answer to the allocator's published snapshot: the source's streamed
 * parse straight into its {@code TargetInterner}, then {@code setTargets}. The answer is Prometheus
 * HTTP SD JSON, one group per pod with six labels (about 270 bytes a target, 27 MB for 100,000),
 * served over loopback by the JDK's HTTP server from one byte array.
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar ServerRefreshTime -prof gc
 * </pre>
 *
 * <ul>
 *   <li>{@code FIRST}: a new source and a new allocator holding nothing each time: every target is
 *       built (a server's start, or a source whose answer is all new);
 *   <li>{@code UNCHANGED}: the same source and allocator, refreshed again with the same answer:
 *       what the server does every refresh interval for as long as it runs.
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 4)
@Measurement(iterations = 10)
@Fork(1)
public class ServerRefreshTime {
  /** Which refresh. */
  public enum Refresh {
    /** Every target new: a fresh source and allocator. */
    FIRST,
    /** The same answer again, on the same source and allocator. */
    UNCHANGED
  }

  /** Targets in the answer. */
  @Param({"100000"})
  public int targets;

  /** Which refresh. */
  @Param
  public Refresh refresh;

  private HttpServer server;
  private URI url;
  private HttpClient client;
  private List<Collector> collectors;
  private TargetFeed feed;
  private Allocator allocator;

  /**
   * The answer: Prometheus HTTP SD JSON, one group per pod with six labels.
   *
   * @param targets how many targets
   * @return the answer's bytes, UTF-8
   */
  public static byte[] answer(int targets) {
    StringBuilder sb = new StringBuilder(targets * 280).append('[');
    for (int i = 0; i < targets; i++) {
      String ns = "ns-" + (i % 12);
      String pod = "app-" + (i % 40) + "-7d9f8b6c4-" + Integer.toString(100_000 + i, 36);
      String ip = "10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255);
      sb.append(i == 0 ? "" : ",").append("{\"targets\":[\"").append(ip).append(":8080\"],")
          .append("\"labels\":{\"namespace\":\"").append(ns).append("\",\"pod\":\"").append(pod)
          .append("\",\"__meta_kubernetes_namespace\":\"").append(ns)
          .append("\",\"__meta_kubernetes_pod_name\":\"").append(pod)
          .append("\",\"__meta_kubernetes_pod_node_name\":\"node-").append(i % 1000)
          .append("\",\"__meta_kubernetes_pod_ready\":\"true\"}}");
    }
    return sb.append(']').toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Builds the answer and serves it.
   *
   * @throws IOException if the server cannot start
   * @throws InterruptedException never in practice
   */
  @Setup(Level.Trial)
  public void serve() throws IOException, InterruptedException {
    byte[] answer = answer(targets);
    System.err.println("answer: " + targets + " targets, " + answer.length + " bytes");
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
    server.createContext("/sd", ex -> {
      ex.sendResponseHeaders(200, answer.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(answer);
      }
    });
    server.start();
    url = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/sd");
    client = HttpClient.newHttpClient();
    collectors = new ArrayList<>(1000);
    for (int j = 0; j < 1000; j++) {
      collectors.add(Collector.of("collector-" + j, "node-" + j));
    }
    feed = newFeed();
    feed.refresh();
  }

  private TargetFeed newFeed() {
    allocator = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    allocator.setCollectors(collectors);
    TargetSource source = TargetSource.httpSd("pods", url, client, Duration.ofSeconds(60));
    return TargetFeed.builder(allocator).source(source).readTimeout(Duration.ofSeconds(60)).build();
  }

  /** A new source and allocator before a {@code FIRST} refresh, untimed. */
  @Setup(Level.Iteration)
  public void next() {
    if (refresh == Refresh.FIRST) {
      feed.close();
      feed = newFeed();
    }
  }

  /** Stops serving. */
  @TearDown(Level.Trial)
  public void stop() {
    feed.close();
    server.stop(0);
  }

  /**
   * One refresh: read the answer, build or recognise its targets, publish.
   *
   * @return the allocator's target count, so the work is not dead code
   * @throws InterruptedException never in practice
   */
  @Benchmark
  public int refresh() throws InterruptedException {
    feed.refresh();
    int n = allocator.snapshot().targets().size();
    if (n != targets) {
      throw new IllegalStateException(n + " targets placed, not " + targets);
    }
    return n;
  }
}
