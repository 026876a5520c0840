package dev.apportion.allocation.server;

import static dev.apportion.allocation.server.PrometheusEndToEndTest.await;
import static dev.apportion.allocation.server.PrometheusEndToEndTest.describe;
import static dev.apportion.allocation.server.PrometheusEndToEndTest.matches;
import static dev.apportion.allocation.server.PrometheusEndToEndTest.sleep;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.server.PrometheusEndToEndTest.Prom;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Balance by series with the loop closed as in a cluster: 30 small HTTP endpoints expose very
 * different numbers of series (heavy-tailed: six expose 1450 to 1700, the others 40 to 60), three
 * real Prometheus 2.42 processes scrape them through {@code /targets?collector=}, and the service
 * queries those same three for {@code scrape_samples_scraped + 5} ({@code costs.url}, a list): the
 * series a target puts in a head are its samples and the five Prometheus adds per target ({@code
 * up}, {@code scrape_duration_seconds}, {@code scrape_samples_scraped}, {@code
 * scrape_samples_post_metric_relabeling}, {@code scrape_series_added}), so the cost band is a band
 * on head series (with the samples alone, a collector at its cap that holds more targets than the
 * mean would be up to five series per target above it). A second
 * service on the same targets has no {@code costs} block: three more Prometheus processes show what
 * counts alone give. Both run side by side.
 *
 * <p>What is measured is each Prometheus's {@code prometheus_tsdb_head_series}. A series stays in
 * the head until head compaction (hours) after its target left, so a Prometheus that scraped the
 * count-based start and then the cost-based split would count both. So once the cost-based split
 * has settled, the three cost-balanced Prometheus processes are restarted on empty storage, and
 * their head is measured after they scrape it. Meanwhile the cost query fails (they are down) and
 * then returns partial answers (not every target scraped yet): the test also checks that neither
 * moves a target, since a failed read keeps the last costs and a target without a sample keeps
 * its last cost.
 *
 * <p>Scrape and HTTP SD refresh every 1 s, cost query every 2 s; Prometheus 2.42 adds up to 10 s
 * of its own to apply an SD change (see {@link PrometheusEndToEndTest}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CostEndToEndTest {
  private static final Duration FAST = Duration.ofSeconds(1);
  /** Series per endpoint: five heavy, the rest light. */
  private static final int[] SERIES = series();

  private Path dir;
  private String binary;
  private final List<HttpServer> endpoints = new ArrayList<>();
  private final Map<String, Integer> seriesOf = new java.util.HashMap<>();
  private Service costs;
  private Service counts;
  private final List<Prom> costProms = new ArrayList<>();
  private final List<Prom> countProms = new ArrayList<>();

  /**
   * Six heavy endpoints and 24 light ones. The shape makes the test independent of where the
   * ephemeral ports place the targets: any count placement that does not put two heavy endpoints
   * on each Prometheus is outside the churn rule's slack at the real costs (1.1 times the band), so
   * the first full cost read re-places everything with the real costs; one that does is already
   * within the band.
   */
  private static int[] series() {
    int[] heavy = {1700, 1650, 1600, 1550, 1500, 1450};
    int[] out = new int[30];
    for (int i = 0; i < out.length; i++) {
      out[i] = i < heavy.length ? heavy[i] : 40 + (i * 7) % 21;
    }
    return out;
  }

  @BeforeAll
  void start(@TempDir Path tmp) throws Exception {
    this.dir = tmp;
    this.binary = PrometheusEndToEndTest.prometheusBinary();
    StringBuilder sd = new StringBuilder("[{\"targets\":[");
    for (int i = 0; i < SERIES.length; i++) {
      StringBuilder body = new StringBuilder("# TYPE apportion_e2e_series gauge\n");
      for (int k = 0; k < SERIES[i]; k++) {
        body.append("apportion_e2e_series{endpoint=\"").append(i).append("\",k=\"").append(k).append("\"} 1\n");
      }
      byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
      HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
      s.createContext(
          "/metrics",
          ex -> {
            ex.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4");
            ex.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = ex.getResponseBody()) {
              out.write(bytes);
            }
          });
      s.start();
      endpoints.add(s);
      seriesOf.put("127.0.0.1:" + s.getAddress().getPort(), SERIES[i]);
      sd.append(i == 0 ? "" : ",").append("\"127.0.0.1:").append(s.getAddress().getPort()).append('"');
    }
    Files.writeString(dir.resolve("targets.json"), sd.append("]}]"));

    List<Integer> costPorts = List.of(
        PrometheusEndToEndTest.freePort(), PrometheusEndToEndTest.freePort(), PrometheusEndToEndTest.freePort());
    Path costConfig = dir.resolve("costs.yaml");
    Files.writeString(
        costConfig,
        """
        listen: 127.0.0.1:0
        refreshInterval: 1s
        targets: [{fileSd: {job: e2e, files: [targets.json]}}]
        collectors: {static: [cost-0, cost-1, cost-2]}
        # each Prometheus must hold exactly its share: the handover's overlap while costs move
        # targets is measured by the continuity test
        handover: {enabled: false}
        costs:
          url: ['http://127.0.0.1:%d', 'http://127.0.0.1:%d', 'http://127.0.0.1:%d']
          query: scrape_samples_scraped + 5
          refreshInterval: 2s
        """
            .formatted(costPorts.get(0), costPorts.get(1), costPorts.get(2)));
    Path countConfig = dir.resolve("counts.yaml");
    Files.writeString(
        countConfig,
        """
        listen: 127.0.0.1:0
        refreshInterval: 1s
        targets: [{fileSd: {job: e2e, files: [targets.json]}}]
        collectors: {static: [count-0, count-1, count-2]}
        """);
    costs = new Service(ServerConfig.read(costConfig)).start();
    counts = new Service(ServerConfig.read(countConfig)).start();
    for (int i = 0; i < 3; i++) {
      costProms.add(Prom.start(binary, dir, "cost-" + i, costs.port(), FAST, costPorts.get(i)));
      countProms.add(Prom.start(binary, dir, "count-" + i, counts.port(), FAST));
    }
  }

  @AfterAll
  void stop() {
    for (Prom p : costProms) {
      p.stop();
    }
    for (Prom p : countProms) {
      p.stop();
    }
    if (costs != null) {
      costs.close();
    }
    if (counts != null) {
      counts.close();
    }
    for (HttpServer s : endpoints) {
      s.stop(0);
    }
  }

  @Test
  void withCostsEveryPrometheusHoldsItsShareOfTheSeries() {
    long t0 = System.nanoTime();
    // Counts only: every Prometheus scrapes its split, every target up.
    await(Duration.ofSeconds(60), () -> matches(counts, countProms, true), () -> describe(counts, countProms));
    Map<String, Long> countHeads = heads(countProms);
    long countsAt = System.nanoTime();

    // With costs: every target's cost read, and the Prometheus processes scrape the split.
    await(
        Duration.ofSeconds(60),
        () -> costs.costs().lastMatched() == SERIES.length && snapshotCostIsSeries() && matches(costs, costProms, true),
        () -> "costs never all read and scraped: matched " + costs.costs().lastMatched() + ", costs unlike the"
            + " series " + wrongCosts() + "; " + describe(costs, costProms));
    // Settled: the split holds for two more cost reads.
    Allocation settled = costs.allocator().snapshot();
    int reads = costs.costs().reads();
    await(Duration.ofSeconds(20), () -> costs.costs().reads() >= reads + 2, () -> "no more cost reads");
    assertEquals(owners(settled), owners(costs.allocator().snapshot()), "the cost split settled");
    long settledAt = System.nanoTime();

    // Restart the cost-balanced Prometheus processes on empty storage, so that their heads hold
    // only what they scrape now.
    List<Prom> fresh = new ArrayList<>();
    for (Prom p : costProms) {
      p.stop();
    }
    try {
      Path again = Files.createDirectories(dir.resolve("fresh"));
      for (Prom p : costProms) {
        fresh.add(Prom.start(binary, again, p.name, costs.port(), FAST, p.port));
      }
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    costProms.clear();
    costProms.addAll(fresh);
    await(Duration.ofSeconds(60), () -> matches(costs, costProms, true), () -> describe(costs, costProms));
    sleep(3 * FAST.toMillis()); // a few more scrapes and cost reads, partial ones included
    assertEquals(owners(settled), owners(costs.allocator().snapshot()),
        "neither the failed cost reads nor the partial ones moved a target");
    Map<String, Long> costHeads = heads(costProms);

    Map<String, Long> costBySnapshot = new LinkedHashMap<>();
    for (Prom p : costProms) {
      costBySnapshot.put(p.name, settled.costOf(p.name));
    }
    System.out.printf(
        "e2e costs: %d targets, %d series in all (heavy: %s); counts settled after %d ms, costs after %d ms%n",
        SERIES.length, java.util.Arrays.stream(SERIES).sum(), java.util.Arrays.toString(java.util.Arrays.copyOf(SERIES, 6)),
        (countsAt - t0) / 1_000_000, (settledAt - t0) / 1_000_000);
    System.out.printf("e2e costs: counts only: prometheus_tsdb_head_series %s, peak/mean %.3f, targets %s%n",
        countHeads, peakToMean(countHeads), targetsPer(counts, countProms));
    System.out.printf("e2e costs: with costs:  prometheus_tsdb_head_series %s, peak/mean %.3f, targets %s, cost (scrape_samples_scraped + 5) %s%n",
        costHeads, peakToMean(costHeads), targetsPer(costs, costProms), costBySnapshot);
    // The documented bound after a history of cost reads: the cost band (1.15 of the mean) plus
    // the churn rule's slack (a change of costs alone moves nothing until a collector carries more
    // than its cap times 1.1). Which side of 1.15 a run lands on depends on whether the placement
    // was last made from partial cost reads (the scrape and cost-read timing) and on the random
    // ports' hashes: measured 1.01-1.19 over 26 runs.
    double bound = 1.15 * 1.1;
    assertTrue(peakToMean(costHeads) <= bound, "with costs the head series peak/mean is " + peakToMean(costHeads) + ": " + costHeads);
    assertTrue(peakToMean(costHeads) < peakToMean(countHeads) || peakToMean(countHeads) <= bound,
        "costs did not improve on counts: " + costHeads + " against " + countHeads);
  }

  /** The targets whose cost is not their series count: address, cost and series. */
  private List<String> wrongCosts() {
    List<String> out = new ArrayList<>();
    List<Target> all = new ArrayList<>(costs.allocator().snapshot().targets());
    for (Target t : costs.costs().attach(all)) {
      int series = seriesOf.getOrDefault(t.address(), -1) + 5;
      if (t.cost() != series) {
        out.add(t.address() + " cost " + t.cost() + " series " + series);
      }
    }
    return out;
  }

  /**
   * Whether the collectors' cost totals add up to the series, five per target included (a
   * snapshot's target instances keep the cost they were placed with; the totals are current).
   */
  private boolean snapshotCostIsSeries() {
    Allocation a = costs.allocator().snapshot();
    long total = a.collectors().stream().mapToLong(c -> a.costOf(c.name())).sum();
    return total == java.util.Arrays.stream(SERIES).sum() + 5L * SERIES.length;
  }

  private static Map<String, String> owners(Allocation a) {
    return a.targets().stream()
        .collect(Collectors.toMap(Target::address, t -> a.collectorOf(t).orElse("")));
  }

  private static Map<String, Integer> targetsPer(Service s, List<Prom> proms) {
    Map<String, Integer> out = new LinkedHashMap<>();
    for (Prom p : proms) {
      out.put(p.name, s.allocator().snapshot().targetCount(p.name));
    }
    return out;
  }

  /** Each Prometheus's {@code prometheus_tsdb_head_series}, from its own {@code /metrics}. */
  private static Map<String, Long> heads(List<Prom> proms) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (Prom p : proms) {
      String metrics = Http.get("http://127.0.0.1:" + p.port + "/metrics").body();
      out.put(p.name, (long) CostFeedTest.value(metrics, "prometheus_tsdb_head_series"));
    }
    return out;
  }

  private static double peakToMean(Map<String, Long> m) {
    double mean = m.values().stream().mapToLong(Long::longValue).average().orElse(0);
    return m.values().stream().mapToLong(Long::longValue).max().orElse(0) / mean;
  }
}
