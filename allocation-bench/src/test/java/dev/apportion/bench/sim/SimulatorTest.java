package dev.apportion.bench.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRing;
import dev.apportion.allocation.ring.HashRings;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The simulator on a small seeded cluster: its counts are checked against figures computed here
 * independently (from the cluster, the scenario's plan and our rings), not against its own output.
 */
class SimulatorTest {
  private static final long SEED = 7;
  private static final List<String> STRATEGIES =
      List.of("consistent-hashing", "least-weighted", "per-node", "rendezvous");

  private static Cluster cluster;
  private static Map<ClusterScenario, Map<String, Result>> results;

  @BeforeAll
  static void run() {
    cluster = ClusterGenerator.generate(new ClusterGenerator.Shape(2, 8, 800, 3, 0.05), SEED);
    results = new HashMap<>();
    for (Result r : new Simulator(Mode.CENTRAL, SEED, null)
        .run(cluster, STRATEGIES, List.of(ClusterScenario.values()))) {
      results.computeIfAbsent(r.scenario(), s -> new HashMap<>()).put(r.strategy(), r);
    }
  }

  private static Result result(ClusterScenario scenario, String strategy) {
    return results.get(scenario).get(strategy);
  }

  private static ClusterScenario.Plan plan(ClusterScenario scenario) {
    return scenario.plan(cluster, Simulator.randomFor(scenario, SEED));
  }

  private static List<Collector> finalCollectors(ClusterScenario scenario) {
    List<Collector> last = cluster.collectors();
    for (ClusterEvent step : plan(scenario).steps()) {
      if (step instanceof ClusterEvent.Collectors c) {
        last = c.collectors();
      }
    }
    return last;
  }

  private static List<Target> finalTargets(ClusterScenario scenario) {
    List<Target> last = cluster.targets();
    for (ClusterEvent step : plan(scenario).steps()) {
      if (step instanceof ClusterEvent.Targets t) {
        last = t.targets();
      }
    }
    return last;
  }

  private static Collector removed(ClusterScenario scenario) {
    Set<Collector> after = new HashSet<>(finalCollectors(scenario));
    List<Collector> gone = new ArrayList<>();
    for (Collector c : cluster.collectors()) {
      if (!after.contains(c)) {
        gone.add(c);
      }
    }
    assertEquals(1, gone.size(), scenario + " removes one collector");
    return gone.get(0);
  }

  private static int[] rendezvousLoads(List<Collector> collectors, List<Target> targets) {
    List<String> names = new ArrayList<>();
    for (Collector c : collectors) {
      names.add(c.name());
    }
    HashRing ring = HashRings.rendezvous(names);
    Map<String, Integer> counts = new HashMap<>();
    for (String n : names) {
      counts.put(n, 0);
    }
    for (Target t : targets) {
      counts.merge(ring.owner(t.hash()), 1, Integer::sum);
    }
    return counts.values().stream().mapToInt(Integer::intValue).boxed()
        .sorted((a, b) -> b - a).mapToInt(Integer::intValue).toArray();
  }

  @Test
  void everyResultAccountsForEveryTarget() {
    for (ClusterScenario s : ClusterScenario.values()) {
      int targets = finalTargets(s).size();
      int collectors = finalCollectors(s).size();
      for (String strategy : STRATEGIES) {
        Result r = result(s, strategy);
        assertEquals(targets, r.targets(), s + "/" + strategy + " targets");
        assertEquals(collectors, r.collectors(), s + "/" + strategy + " collectors");
        assertEquals(collectors, r.loads().length, s + "/" + strategy + " loads");
        assertEquals(targets, r.assigned() + r.unassigned(), s + "/" + strategy + " complete");
        assertEquals(0, r.unassigned(), s + "/" + strategy + ": every strategy has a fallback");
        int idle = (int) Arrays.stream(r.loads()).filter(l -> l == 0).count();
        assertEquals(idle, r.idle(), s + "/" + strategy + " idle");
        assertTrue(r.moved() >= r.minimumMoved(), s + "/" + strategy + " moved >= minimum");
      }
    }
  }

  @Test
  void initialPlacementOfRendezvousIsExactlyTheRingsPlacement() {
    Result r = result(ClusterScenario.INITIAL, "rendezvous");
    assertArrayEquals(rendezvousLoads(cluster.collectors(), cluster.targets()), r.loads());
    assertEquals(0, r.moved());
    assertEquals(0, r.minimumMoved());
  }

  @Test
  void perNodeNeverCrossesANodeWhileEveryNodeHasACollector() {
    int withNode = cluster.targets().size() - cluster.nodelessTargets();
    for (ClusterScenario s : List.of(ClusterScenario.INITIAL, ClusterScenario.SCALE_OUT,
        ClusterScenario.ROLLING_RESTART, ClusterScenario.NODE_LOST)) {
      Result r = result(s, "per-node");
      assertEquals(0, r.crossNode(), s + " cross-node");
      assertEquals(0, r.crossZone(), s + " cross-zone");
    }
    Result initial = result(ClusterScenario.INITIAL, "per-node");
    assertEquals(withNode, initial.nodeKnown(), "every target with a node is counted");
    assertEquals(withNode, initial.zoneKnown(), "every generated node has a zone");
  }

  @Test
  void perNodeScaleInSendsTheOrphanedNodesTargetsAcrossNodes() {
    String node = removed(ClusterScenario.SCALE_IN).node().orElseThrow();
    int onNode = 0;
    for (Target t : cluster.targets()) {
      if (t.node().map(node::equals).orElse(false)) {
        onNode++;
      }
    }
    assertTrue(onNode > 0, "the generated node has targets");
    Result r = result(ClusterScenario.SCALE_IN, "per-node");
    assertEquals(onNode, r.crossNode());
  }

  @Test
  void rendezvousScaleInMovesExactlyTheMinimum() {
    Collector gone = removed(ClusterScenario.SCALE_IN);
    List<String> names = new ArrayList<>();
    for (Collector c : cluster.collectors()) {
      names.add(c.name());
    }
    HashRing ring = HashRings.rendezvous(names);
    int held = 0;
    for (Target t : cluster.targets()) {
      if (ring.owner(t.hash()).equals(gone.name())) {
        held++;
      }
    }
    Result r = result(ClusterScenario.SCALE_IN, "rendezvous");
    assertEquals(held, r.minimumMoved());
    assertEquals(held, r.moved());
    assertArrayEquals(rendezvousLoads(finalCollectors(ClusterScenario.SCALE_IN), cluster.targets()),
        r.loads());
  }

  @Test
  void scaleOutHasNothingThatMustMoveAndLeastWeightedMovesNothing() {
    for (String strategy : STRATEGIES) {
      assertEquals(0, result(ClusterScenario.SCALE_OUT, strategy).minimumMoved(), strategy);
    }
    Result lw = result(ClusterScenario.SCALE_OUT, "least-weighted");
    assertEquals(0, lw.moved(), "least-weighted never rebalances");
    assertEquals(1, lw.idle(), "so the new collector stays idle");
  }

  @Test
  void aRollingRestartReplacesEveryCollectorSoEveryTargetMustMove() {
    Set<String> before = new HashSet<>();
    for (Collector c : cluster.collectors()) {
      before.add(c.name());
    }
    for (Collector c : finalCollectors(ClusterScenario.ROLLING_RESTART)) {
      assertTrue(!before.contains(c.name()), "every pod has a new name");
    }
    assertEquals(2 * cluster.collectors().size(),
        plan(ClusterScenario.ROLLING_RESTART).steps().size());
    for (String strategy : STRATEGIES) {
      assertEquals(cluster.targets().size(),
          result(ClusterScenario.ROLLING_RESTART, strategy).minimumMoved(), strategy);
    }
    // least-weighted keeps targets in place while their collector lives, and the replaced
    // pod's targets all go to the (empty) surge pod: one move each, the minimum.
    Result lw = result(ClusterScenario.ROLLING_RESTART, "least-weighted");
    assertEquals(cluster.targets().size(), lw.moved());
  }

  @Test
  void aLostNodeTakesItsTargetsWithIt() {
    Collector gone = removed(ClusterScenario.NODE_LOST);
    String node = gone.node().orElseThrow();
    int survivors = 0;
    for (Target t : cluster.targets()) {
      if (!t.node().map(node::equals).orElse(false)) {
        survivors++;
      }
    }
    assertTrue(survivors < cluster.targets().size(), "the lost node had targets");
    for (String strategy : STRATEGIES) {
      assertEquals(survivors, result(ClusterScenario.NODE_LOST, strategy).targets(), strategy);
    }
    // The lost collector's targets that survive (those not on its node) had to move; rendezvous
    // moves exactly those.
    Result r = result(ClusterScenario.NODE_LOST, "rendezvous");
    List<String> names = new ArrayList<>();
    for (Collector c : cluster.collectors()) {
      names.add(c.name());
    }
    HashRing ring = HashRings.rendezvous(names);
    int mustMove = 0;
    for (Target t : cluster.targets()) {
      if (ring.owner(t.hash()).equals(gone.name()) && !t.node().map(node::equals).orElse(false)) {
        mustMove++;
      }
    }
    assertEquals(mustMove, r.minimumMoved());
    assertEquals(mustMove, r.moved());
  }

  @Test
  void aSweepRemovesATenthOneAtATimeThenAddsAsMany() {
    ClusterScenario.Plan plan = plan(ClusterScenario.SWEEP);
    assertEquals(2, plan.steps().size(), "8 collectors: one leaves, one joins");
    // rendezvous moves exactly what the leaver held: its removal step is at its minimum.
    Result r = result(ClusterScenario.SWEEP, "rendezvous");
    assertTrue(r.worstStep() >= 1.0, "worst step " + r.worstStep());
    assertEquals(cluster.collectors().size(), r.collectors());
  }

  @Test
  void aSweepStepsMinimumIsWhatTheLeaverHeldOrAFairShareForAJoin() {
    Result initial = result(ClusterScenario.INITIAL, "rendezvous");
    assertTrue(Double.isNaN(initial.worstStep()), "no step changes the set by one");
    dev.apportion.allocation.Allocator a =
        dev.apportion.allocation.Allocators.builder("rendezvous").build();
    a.setCollectors(cluster.collectors());
    a.setTargets(cluster.targets());
    List<Collector> fewer = new ArrayList<>(cluster.collectors());
    Collector gone = fewer.remove(3);
    assertEquals(a.snapshot().targetCount(gone.name()),
        Simulator.stepMinimum(a.snapshot(), new ClusterEvent.Collectors(fewer)));
    List<Collector> more = new ArrayList<>(cluster.collectors());
    more.add(Collector.of("collector-new", "node-0"));
    assertEquals(cluster.targets().size() / more.size(),
        Simulator.stepMinimum(a.snapshot(), new ClusterEvent.Collectors(more)));
    assertEquals(0, Simulator.stepMinimum(a.snapshot(), new ClusterEvent.Targets(List.of())));
  }

  @Test
  void consistentHashingKeepsEverySweepStepWithinTwiceItsMinimum() {
    Cluster big = ClusterGenerator.generate(new ClusterGenerator.Shape(3, 100, 10_000, 6, 0.03),
        SEED);
    List<Result> rs = new Simulator(Mode.CENTRAL, SEED, null)
        .run(big, List.of("consistent-hashing"), List.of(ClusterScenario.SWEEP));
    Result r = rs.get(0);
    assertEquals(20, ClusterScenario.SWEEP.plan(big, Simulator.randomFor(ClusterScenario.SWEEP,
        SEED)).steps().size());
    assertTrue(r.worstStep() <= 2.0, "worst step " + r.worstStep());
    assertEquals(0, r.idle());
  }

  @Test
  void theSameSeedGivesTheSameFigures() {
    List<Result> again = new Simulator(Mode.CENTRAL, SEED, null)
        .run(cluster, STRATEGIES, List.of(ClusterScenario.SCALE_IN, ClusterScenario.NODE_LOST));
    for (Result r : again) {
      Result first = result(r.scenario(), r.strategy());
      assertArrayEquals(first.loads(), r.loads());
      assertEquals(first.moved(), r.moved());
      assertEquals(first.crossNode(), r.crossNode());
      assertEquals(first.crossZone(), r.crossZone());
    }
  }
}
