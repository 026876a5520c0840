package dev.apportion.bench.jmh;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.server.AllocationServer;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * {@code allocation-server}'s operator page over a large fleet: {@code targets} targets (six labels
 * each, Kubernetes-like, over 20 jobs) on {@code collectors} collectors, asked over loopback HTTP
 * from the server's own listener, from the request to the last byte of the answer read.
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar OperatorPageTime
 * </pre>
 *
 * <ul>
 *   <li>{@code OVERVIEW}: {@code /ui}, the snapshot's summary already computed by an earlier
 *       request (what every refresh of the page costs while nothing changes);
 *   <li>{@code OVERVIEW_NEW_SNAPSHOT}: {@code /ui} right after the allocator published a new
 *       snapshot (one target replaced, untimed), so the summary is computed in the request: one
 *       pass over the targets and the collectors;
 *   <li>{@code COLLECTOR}: one collector's page, its first {@code TARGETS_PER_PAGE} targets;
 *   <li>{@code COLLECTOR_SEARCH}: the same filtered by a regular expression on a label;
 *   <li>{@code STATUS_JSON}: {@code /api/v1/status}, every collector, streamed;
 *   <li>{@code COLLECTOR_JSON}: one collector's targets as JSON, streamed.
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class OperatorPageTime {
  /** Which answer. */
  public enum Page {
    /** The overview, its summary cached. */
    OVERVIEW,
    /** The overview of a snapshot no request has read yet. */
    OVERVIEW_NEW_SNAPSHOT,
    /** One collector's page. */
    COLLECTOR,
    /** One collector's page, filtered by a label regex. */
    COLLECTOR_SEARCH,
    /** The overview as JSON. */
    STATUS_JSON,
    /** One collector's targets as JSON. */
    COLLECTOR_JSON
  }

  /** Targets. */
  @Param({"100000"})
  public int targets;

  /** Collectors. */
  @Param({"1000"})
  public int collectors;

  /** Which answer. */
  @Param
  public Page page;

  private Allocator allocator;
  private AllocationServer server;
  private HttpClient client;
  private HttpRequest request;
  private List<Target> all;
  private Target spare;
  private int swapped;

  /**
   * Builds the fleet, places it and serves it.
   *
   * @throws IOException if the server cannot start
   */
  @Setup(Level.Trial)
  public void start() throws IOException {
    List<Collector> cs = new ArrayList<>(collectors);
    for (int j = 0; j < collectors; j++) {
      cs.add(Collector.of(String.format("collector-%04d", j), "node-" + j, "zone-" + j % 3));
    }
    all = new ArrayList<>(targets);
    for (int i = 0; i < targets; i++) {
      all.add(target(i));
    }
    spare = target(targets);
    allocator = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    allocator.setCollectors(cs);
    allocator.setTargets(all);
    server = AllocationServer.builder(allocator).build().start();
    client = HttpClient.newHttpClient();
    String one = String.format("collector-%04d", collectors / 2);
    String path =
        switch (page) {
          case OVERVIEW, OVERVIEW_NEW_SNAPSHOT -> "/ui";
          case COLLECTOR -> "/ui/collectors/" + one;
          case COLLECTOR_SEARCH ->
              "/ui/collectors/" + one + "?q=" + URLEncoder.encode("pod=~\"app-1.*\" namespace!=ns-3", StandardCharsets.UTF_8);
          case STATUS_JSON -> "/api/v1/status";
          case COLLECTOR_JSON -> "/api/v1/status/collectors/" + one;
        };
    request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build();
  }

  private static Target target(int i) {
    String ns = "ns-" + (i % 12);
    String pod = "app-" + (i % 40) + "-7d9f8b6c4-" + Integer.toString(100_000 + i, 36);
    return Target.of(
        "job-" + i % 20,
        "10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255) + ":8080",
        Map.of(
            "namespace", ns,
            "pod", pod,
            "__meta_kubernetes_namespace", ns,
            "__meta_kubernetes_pod_name", pod,
            "__meta_kubernetes_pod_node_name", "node-" + i % 1000,
            "__meta_kubernetes_pod_ready", "true"));
  }

  /** For {@code OVERVIEW_NEW_SNAPSHOT}: a new snapshot before each request, untimed. */
  @Setup(Level.Invocation)
  public void publish() {
    if (page == Page.OVERVIEW_NEW_SNAPSHOT) {
      int i = swapped++ % targets;
      Target out = all.get(i);
      all.set(i, spare);
      spare = out;
      allocator.setTargets(all);
    }
  }

  /** Stops serving. */
  @TearDown(Level.Trial)
  public void stop() {
    server.close();
  }

  /**
   * One request, its answer read whole.
   *
   * @return the answer's length, so the work is not dead code
   * @throws IOException if the request fails
   * @throws InterruptedException never in practice
   */
  @Benchmark
  public int get() throws IOException, InterruptedException {
    HttpResponse<byte[]> r = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
    if (r.statusCode() != 200) {
      throw new IllegalStateException(r.statusCode() + " " + new String(r.body(), StandardCharsets.UTF_8));
    }
    return r.body().length;
  }
}
