package dev.apportion.bench.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command as a user runs it: exit codes, what goes to stdout and to stderr. */
class SimulateCommandTest {
  private static final byte[] PNG_MAGIC = {(byte) 0x89, 'P', 'N', 'G'};

  @TempDir
  Path dir;

  private record Run(int exit, String out, String err) {}

  private static Run simulate(String... args) {
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
    String[] lines = run.err().strip().split("\n");
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
    for (Scenario s : Scenario.values()) {
      assertTrue(run.out().contains("== " + s.title() + " =="), s.title());
    }
    long rows = Arrays.stream(run.out().split("\n"))
        .filter(l -> l.matches("^(consistent-hashing|least-weighted|per-node|rendezvous) .*"))
        .count();
    assertEquals(4 * Scenario.values().length, rows, run.out());
    for (String chart : new String[] {"distribution.png", "moved.png"}) {
      Path file = plots.resolve(chart);
      assertTrue(Files.size(file) > 1000, chart);
      assertArrayEquals(PNG_MAGIC, Arrays.copyOf(Files.readAllBytes(file), 4), chart);
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
    Run run = simulate("--targets", InputsTest.sample().toString());
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
    Run run = simulate("--targets", InputsTest.sample().toString(), "--collectors",
        collectors.toString());
    assertOneLineError(run, "apportion simulate: " + collectors + ":2: expected");
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
}
