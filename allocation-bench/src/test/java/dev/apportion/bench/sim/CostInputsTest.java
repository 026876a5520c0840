package dev.apportion.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading costs from a Prometheus instant query and matching them with targets. */
class CostInputsTest {
  @TempDir
  Path dir;

  /** The committed example: docs/examples, a targets response and its scrape_samples_scraped. */
  static Path example(String file) {
    Path p = Path.of("..", "docs", "examples", file);
    assertTrue(Files.isRegularFile(p), p.toAbsolutePath() + " (tests run in allocation-bench)");
    return p;
  }

  static final Path EXAMPLE_TARGETS = example("prometheus-targets.json");
  static final Path EXAMPLE_COSTS = example("scrape-samples-scraped.json");

  /** One sample of an instant-query vector, as /api/v1/query returns it. */
  static String sample(String job, String instance, String value) {
    return "{\"metric\":{\"__name__\":\"scrape_samples_scraped\",\"job\":\"" + job
        + "\",\"instance\":\"" + instance + "\",\"namespace\":\"shop\"},\"value\":"
        + "[1700000000.123,\"" + value + "\"]}";
  }

  static String vector(String... samples) {
    return "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
        + String.join(",", samples) + "]}}";
  }

  @Test
  void readsAVectorKeyedByTheMatchLabels() throws Exception {
    Path file = Files.writeString(dir.resolve("q.json"), vector(
        sample("kubernetes-pods", "10.0.1.15:8080", "1234"),
        sample("kubernetes-pods", "10.0.1.16:8080", "56.6"),
        sample("kubelet", "node-a", "800"),
        sample("kubelet", "node-a", "1")));
    Map<List<String>, Long> costs = CostInputs.read(file, CostInputs.DEFAULT_MATCH);
    assertEquals(Map.of(
        List.of("kubernetes-pods", "10.0.1.15:8080"), 1234L,
        List.of("kubernetes-pods", "10.0.1.16:8080"), 57L,
        List.of("kubelet", "node-a"), 801L), costs, "rounded; samples of one key summed");

    assertEquals(Map.of(List.of("shop"), 1234L + 57 + 801),
        CostInputs.read(file, List.of("namespace")));
    assertEquals(Map.of(), CostInputs.read(Files.writeString(dir.resolve("empty.json"),
        vector()), CostInputs.DEFAULT_MATCH), "an empty vector is no error");
  }

  @Test
  void theFileIsClosedAfterReading() throws Exception {
    Path fds = Path.of("/proc/self/fd");
    assumeTrue(Files.isDirectory(fds), "needs Linux /proc to count open files");
    Path file = Files.writeString(dir.resolve("q.json"), vector(sample("a", "b", "1")));
    Path notJson = Files.writeString(dir.resolve("bad.json"), "{\"data\":");
    long before = openFiles(fds);
    for (int i = 0; i < 200; i++) {
      CostInputs.read(file, CostInputs.DEFAULT_MATCH);
      assertThrows(InputException.class, () -> CostInputs.read(notJson, List.of("job")));
    }
    long after = openFiles(fds);
    assertTrue(after - before < 50, "open files " + before + " before 400 reads, " + after
        + " after: the reader leaks them");
  }

  private static long openFiles(Path fds) throws IOException {
    try (Stream<Path> s = Files.list(fds)) {
      return s.count();
    }
  }

  @Test
  void badSamplesAreErrorsThatNameTheFileAndTheSample() throws IOException {
    Map<String, String> bad = new HashMap<>();
    bad.put("abc", "value \"abc\" is not a finite number >= 0");
    bad.put("NaN", "value \"NaN\" is not a finite number >= 0");
    bad.put("-3", "value \"-3\" is not a finite number >= 0");
    bad.put("+Inf", "value \"+Inf\" is not a finite number >= 0");
    for (Map.Entry<String, String> e : bad.entrySet()) {
      Path file = Files.writeString(dir.resolve("q.json"),
          vector(sample("a", "b", "1"), sample("kubelet", "node-a", e.getKey())));
      InputException x = assertThrows(InputException.class,
          () -> CostInputs.read(file, CostInputs.DEFAULT_MATCH));
      assertTrue(x.getMessage().startsWith("--costs " + file + ": data.result[1] {"), e.getKey()
          + ": " + x.getMessage());
      assertTrue(x.getMessage().contains("\"job\":\"kubelet\""), x.getMessage());
      assertTrue(x.getMessage().contains(e.getValue()), x.getMessage());
    }
  }

