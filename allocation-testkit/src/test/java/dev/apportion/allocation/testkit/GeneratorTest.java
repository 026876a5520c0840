package dev.apportion.allocation.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class GeneratorTest {
  private static final Generator GEN = Generator.defaults();
  private static final int SEEDS = 300;

  @Test
  void theSameSeedGivesTheSameScenarioAndOtherSeedsOtherOnes() {
    Set<String> distinct = new HashSet<>();
    for (long seed = 0; seed < 50; seed++) {
      String once = GEN.scenario(seed).toJava();
      assertEquals(once, GEN.scenario(seed).toJava(), "seed " + seed);
      assertEquals(once, Generator.defaults().scenario(seed).toJava(), "a new generator agrees");
      distinct.add(once);
    }
    assertEquals(50, distinct.size(), "50 seeds, 50 scenarios");
  }

  @Test
  void clustersHaveNodesWithZeroOneAndTwoCollectorsAndSometimesACollectorWithNoNode() {
    Set<Integer> perNode = new TreeSet<>();
    boolean nodeless = false;
    for (long seed = 0; seed < SEEDS; seed++) {
      Map<String, Integer> counts = new TreeMap<>();
      Scenario s = GEN.scenario(seed);
      for (Step step : s.steps()) {
        if (step instanceof Step.AddCollectors add) {
          for (Collector c : add.collectors()) {
            if (c.node().isPresent()) {
              counts.merge(c.node().get(), 1, Integer::sum);
            } else {
              nodeless = true;
            }
          }
          break;
        }
      }
      perNode.addAll(counts.values());
      List<Collector> cluster = GEN.collectors(seed);
      Set<String> names = new HashSet<>();
      for (Collector c : cluster) {
        assertTrue(names.add(c.name()), "unique collector names");
      }
    }
    assertEquals(Set.of(1, 2), perNode, "nodes with collectors have one or two");
    assertTrue(nodeless, "some cluster has a collector with no node");
    boolean emptyNode = false;
    for (long seed = 0; seed < SEEDS && !emptyNode; seed++) {
      Set<String> withCollector = new HashSet<>();
      for (Collector c : GEN.collectors(seed)) {
        c.node().ifPresent(withCollector::add);
      }
      for (Target t : GEN.targets(seed)) {
        emptyNode |= t.node().isPresent() && t.node().get().matches("node-\\d+")
            && !withCollector.contains(t.node().get());
      }
    }
    assertTrue(emptyNode, "some target lives on a cluster node with no collector");
  }

  @Test
  void targetsComeInEveryKubernetesFormAndSomeHaveNoNode() {
    Set<String> forms = new TreeSet<>();
    for (long seed = 0; seed < SEEDS; seed++) {
      for (Target t : GEN.targets(seed)) {
        Map<String, String> l = t.labels();
        if (l.containsKey("__meta_kubernetes_endpointslice_address_target_kind")) {
          forms.add("slice-" + l.get("__meta_kubernetes_endpointslice_address_target_kind")
              + (t.node().isPresent() ? "-with-node" : "-no-node"));
        } else if (l.containsKey("__meta_kubernetes_pod_node_name")) {
          forms.add("pod");
        } else if (l.containsKey("__meta_kubernetes_node_name")) {
          forms.add("node");
        } else if (l.containsKey("__meta_kubernetes_endpoint_node_name")) {
          forms.add("endpoint");
        } else if (t.job().equals("kubernetes-service-endpoints")) {
          forms.add("endpoint-no-node");
        } else if (t.node().isEmpty()) {
          forms.add("no-node");
        }
        if (t.node().isPresent() && t.node().get().startsWith("node-gone-")) {
          forms.add("node-outside-cluster");
        }
      }
    }
    assertEquals(new TreeSet<>(List.of("endpoint", "endpoint-no-node", "no-node", "node",
        "node-outside-cluster", "pod", "slice-Node-with-node", "slice-Pod-no-node",
        "slice-Pod-with-node")), forms);
  }

  @Test
  void everyOperationAppearsIncludingSurgeAndBlip() {
    Set<String> ops = new TreeSet<>();
    for (long seed = 0; seed < SEEDS; seed++) {
      List<Step> steps = GEN.scenario(seed).steps();
      Inputs in = Inputs.EMPTY;
      for (int i = 0; i < steps.size(); i++) {
        Step s = steps.get(i);
        String name = s.getClass().getSimpleName();
        if (s instanceof Step.SetCollectors set) {
          name += set.collectors().isEmpty() ? "-empty" : "-all-new";
        }
        if (s instanceof Step.AddCollectors add && i + 1 < steps.size()
            && steps.get(i + 1) instanceof Step.RemoveCollectors remove) {
          Collector added = add.collectors().get(0);
          String removed = remove.names().get(0);
          Optional<Collector> old = in.collector(removed);
          if (old.isPresent() && old.get().node().equals(added.node())
              && added.node().isPresent()) {
            name = "Surge";
          }
        }
        ops.add(name);
        in = s.apply(in);
      }
    }
    assertEquals(new TreeSet<>(List.of("AddCollectors", "AddTargets", "MoveCollector",
        "RelabelTargets", "RemoveCollectors", "RemoveTargets", "ReplaceCollector",
        "SendDuplicates", "SetCollectors-all-new", "SetCollectors-empty", "SetTargets",
        "Surge")), ops);
  }

  @Test
  void churnChangesOnlyMetaLabelsAndKeepsTheNodeUnlessNodeChurnIsOn() {
    int relabeled = 0;
    int movedNode = 0;
    Generator steady = GEN.nodeChurn(false);
    for (Generator g : List.of(steady, GEN)) {
      for (long seed = 0; seed < SEEDS; seed++) {
        Inputs in = Inputs.EMPTY;
        for (Step s : g.scenario(seed).steps()) {
          List<Target> changed = s instanceof Step.RelabelTargets relabel ? relabel.targets()
              : s instanceof Step.SendDuplicates duplicates ? duplicates.stale() : List.of();
          for (Target t : changed) {
            Target known = in.target(t).orElseThrow(() -> new AssertionError(
                "churn of an unknown target " + t));
            assertFalse(known.sameLabels(t), "churn changes labels");
            relabeled++;
            if (!known.node().equals(t.node())) {
              assertTrue(g != steady, "the node changes only with node churn on: " + t);
              movedNode++;
            }
          }
          in = s.apply(in);
        }
      }
    }
    assertTrue(relabeled > 100, "churn happens: " + relabeled);
    assertTrue(movedNode > 0, "node churn moves some target's node");
  }

  @Test
  void sizesVaryAndStayWithinTheConfiguredBounds() {
    Generator small = Generator.defaults().maxNodes(3).maxTargets(10).maxSteps(4);
    int largest = 0;
    for (long seed = 0; seed < SEEDS; seed++) {
      Scenario s = small.scenario(seed);
      Inputs in = Inputs.EMPTY;
      for (Step step : s.steps()) {
        in = step.apply(in);
        largest = Math.max(largest, in.targetCount());
      }
      assertTrue(s.size() <= 4 + 3 + 4, "opening plus at most 4 operations (a surge is two)");
      for (Collector c : small.collectors(seed)) {
        c.node().ifPresent(n -> assertTrue(n.compareTo("node-4") < 0, n));
      }
    }
    assertTrue(largest > 0 && largest <= 10 + 4, "at most the start size plus one a step: "
        + largest);
    int big = 0;
    for (long seed = 0; seed < 100; seed++) {
      big = Math.max(big, GEN.targets(seed).size());
    }
    assertTrue(big >= 200, "some seeds make large scenarios: " + big);
    assertThrows(IllegalArgumentException.class, () -> GEN.maxTargets(0));
  }

  @Test
  void aScenarioPrintsAsJavaThatNamesEveryStep() {
    Scenario s = Scenario.of(0x5EEDL)
        .addCollectors(Collector.of("a", "node-1"), Collector.of("b"))
        .addTargets(Target.of("j", "h:1", Map.of("__meta_kubernetes_pod_node_name", "node-1")))
        .relabelTargets(Target.of("j", "h:1", Map.of("__meta_kubernetes_pod_node_name", "node-1",
            "__meta_x", "2")))
        .sendDuplicates(Target.of("j", "h:1"))
        .moveCollector("a", "node-2")
        .replaceCollector("b", Collector.of("c", "node-1"))
        .emptyCollectors()
        .setCollectors(Collector.of("d"))
        .removeCollectors("d")
        .removeTargets(Target.of("j", "h:1"))
        .setTargets(Target.of("k", "h:\"2\""));
    String java = s.toJava();
    assertTrue(java.startsWith("Scenario.of(0x5EEDL)\n    .addCollectors(Collector.of(\"a\", "
        + "\"node-1\"), Collector.of(\"b\"))\n"), java);
    for (String call : List.of(".addTargets(", ".relabelTargets(", ".sendDuplicates(",
        ".moveCollector(\"a\", \"node-2\")", ".replaceCollector(\"b\", Collector.of(\"c\", "
        + "\"node-1\"))", ".emptyCollectors()", ".setCollectors(Collector.of(\"d\"))",
        ".removeCollectors(\"d\")", ".removeTargets(Target.of(\"j\", \"h:1\"))",
        ".setTargets(Target.of(\"k\", \"h:\\\"2\\\"\"))")) {
      assertTrue(java.contains(call), call + " in\n" + java);
    }
    assertEquals(11, s.size());
    assertEquals(s, Scenario.of(0x5EEDL).withSteps(s.steps()));
    assertNotEquals(s, Scenario.of(1).withSteps(s.steps()));
    assertThrows(IllegalArgumentException.class,
        () -> Scenario.of(1).setCollectors(Collector.of("a"), Collector.of("a", "n")));
  }
}
