package dev.apportion.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRing;
import dev.apportion.allocation.ring.HashRings;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code --mode local} on a small seeded cluster, checked against counts computed here. */
class LocalSimulationTest {
  private static final Cluster CLUSTER =
      ClusterGenerator.generate(new ClusterGenerator.Shape(2, 8, 800, 3, 0.05), 7);

  @Test
  void countsMatchTheRendezvousRing() {
    Map<String, LocalSimulation.Row> rows = LocalSimulation.byRun(LocalSimulation.run(CLUSTER));
    List<String> names = new ArrayList<>();
    for (Collector c : CLUSTER.collectors()) {
      names.add(c.name());
    }
    HashRing ring = HashRings.rendezvous(names);
    // share.get(i): what names.get(i) owns when every replica sees every member.
    int[] byIndex = new int[names.size()];
    for (Target t : CLUSTER.targets()) {
      byIndex[ring.ownerIndex(t.hash())]++;
    }
    int[] share = new int[names.size()];
    for (int i = 0; i < names.size(); i++) {
      share[i] = byIndex[ring.members().indexOf(names.get(i))];
    }
    int n = CLUSTER.targets().size();

    LocalSimulation.Row steady = rows.get("steady");
    assertEquals(0, steady.gaps());
    assertEquals(0, steady.duplicated());
    assertEquals(n, steady.once());

    // The replica that sees only itself owns everything: every other replica's targets twice.
    LocalSimulation.Row partitioned = rows.get("partitioned");
    assertEquals(0, partitioned.gaps(), "fail-safe: duplicates, never gaps");
    assertEquals(n - share[0], partitioned.duplicated());

    // Forgotten by its peers too: they split its share among themselves, it still owns all.
    LocalSimulation.Row forgotten = rows.get("forgotten");
    assertEquals(0, forgotten.gaps());
    assertEquals(n, forgotten.duplicated());

    LocalSimulation.Row leave = rows.get("leave");
    assertEquals(share[names.size() - 1], leave.minimum());
    assertEquals(leave.minimum(), leave.moved(), "rendezvous: exactly the leaver's targets move");
    assertEquals(0, leave.gaps());
    assertEquals(0, leave.duplicated());

    LocalSimulation.Row join = rows.get("join");
    assertEquals(join.minimum(), join.moved(), "the newcomer takes exactly what it now owns");
    assertEquals(0, join.gaps());
    assertEquals(0, join.duplicated());
    assertTrue(join.moved() > 0);
  }

  @Test
  void theCommandPrintsTheTableAndRejectsCentralOnlyOptions() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = SimulateCommand.run(new String[] {"--mode", "local", "--nodes", "6",
        "--target-count", "600"}, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
    String table = out.toString(StandardCharsets.UTF_8);
    assertTrue(table.contains("== local ownership"), table);
    assertTrue(table.contains("partitioned"), table);

    err.reset();
    code = SimulateCommand.run(new String[] {"--mode", "local", "--strategy", "per-node"},
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(2, code);
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("--mode local takes no --strategy"));
  }
}
