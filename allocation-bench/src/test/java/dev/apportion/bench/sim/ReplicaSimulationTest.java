package dev.apportion.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The simulator with {@code --replicas}: every replica counted, and what a crash costs. */
class ReplicaSimulationTest {
  private static final long SEED = 7;
  private static final List<String> STRATEGIES =
      List.of("consistent-hashing", "least-weighted", "rendezvous");

  private static Cluster cluster() {
    return ClusterGenerator.generate(new ClusterGenerator.Shape(3, 12, 1_200, 3, 0.05), SEED);
  }

  @Test
  void everyScenarioCountsEveryReplica() {
    Cluster cluster = cluster();
    for (Result r : new Simulator(Mode.CENTRAL, SEED, null, 2)
        .run(cluster, STRATEGIES, List.of(ClusterScenario.values()))) {
      String what = r.strategy() + " " + r.scenario();
      assertEquals(0, r.unassigned(), what);
      assertEquals(2 * r.targets(), r.assigned(), what);
      assertTrue(r.moved() >= r.minimumMoved(), what);
      if (r.scenario() == ClusterScenario.SCALE_IN) {
        assertTrue(r.minimumMoved() > 0, what + ": the leaver held replicas");
      }
    }
  }

  @Test
  void aCrashOfOneCollectorOrOneZoneLeavesNoTargetDarkWithTwoReplicas() {
    CrashCost.Report report = CrashCost.run(cluster(), STRATEGIES, SEED, 2);
    assertEquals(3, report.crashes().size(), report.crashes().toString());
    for (CrashCost.Row row : report.rows()) {
      int[] one = row.dark()[0];
      assertTrue(one[0] > 0, row.strategy() + ": one replica loses the dead one's targets");
      assertEquals(0, one[1], row.strategy() + ": two replicas lose none");
      int[] two = row.dark()[1];
      assertTrue(two[1] < two[0], row.strategy() + ": two crashes");
      assertEquals(0, row.dark()[2][1], row.strategy() + ": replicas in distinct zones");
    }
  }

  @Test
  void theCommandPrintsTheCrashTableAndRefusesABadCount() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int exit = SimulateCommand.run(new String[] {"--replicas", "2", "--nodes", "9",
        "--target-count", "900", "--strategy", "rendezvous", "--scenario", "scale-in"},
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    String text = out.toString(StandardCharsets.UTF_8);
    assertEquals(0, exit, text);
    assertTrue(text.contains("crash: targets with no live owner"), text);
    assertTrue(text.contains("1 collector"), text);
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertEquals(2, SimulateCommand.run(new String[] {"--replicas", "9"},
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8)));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("--replicas must be from 1 to 8"));
  }
}
