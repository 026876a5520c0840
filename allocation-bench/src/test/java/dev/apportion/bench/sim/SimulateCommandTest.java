package dev.apportion.bench.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/** The command as a user runs it: exit codes, what goes to stdout and to stderr. */
class SimulateCommandTest {
  private static final byte[] PNG_MAGIC = {(byte) 0x89, 'P', 'N', 'G'};

  @TempDir
  Path dir;

  private record Run(int exit, String out, String err) {}

  /** The full table ({@code --table}), which most tests read. */
  private static Run simulate(String... args) {
    String[] withTable = Arrays.copyOf(args, args.length + 1);
    withTable[args.length] = "--table";
    return simulateAsGiven(withTable);
  }

  private static Run simulateAsGiven(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit = SimulateCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(exit, out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8));
  }

  private static void assertOneLineError(Run run, String expectedStart) {
    assertEquals(2, run.exit(), run.err());
    assertEquals("", run.out());
    String[] lines = run.err().strip().split("\n", -1);
    assertEquals(1, lines.length, run.err());
    assertTrue(lines[0].startsWith(expectedStart), lines[0]);
    assertFalse(run.err().contains("Exception"), "no stack trace: " + run.err());
  }

  @Test
  void aSmallGeneratedClusterPrintsEveryScenarioAndWritesCharts() throws IOException {
    Path plots = dir.resolve("plots");
    Run run = simulate("--nodes", "6", "--zones", "2", "--target-count", "300", "--plot",
        plots.toString());
    assertEquals(0, run.exit(), run.err());
    for (ClusterScenario s : ClusterScenario.values()) {
      assertTrue(run.out().contains("== " + s.title() + " =="), s.title());
    }
    long rows = Arrays.stream(run.out().split("\n"))
        .filter(l -> l.matches("^(consistent-hashing|least-weighted|per-node|rendezvous) .*"))
        .count();
    assertEquals(4L * ClusterScenario.values().length, rows, run.out());
    for (String chart : new String[] {"distribution.png", "moved.png"}) {
      Path file = plots.resolve(chart);
      assertTrue(Files.size(file) > 1000, chart);
      assertArrayEquals(PNG_MAGIC, Arrays.copyOf(Files.readAllBytes(file), 4), chart);
    }
  }

  @Test
  void byDefaultEachScenarioGetsAVerdictThatTheTableBearsOut() {
    String[] shape = {"--nodes", "12", "--zones", "3", "--target-count", "2400"};
    Run verdicts = simulateAsGiven(shape);
    assertEquals(0, verdicts.exit(), verdicts.err());
    assertEquals("", verdicts.err(), "no progress lines when the output is not a terminal");
    assertFalse(verdicts.out().contains("peak/mean  min/mean"), "no table: " + verdicts.out());
    for (ClusterScenario s : ClusterScenario.values()) {
      assertTrue(verdicts.out().contains("\n" + s.title() + "\n  balance   most even "),
          s.title() + " in\n" + verdicts.out());
    }
    assertTrue(verdicts.out().lines().allMatch(l -> l.length() <= 150), verdicts.out());
    // The initial placement's most even strategy is the one with the least peak/mean.
    Run table = simulate(concat(shape, "--scenario", "initial"));
    String best = null;
    double least = Double.MAX_VALUE;
    for (String line : table.out().lines().toList()) {
      String[] cells = line.trim().split(" +", -1);
      if (cells.length > 15 && cells[1].matches("[0-9.]+") && Double.parseDouble(cells[1])
          < least) {
        least = Double.parseDouble(cells[1]);
        best = cells[0];
      }
    }
    assertTrue(verdicts.out().contains("initial placement\n  balance   most even " + best
        + " (peak/mean " + String.format(java.util.Locale.ROOT, "%.2f", least)), best + " "
        + least + " in\n" + verdicts.out());
  }

  @Test
  void helpListsTheOptionsTheTableAmongThem() {
    Run run = simulateAsGiven("--help");
    assertEquals(0, run.exit(), run.err());
    for (String option : new String[] {"--targets", "--table", "--strategy", "--scenario",
        "--plot", "--seed"}) {
      assertTrue(run.out().contains(option), option + " in\n" + run.out());
    }
  }

  @Test
  void oneStrategyAndOneScenarioCanBeChosen() {
    Run run = simulate("--nodes", "4", "--target-count", "100", "--strategy", "per-node",
        "--scenario", "scale-in");
    assertEquals(0, run.exit(), run.err());
    assertTrue(run.out().contains("== scale in by one =="));
    assertFalse(run.out().contains("== initial placement =="));
    assertTrue(run.out().contains("\nper-node "));
    assertFalse(run.out().contains("\nrendezvous "));
  }

  @Test
  void theCommittedSampleIsSimulatedWithOneCollectorPerNode() throws Exception {
    Run run = simulate("--targets", SimulationInputsTest.sample().toString());
    assertEquals(0, run.exit(), run.err());
    assertTrue(run.out().startsWith("cluster: 3 nodes in 3 zones, 3 collectors, 9 targets "
        + "(1 with no node)"), run.out());
    // per-node keeps every scrape on its node, so cross-zone is 0 of the 8 targets with a node.
    assertTrue(run.out().lines().anyMatch(l -> l.startsWith("per-node ")
        && l.contains(" 0 (0.0%) ")), run.out());
  }

  @Test
  void malformedTargetsExitWithTwoAndOneLine() throws IOException {
    Path bad = dir.resolve("targets.json");
    Files.writeString(bad, "{\"status\":\"success\",\"data\":{\"activeTargets\":[{\"disc");
    assertOneLineError(simulate("--targets", bad.toString()), "apportion simulate: " + bad + ":1:");
  }

  @Test
  void aTargetWithoutAddressNamesTheField() throws IOException {
    Path bad = dir.resolve("targets.json");
    Files.writeString(bad, "{\"data\":{\"activeTargets\":[{\"scrapePool\":\"p\","
        + "\"discoveredLabels\":{}}]}}");
    Run run = simulate("--targets", bad.toString());
    assertOneLineError(run, "apportion simulate: " + bad + ": field data.activeTargets[0]"
        + ".discoveredLabels.__address__");
  }

  @Test
  void aBadCollectorsFileNamesTheLine() throws Exception {
    Path collectors = dir.resolve("collectors.txt");
    Files.writeString(collectors, "a node-1\nb\n");
    Run run = simulate("--targets", SimulationInputsTest.sample().toString(), "--collectors",
        collectors.toString());
    assertOneLineError(run, "apportion simulate: " + collectors + ":2: expected");
  }

  @Test
  void aLoadFactorAfterTheNameConfiguresThatRun() {
    // Enough targets per collector that the largest cost (5000) fits in a tenth of a share: at a
    // few hundred targets a tight bound is a bin-packing problem no placement can always solve.
    Run run = simulate("--nodes", "6", "--target-count", "12000", "--nodeless-percent", "0",
        "--strategy", "consistent-hashing@1.05", "--strategy", "consistent-hashing@1.5",
        "--scenario", "initial");
    assertEquals(0, run.exit(), run.err());
    // The generated cluster has costs: consistent-hashing bounds cost (the "cost p/m" column).
    double tight = costPeakOverMean(run.out(), "consistent-hashing@1.05");
    double loose = costPeakOverMean(run.out(), "consistent-hashing@1.5");
    assertTrue(tight <= 1.05 + 0.005, "cost p/m " + tight + " above its load factor");
    assertTrue(loose > tight, "cost p/m " + loose + " at 1.5, " + tight + " at 1.05");
    assertOneLineError(simulate("--strategy", "consistent-hashing@0.9"),
        "apportion simulate: --strategy consistent-hashing@0.9: the load factor after '@' must "
            + "be a number above 1, not '0.9'");
    assertOneLineError(simulate("--strategy", "round-robin@1.2"),
        "apportion simulate: --strategy: unknown strategy 'round-robin'");
  }

  private static double costPeakOverMean(String out, String strategy) {
    return column(out, strategy, 3);
  }

  /** A number in the first row of {@code strategy}: 1 peak/mean, 2 min/mean, 3 cost p/m, ... */
  private static double column(String out, String strategy, int column) {
    for (String line : out.split("\n", -1)) {
      String[] cells = line.trim().split("\\s+", -1);
      if (cells.length > 1 && cells[0].equals(strategy)) {
        return Double.parseDouble(cells[column]);
      }
    }
    throw new AssertionError("no row for " + strategy + " in\n" + out);
  }

  @Test
  void theExampleRunsWithItsCostsMatchedOnJobAndInstance() throws Exception {
    Path plots = dir.resolve("plots");
    Run run = simulate("--targets", CostInputsTest.EXAMPLE_TARGETS.toString(), "--costs",
        CostInputsTest.EXAMPLE_COSTS.toString(), "--scenario", "initial", "--plot",
        plots.toString());
    assertEquals(0, run.exit(), run.err());
    String costs = "costs: 17 of 18 targets matched a sample of "
        + CostInputsTest.EXAMPLE_COSTS + " on job,instance; the others cost the median, 812";
    assertEquals(costs, run.err().strip());
    assertTrue(run.out().startsWith("cluster: 3 nodes in 3 zones, 3 collectors, 18 targets "
        + "(1 with no node)"), run.out());
    // Costs differ by a factor of 300 here: balancing the count does not balance the cost.
    double count = column(run.out(), "rendezvous", 1);
    double cost = column(run.out(), "rendezvous", 3);
    assertTrue(cost > count, "rendezvous: peak/mean " + count + ", cost p/m " + cost);
    for (String chart : new String[] {"distribution.png", "cost-distribution.png"}) {
      assertArrayEquals(PNG_MAGIC, Arrays.copyOf(Files.readAllBytes(plots.resolve(chart)), 4));
    }
    // docs/simulator.md shows this run; the line it quotes must still be what the run prints.
    String doc = Files.readString(Path.of("..", "docs", "simulator.md"));
    assertTrue(doc.contains(costs.replace(CostInputsTest.EXAMPLE_COSTS.toString(),
        "docs/examples/scrape-samples-scraped.json")), "docs/simulator.md quotes: " + costs);
  }

  @Test
  void costLabelsNameTheLabelsToMatchOn() throws Exception {
    Run run = simulate("--targets", CostInputsTest.EXAMPLE_TARGETS.toString(), "--costs",
        CostInputsTest.EXAMPLE_COSTS.toString(), "--cost-labels", "namespace,pod",
        "--strategy", "least-weighted", "--scenario", "initial");
    assertEquals(0, run.exit(), run.err());
    // The 8 pod targets carry both labels; one has no sample yet. The others lack "pod".
    assertEquals("costs: 7 of 18 targets matched a sample of " + CostInputsTest.EXAMPLE_COSTS
        + " on namespace,pod; the others cost the median, 356", run.err().strip());

    Run generated = simulate("--nodes", "3", "--target-count", "30", "--scenario", "initial",
        "--strategy", "rendezvous", "--costs", Files.writeString(dir.resolve("q.json"),
            CostInputsTest.vector(CostInputsTest.sample("blackbox",
                "https://probe-0.example.com/healthz", "100"))).toString());
    assertEquals(0, generated.exit(), generated.err());
    assertTrue(generated.err().startsWith("costs: 1 of 30 targets matched"), generated.err());
  }

  @Test
  void theGeneratedClusterHasMixedCapacitiesUnlessToldOtherwise() {
    String[] shape = {"--nodes", "30", "--target-count", "6000", "--nodeless-percent", "0",
        "--unit-costs", "--strategy", "least-weighted", "--strategy", "per-node", "--scenario",
        "initial"};
    // The balance columns are relative to each collector's capacity share. least-weighted fills
    // each collector to its share whatever the capacities (1.00 everywhere); per-node keeps a
    // node's targets on its collector whatever its capacity, so capacities 1, 2 and 4 in turn
    // leave the capacity-1 collectors far above their share.
    Run mixed = simulate(shape);
    assertEquals(0, mixed.exit(), mixed.err());
    assertEquals(1.0, column(mixed.out(), "least-weighted", 1), 0.02, mixed.out());
    assertEquals(1.0, column(mixed.out(), "least-weighted", 2), 0.02, mixed.out());
    assertEquals(1.0, column(mixed.out(), "least-weighted", 3), 0.02, mixed.out());

    Run explicit = simulate(concat(shape, "--capacities", "1,2,4"));
    assertEquals(withoutTimes(mixed.out()), withoutTimes(explicit.out()),
        "the default is --capacities 1,2,4");

    Run uniform = simulate(concat(shape, "--capacities", "1"));
    assertEquals(0, uniform.exit(), uniform.err());
    assertEquals(1.0, column(uniform.out(), "least-weighted", 1), 0.02, uniform.out());
    double uniformPeak = column(uniform.out(), "per-node", 1);
    double mixedPeak = column(mixed.out(), "per-node", 1);
    assertTrue(mixedPeak > uniformPeak + 1.0, mixed.out() + uniform.out());

    Run two = simulate(concat(shape, "--capacities", "1,3"));
    assertEquals(0, two.exit(), two.err());
    double twoPeak = column(two.out(), "per-node", 1);
    assertTrue(twoPeak > uniformPeak + 0.5 && twoPeak < mixedPeak, two.out());

    // A targets file has no capacities to draw: 1 for all unless --capacities is given.
    Run file = simulate("--targets", CostInputsTest.EXAMPLE_TARGETS.toString(), "--strategy",
        "per-node", "--scenario", "initial");
    Run fileUniform = simulate("--targets", CostInputsTest.EXAMPLE_TARGETS.toString(),
        "--strategy", "per-node", "--scenario", "initial", "--capacities", "1");
    assertEquals(withoutTimes(fileUniform.out()), withoutTimes(file.out()),
        "a file's collectors have capacity 1");
    Run fileMixed = simulate("--targets", CostInputsTest.EXAMPLE_TARGETS.toString(),
        "--strategy", "per-node", "--scenario", "initial", "--capacities", "1,2,3");
    assertTrue(column(fileMixed.out(), "per-node", 1) != column(file.out(), "per-node", 1),
        fileMixed.out() + file.out());
  }

  /** The table without its time column (wall time, padded to its width). */
  private static String withoutTimes(String out) {
    return out.replaceAll(" +[0-9.]+ (ms|s)\n", "\n");
  }

  private static String[] concat(String[] a, String... b) {
    String[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  @Test
  void anUnknownStrategyIsAnInputError() {
    assertOneLineError(simulate("--strategy", "round-robin"),
        "apportion simulate: --strategy: unknown strategy 'round-robin'");
  }

  @Test
  void aMistypedOptionIsOneLineToo() {
    assertOneLineError(simulate("--nodes", "many"),
        "apportion simulate: Invalid value for option '--nodes': 'many' is not an int");
    assertOneLineError(simulate("--scenario", "meteor"),
        "apportion simulate: Invalid value for option '--scenario'");
    assertOneLineError(simulate("--nodes", "0"), "apportion simulate: bad cluster options");
  }

  @Test
  void targetsWithoutNodesNeedACollectorList() throws IOException {
    Path file = dir.resolve("t.json");
    Files.writeString(file, "{\"data\":{\"activeTargets\":[{\"scrapePool\":\"p\","
        + "\"discoveredLabels\":{\"__address__\":\"a:1\"}}]}}");
    assertOneLineError(simulate("--targets", file.toString()),
        "apportion simulate: " + file + ": no target names a node");

    Path collectors = dir.resolve("c.txt");
    Files.writeString(collectors, "c1 n1 z1\nc2 n2 z2\n");
    Run run = simulate("--targets", file.toString(), "--collectors", collectors.toString());
    assertEquals(0, run.exit(), run.err());
  }

  /** What a bad-input row runs: its arguments, given a fresh directory to write files in. */
  @FunctionalInterface
  private interface Args {
    String[] in(Path dir) throws Exception;
  }

  /**
   * A bad input: exit code 2, one line on stderr that starts with {@code expected} (where
   * {@code {dir}} stands for the row's directory), nothing on stdout, no stack trace.
   */
  private record BadInput(String name, String expected, Args args) {}

  private static BadInput row(String name, String expected, Args args) {
    return new BadInput(name, "apportion simulate: " + expected, args);
  }

  private static String[] args(String... args) {
    return args;
  }

  private static Path file(Path dir, String name, String content) throws IOException {
    return Files.writeString(dir.resolve(name), content);
  }

  private static String sample() throws Exception {
    return SimulationInputsTest.sample().toString();
  }

  /** Every bad input the simulator must refuse in one line. Add a row for a new one. */
  private static final List<BadInput> BAD_INPUTS = List.of(
      // Options
      row("unknown strategy", "--strategy: unknown strategy 'round-robin'",
          d -> args("--strategy", "round-robin")),
      row("unknown scenario", "Invalid value for option '--scenario'",
          d -> args("--scenario", "meteor")),
      row("not a number", "Invalid value for option '--nodes': 'many' is not an int",
          d -> args("--nodes", "many")),
      row("--nodes -1", "bad cluster options: --nodes must be from 1 to 100000: -1",
          d -> args("--nodes", "-1")),
      row("--nodes 0", "bad cluster options: --nodes must be from 1 to 100000: 0",
          d -> args("--nodes", "0")),
      row("--nodes too many", "bad cluster options: --nodes must be from 1 to 100000: 100001",
          d -> args("--nodes", "100001")),
      row("--zones 0", "bad cluster options: --zones must be from 1 to the number of nodes (60): 0",
          d -> args("--zones", "0")),
      row("more zones than nodes",
          "bad cluster options: --zones must be from 1 to the number of nodes (3): 4",
          d -> args("--zones", "4", "--nodes", "3")),
      row("--jobs 0", "bad cluster options: --jobs must be at least 1: 0",
          d -> args("--jobs", "0")),
      row("--target-count -5", "bad cluster options: --target-count must be from 0 to 16777216: -5",
          d -> args("--target-count", "-5")),
      row("--nodeless-percent 101",
          "bad cluster options: --nodeless-percent must be a number from 0 to 100: 101.0",
          d -> args("--nodeless-percent", "101")),
      row("--nodeless-percent NaN",
          "bad cluster options: --nodeless-percent must be a number from 0 to 100: NaN",
          d -> args("--nodeless-percent", "NaN")),
      row("--nodeless-percent -0.5",
          "bad cluster options: --nodeless-percent must be a number from 0 to 100: -0.5",
          d -> args("--nodeless-percent", "-0.5")),
      row("--nodes with --targets", "--nodes does not apply with --targets",
          d -> args("--targets", sample(), "--nodes", "5")),
      row("--nodeless-percent with --targets", "--nodeless-percent does not apply with --targets",
          d -> args("--nodeless-percent", "0", "--targets", sample())),
      row("--target-count with --targets", "--target-count does not apply with --targets",
          d -> args("--targets", sample(), "--target-count", "30000")),
      row("--seed with local mode and --targets",
          "--seed does not apply with --mode local and --targets",
          d -> args("--mode", "local", "--targets", sample(), "--seed", "2")),
      row("--collectors without --targets", "--collectors needs --targets",
          d -> args("--collectors", file(d, "c.txt", "a n1\n").toString())),
      row("--plot with local mode", "--mode local takes no --strategy, --scenario or --plot",
          d -> args("--mode", "local", "--plot", d.resolve("plots").toString())),
      // --plot destinations, checked before anything is simulated
      row("--plot onto a regular file", "--plot {dir}/f: not a directory (a file is in the way",
          d -> args("--nodes", "3", "--target-count", "30", "--plot",
              file(d, "f", "x").toString())),
      row("--plot under a regular file", "--plot {dir}/f/charts: cannot create the directory: ",
          d -> args("--nodes", "3", "--target-count", "30", "--plot",
              file(d, "f", "x").resolve("charts").toString())),
      row("--plot into a pseudo-filesystem", "--plot /proc/apportion-charts: ",
          d -> {
            assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs Linux /proc");
            return args("--nodes", "3", "--target-count", "30", "--plot",
                "/proc/apportion-charts");
          }),
      row("--plot into a read-only directory", "--plot {dir}/ro: cannot write in the directory: ",
          d -> {
            Path ro = Files.createDirectory(d.resolve("ro"));
            assumeTrue(ro.toFile().setWritable(false, false), "cannot make it read-only");
            assumeFalse(canWrite(ro), "the user can write in a read-only directory (root)");
            return args("--nodes", "3", "--target-count", "30", "--plot", ro.toString());
          }),
      // Targets files
      row("not JSON", "{dir}/t.json:1:", d -> args("--targets", file(d, "t.json",
          "{\"status\":\"success\",\"data\":{\"activeTargets\":[{\"disc").toString())),
      row("content after the document",
          "{dir}/t.json:158:1: unexpected content after the end of the JSON document",
          d -> args("--targets", file(d, "t.json",
              Files.readString(SimulationInputsTest.sample()) + "{\"more\":1}").toString())),
      row("no active targets", "{dir}/t.json: the file has no active targets",
          d -> args("--targets", file(d, "t.json",
              "{\"status\":\"success\",\"data\":{\"activeTargets\":[]}}").toString())),
      row("a target without address",
          "{dir}/t.json: field data.activeTargets[0].discoveredLabels.__address__",
          d -> args("--targets", file(d, "t.json",
              "{\"data\":{\"activeTargets\":[{\"scrapePool\":\"p\",\"discoveredLabels\":{}}]}}")
              .toString())),
      row("targets not UTF-8", "{dir}/t.json:1:", d -> {
        Path t = d.resolve("t.json");
        Files.write(t, "{\"data\":{\"activeTargets\":[{\"scrapePool\":\"caf\u00e9\"}]}}"
            .getBytes(StandardCharsets.ISO_8859_1));
        return args("--targets", t.toString());
      }),
      row("targets is a directory", "{dir}: cannot read: ", d -> args("--targets", d.toString())),
      row("targets missing", "{dir}/absent.json: cannot read: ",
          d -> args("--targets", d.resolve("absent.json").toString())),
      // Collectors files
      row("a bad collectors line", "{dir}/c.txt:2: expected",
          d -> args("--targets", sample(), "--collectors",
              file(d, "c.txt", "a node-1\nb\n").toString())),
      row("collectors not UTF-8", "{dir}/c.txt:2: not UTF-8 text (byte 3 of the line is 0xE9)",
          d -> {
            Path c = d.resolve("c.txt");
            Files.write(c, "a node-1\nag\u00e9nt-b node-2\n".getBytes(StandardCharsets.ISO_8859_1));
            return args("--targets", sample(), "--collectors", c.toString());
          }),
      // Costs files and options
      row("costs missing", "--costs {dir}/absent.json: no such file",
          d -> args("--costs", d.resolve("absent.json").toString())),
      row("costs not JSON", "--costs {dir}/q.json: not valid JSON: ",
          d -> args("--costs", file(d, "q.json", "{\"status\":\"success\",\"data\":{")
              .toString())),
      row("costs not a vector", "--costs {dir}/q.json: not a Prometheus instant-query response "
          + "with a vector result", d -> args("--costs", file(d, "q.json",
              "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{"
              + "\"metric\":{\"job\":\"a\"},\"values\":[[1700000000,\"1\"]]}]}}").toString())),
      row("costs a targets response", "--costs {dir}/t.json: not a Prometheus instant-query "
          + "response", d -> args("--costs", Files.copy(SimulationInputsTest.sample(),
              d.resolve("t.json")).toString())),
      row("costs query failed", "--costs {dir}/q.json: the query failed (status \"error\", "
          + "errorType \"bad_data\", error \"parse error\")", d -> args("--costs",
              file(d, "q.json", "{\"status\":\"error\",\"errorType\":\"bad_data\","
                  + "\"error\":\"parse error\"}").toString())),
      row("costs non-numeric", "--costs {dir}/q.json: data.result[0] {", d -> args("--costs",
          file(d, "q.json", CostInputsTest.vector(CostInputsTest.sample("a", "b", "many")))
              .toString())),
      row("costs NaN", "--costs {dir}/q.json: data.result[1] {", d -> args("--costs",
          file(d, "q.json", CostInputsTest.vector(CostInputsTest.sample("a", "b", "1"),
              CostInputsTest.sample("a", "c", "NaN"))).toString())),
      row("costs negative", "--costs {dir}/q.json: data.result[0] {", d -> args("--targets",
          sample(), "--costs", file(d, "q.json", CostInputsTest.vector(
              CostInputsTest.sample("a", "b", "-1"))).toString())),
      row("costs no value", "--costs {dir}/q.json: data.result[0] {\"job\":\"a\"}: no value",
          d -> args("--costs", file(d, "q.json", "{\"status\":\"success\",\"data\":{"
              + "\"resultType\":\"vector\",\"result\":[{\"metric\":{\"job\":\"a\"}}]}}")
              .toString())),
      row("--costs with --unit-costs", "--costs and --unit-costs exclude each other",
          d -> args("--unit-costs", "--costs", d.resolve("q.json").toString())),
      row("--cost-labels without --costs", "--cost-labels needs --costs",
          d -> args("--cost-labels", "job")),
      row("--cost-labels with an empty name",
          "--cost-labels: a label name is empty: 'job,,instance'",
          d -> args("--costs", d.resolve("q.json").toString(), "--cost-labels", "job,,instance")),
      row("--capacities 0", "--capacities: each must be a finite number > 0: 0.0",
          d -> args("--capacities", "1,0")),
      row("--capacities negative", "--capacities: each must be a finite number > 0: -2.0",
          d -> args("--capacities", "-2")),
      row("--capacities NaN", "--capacities: each must be a finite number > 0: NaN",
          d -> args("--targets", sample(), "--capacities", "NaN")),
      row("--capacities Infinity", "--capacities: each must be a finite number > 0: Infinity",
          d -> args("--capacities", "2,Infinity")),
      row("--capacities not a number", "Invalid value for option '--capacities' (LIST): 'big'",
          d -> args("--capacities", "1,big")));

  private static boolean canWrite(Path dir) {
    try {
      Files.delete(Files.createTempFile(dir, "probe", ""));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  @TestFactory
  Stream<DynamicTest> badInputExitsWithTwoAndOneLineOnStderr() {
    return BAD_INPUTS.stream().map(row -> DynamicTest.dynamicTest(row.name(), () -> {
      Path d = Files.createDirectory(dir.resolve("row-" + BAD_INPUTS.indexOf(row)));
      String[] args = row.args().in(d);
      assertOneLineError(simulate(args), row.expected().replace("{dir}", d.toString()));
    }));
  }

  @Test
  void aPlotDirectoryIsCreatedWhenMissing() throws IOException {
    Path plots = dir.resolve("a/b/c");
    Run run = simulate("--nodes", "3", "--target-count", "30", "--strategy", "rendezvous",
        "--scenario", "scale-in", "--plot", plots.toString());
    assertEquals(0, run.exit(), run.err());
    assertTrue(Files.exists(plots.resolve("moved.png")), run.out());
    try (Stream<Path> files = Files.list(plots)) {
      assertEquals(List.of("moved.png"), files.map(p -> p.getFileName().toString()).toList(),
          "the probe file is gone");
    }
  }

  @Test
  void duplicateTargetsAreCountedAndCollapsed() throws Exception {
    String a = "{\"scrapePool\":\"p\",\"discoveredLabels\":{\"__address__\":\"a:1\","
        + "\"__meta_kubernetes_pod_node_name\":\"n1\",\"__meta_x\":\"%s\"}}";
    String b = "{\"scrapePool\":\"p\",\"discoveredLabels\":{\"__address__\":\"b:1\","
        + "\"__meta_kubernetes_pod_node_name\":\"n2\"}}";
    Path file = file(dir, "t.json", "{\"data\":{\"activeTargets\":[" + String.format(a, "old")
        + "," + b + "," + String.format(a, "new") + "," + b + "]}}");
    Run run = simulate("--targets", file.toString(), "--strategy", "per-node", "--scenario",
        "initial");
    assertEquals(0, run.exit(), run.err());
    assertTrue(run.out().startsWith("cluster: 2 nodes in 0 zones, 2 collectors, 4 targets "
        + "(2 duplicates collapsed: same job and identity labels; 2 simulated, 0 with no node)"),
        run.out());

    Cluster cluster = new Cluster(Map.of(), List.of(),
        SimulationInputs.readTargets(file).targets());
    assertEquals(2, cluster.targets().size());
    assertEquals(2, cluster.duplicates());
    assertEquals("new", cluster.targets().get(0).labels().get("__meta_x"),
        "the last copy's labels, as an allocator keeps them");
    assertEquals("b:1", cluster.targets().get(1).address(), "the first copy's place");
  }

  @Test
  void runningOutOfHeapIsOneLineThatSaysHowMuchToGive() throws Exception {
    Path file = PrometheusFiles.write(dir.resolve("t.json"), 60_000);
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process p = new ProcessBuilder(java.toString(), "-Xmx32m", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"), "dev.apportion.bench.Main", "simulate",
        "--targets", file.toString())
        .redirectOutput(dir.resolve("out.txt").toFile())
        .redirectError(dir.resolve("err.txt").toFile())
        .start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the child JVM finishes");
    // A slow machine may print a progress line ("simulate: ..., step 1 of 2") before running out.
    String err = Files.readString(dir.resolve("err.txt")).replaceAll("(?m)^simulate: .*\\R", "");
    Run run = new Run(p.exitValue(), Files.readString(dir.resolve("out.txt")), err);
    assertOneLineError(run, "apportion simulate: out of memory (maximum heap ");
    assertTrue(run.err().contains(file.toString()), run.err());
    assertTrue(run.err().matches("(?s).*give the JVM about 2 times the file's size, e\\.g\\. "
        + "java -Xmx[0-9]+m -jar apportion\\.jar simulate \\.\\.\\.\\s*"), run.err());
  }

  @Test
  void theHeapToGiveIsTheEstimateOrTwiceWhatRanOutRounded() {
    long mb = 1 << 20;
    assertEquals("out of memory (maximum heap 256 MB) reading x (570 MB): rule, e.g. java "
        + "-Xmx2g -jar apportion.jar simulate ...",
        SimulateCommand.outOfMemory(256 * mb, "reading x (570 MB)", "rule", 1140 * mb));
    assertTrue(SimulateCommand.outOfMemory(32 * mb, "w", "r", 80 * mb).contains("-Xmx128m "));
    assertTrue(SimulateCommand.outOfMemory(4096 * mb, "w", "r", 80 * mb).contains("-Xmx8g "),
        "an estimate below the heap that ran out is no advice: twice that heap");
  }
}