  @Test
  void keysOfTargetsFromAFileAreTheirRelabelledLabels() throws Exception {
    SimulationInputs.Targets read = SimulationInputs.readTargets(EXAMPLE_TARGETS,
        List.of("job", "instance", "pod"));
    assertEquals(18, read.targets().size());
    Target kubelet = read.targets().get(0);
    assertEquals("10.0.1.10:10250", kubelet.address());
    assertEquals(List.of("kubelet", "ip-10-0-1-10.ec2.internal", ""), read.keys().get(kubelet),
        "instance as relabelled (the node's name, not the address); no pod label: empty");
    Target ksm = read.targets().get(9);
    assertEquals(List.of("kubernetes-pods", "10.0.2.41:8080",
        "kube-state-metrics-6b8f9c7d4-q2w8r"), read.keys().get(ksm));
    assertEquals(Map.of(), SimulationInputs.readTargets(EXAMPLE_TARGETS).keys(),
        "no labels asked for, none kept");

    // A target without a "labels" object: Prometheus's defaults, job and address.
    Path bare = Files.writeString(dir.resolve("t.json"), "{\"data\":{\"activeTargets\":[{"
        + "\"scrapePool\":\"p\",\"discoveredLabels\":{\"__address__\":\"a:1\",\"team\":\"x\"}}]}}");
    SimulationInputs.Targets b = SimulationInputs.readTargets(bare,
        List.of("job", "instance", "team", "pod"));
    assertEquals(List.of("p", "a:1", "x", ""), b.keys().get(b.targets().get(0)));
  }

  @Test
  void targetsWithoutASampleCostTheMedianOfTheMatched() throws Exception {
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      targets.add(Target.of("j", "h" + i + ":1"));
    }
    Cluster cluster = new Cluster(Map.of(), List.of(Collector.of("c", null)), targets);
    Path file = Files.writeString(dir.resolve("q.json"), vector(sample("j", "h0:1", "10"),
        sample("j", "h1:1", "300"), sample("j", "h2:1", "20"), sample("j", "gone:1", "9999")));
    CostInputs.Costed c = CostInputs.attach(cluster,
        CostInputs.read(file, CostInputs.DEFAULT_MATCH), CostInputs.DEFAULT_MATCH);
    assertEquals(3, c.matched());
    assertEquals(20, c.fallbackCost(), "the median of 10, 20, 300");
    assertEquals(List.of(10L, 300L, 20L, 20L, 20L),
        c.cluster().targets().stream().map(Target::cost).toList());

    CostInputs.Costed none = CostInputs.attach(cluster, Map.of(), CostInputs.DEFAULT_MATCH);
    assertEquals(0, none.matched());
    assertEquals(1, none.fallbackCost(), "nothing matched: cost 1, the count-based balance");
    assertTrue(none.cluster().targets().stream().allMatch(t -> t.cost() == 1));

    // A target lacking a label of the key matches nothing, even a sample that lacks it too.
    CostInputs.Costed byNamespace = CostInputs.attach(cluster,
        Map.of(List.of(""), 5000L, List.of("shop"), 7L), List.of("namespace"));
    assertEquals(0, byNamespace.matched());
  }

  @Test
  void theExampleMatchesOnJobAndInstanceAsRelabelled() throws Exception {
    SimulationInputs.Targets read = SimulationInputs.readTargets(EXAMPLE_TARGETS,
        CostInputs.DEFAULT_MATCH);
    Cluster cluster = new Cluster(read.zones(), List.of(), read.targets());
    CostInputs.Costed c = CostInputs.attach(cluster,
        CostInputs.read(EXAMPLE_COSTS, CostInputs.DEFAULT_MATCH), read.keys()::get);
    assertEquals(17, c.matched(), "all but the pod not yet scraped (health unknown)");
    assertEquals(812, c.fallbackCost());
    Map<String, Long> byAddressAndPath = new HashMap<>();
    for (Target t : c.cluster().targets()) {
      byAddressAndPath.put(t.address() + t.labels().get("__metrics_path__"), t.cost());
    }
    assertEquals(812L, byAddressAndPath.get("10.0.1.10:10250/metrics"), "kubelet");
    assertEquals(4981L, byAddressAndPath.get("10.0.1.10:10250/metrics/cadvisor"), "cAdvisor");
    assertEquals(7843L, byAddressAndPath.get("10.0.2.41:8080/metrics"), "kube-state-metrics");
    assertEquals(0L, byAddressAndPath.get("10.0.3.31:9090/metrics"), "down: 0 samples");
    assertEquals(812L, byAddressAndPath.get("10.0.3.34:8080/metrics"), "no sample: the median");
  }

  @Test
  void capacitiesAreGivenInTurn() {
    List<Collector> collectors = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      collectors.add(Collector.of("c" + i, null));
    }
    Cluster cluster = new Cluster(Map.of(), collectors, List.of());
    assertEquals(List.of(1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0),
        CostInputs.capacities(cluster, new double[] {1, 2, 4}).collectors().stream()
            .map(Collector::capacity).toList());
    assertEquals(List.of(3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0),
        CostInputs.capacities(cluster, new double[] {3}).collectors().stream()
            .map(Collector::capacity).toList());
  }
}
