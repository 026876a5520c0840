package dev.apportion.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocators;
import dev.apportion.bench.Placement;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The zone goals on a smaller generated cluster (3 zones, 12 nodes, 3000 targets): per-node with
 * its zone-aware fallback never scrapes across zones while every zone has a collector, and when a
 * zone loses half its collectors the zone-aware strategies stay in their zones within the skew
 * limit. Counts only.
 */
class ZoneSimulationTest {
  private static final long SEED = 3;
  private static final List<String> STRATEGIES = List.of(Allocators.PER_NODE,
      Placement.PER_NODE_NO_ZONES, Allocators.CONSISTENT_HASHING + Placement.ZONES,
      Allocators.RENDEZVOUS + Placement.ZONES, Allocators.LEAST_WEIGHTED + Placement.ZONES,
      Allocators.CONSISTENT_HASHING);
  private static Map<ClusterScenario, Map<String, Result>> results;

  @BeforeAll
  static void run() {
    Cluster cluster =
        ClusterGenerator.generate(new ClusterGenerator.Shape(3, 12, 3000, 3, 0.03), SEED);
    results = new HashMap<>();
    for (Result r : new Simulator(Mode.CENTRAL, SEED, null)
        .run(cluster, STRATEGIES, List.of(ClusterScenario.values()))) {
      results.computeIfAbsent(r.scenario(), s -> new HashMap<>()).put(r.strategy(), r);
    }
  }

  private static Result result(ClusterScenario scenario, String strategy) {
    return results.get(scenario).get(strategy);
  }

  @Test
  void perNodeWithItsZoneAwareFallbackNeverCrossesAZoneThatHasACollector() {
    for (ClusterScenario s : ClusterScenario.values()) {
      Result r = result(s, Allocators.PER_NODE);
      assertEquals(0, r.crossZone(), s.title());
      assertEquals(0, r.unassigned(), s.title());
      assertTrue(r.zoneKnown() > 0, s.title());
    }
    // Scenarios that orphan nodes send their targets to the fallback: it did work.
    assertTrue(result(ClusterScenario.SCALE_IN, Allocators.PER_NODE).crossNode() > 0);
    assertTrue(result(ClusterScenario.ZONE_HALF_LOST, Allocators.PER_NODE).crossNode() > 0);
  }

  @Test
  void theSameFallbackWithoutZonesCrossesThem() {
    // The control for the test above.
    assertTrue(result(ClusterScenario.SCALE_IN, Placement.PER_NODE_NO_ZONES).crossZone() > 0);
    assertTrue(
        result(ClusterScenario.ZONE_HALF_LOST, Placement.PER_NODE_NO_ZONES).crossZone() > 0);
  }

  @ParameterizedTest
  @ValueSource(strings = {"consistent-hashing:zones", "rendezvous:zones",
      "least-weighted:zones"})
  void aZoneLosingHalfItsCollectorsStaysInItsZoneWithinTheSkewLimit(String strategy) {
    Result r = result(ClusterScenario.ZONE_HALF_LOST, strategy);
    assertEquals(0, r.crossZone());
    assertEquals(0, r.unassigned());
    // Overall peak/mean bounds the zone's (the zone that lost half is the busiest).
    assertTrue(r.peakOverMean() <= Placement.VARIANT_MAX_SKEW, "peak/mean " + r.peakOverMean());
    assertTrue(r.peakOverMean() > 1.3, "the zone's collectors do carry more: "
        + r.peakOverMean());
    for (ClusterScenario s : ClusterScenario.values()) {
      assertEquals(0, result(s, strategy).crossZone(), s.title());
    }
  }

  @Test
  void theDefaultStrategiesStillIgnoreZones() {
    assertTrue(result(ClusterScenario.INITIAL, Allocators.CONSISTENT_HASHING).crossZone() > 1000);
  }

  @Test
  void theCostIsBytesTimesScrapesTimesThePriceEachWay() {
    CrossZoneCost cost = new CrossZoneCost(50_000, 30, 0.01);
    // 1000 scrapes x 50 kB x 120 an hour = 6 GB/h; x 730 h x 2 directions x 0.01 USD = 87.6.
    assertEquals(6.0, cost.gigabytesPerHour(1000), 1e-9);
    assertEquals(87.6, cost.dollarsPerMonth(1000), 1e-9);
    assertEquals(0.0, cost.dollarsPerMonth(0), 0.0);
  }

  @Test
  void theTableShowsTheZoneScenarioAndTheCost() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int code = SimulateCommand.run(new String[] {"--nodes", "6", "--target-count", "600",
        "--scenario", "zone-half-lost", "--strategy", "per-node:no-zones", "--price-per-gb",
        "0.02", "--table"}, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(
        new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    String text = out.toString(StandardCharsets.UTF_8);
    assertEquals(0, code, text);
    assertTrue(text.contains("== a zone loses half its collectors =="), text);
    assertTrue(text.contains("xz $/mo"), text);
    assertTrue(text.contains("0.02 USD/GB each way"), text);
  }
}
