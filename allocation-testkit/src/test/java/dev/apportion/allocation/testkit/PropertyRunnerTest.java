package dev.apportion.allocation.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PropertyRunnerTest {
  private static PropertyRunner larger() {
    return BrokenStrategiesTest.isolated(
        PropertyRunner.forAllocator("larger-name-wins", Broken.LargerNameWins::new))
        .invariants(Invariants.nodeLocality());
  }

  @Test
  void aFailureReportsTheSeedTheInvariantAndTheMinimalScenarioAsJava() {
    Failure f = larger().tries(50).run().failure().orElseThrow();
    String report = f.toString();
    long seed = f.seed().orElseThrow();
    assertTrue(report.startsWith("Invariant 'node-locality' failed for larger-name-wins\n"),
        report);
    assertTrue(report.contains("replay it with -Dapportion.seed=" + JavaCode.hex(seed)), report);
    assertTrue(report.contains("shrunk from " + f.original().size() + " steps to "
        + f.minimal().size() + " in " + f.shrinkRuns() + " runs"), report);
    assertTrue(report.contains(("Scenario scenario = " + f.minimal().toJava() + ";")
        .replace("\n", "\n    ")), report);
    assertTrue(report.contains(".invariants(Invariants.nodeLocality())"), report);
    assertTrue(report.contains(".assertHolds(scenario);"), report);
    assertEquals(f.step(), f.minimal().size() - 1, "the minimal scenario ends where it fails");
  }

  @Test
  void theSameSeedReplaysTheSameFailureWhetherGivenInCodeOrAsASystemProperty() {
    Failure first = larger().tries(50).run().failure().orElseThrow();
    long seed = first.seed().orElseThrow();
    Failure inCode = larger().seed(seed).run().failure().orElseThrow();
    Failure byProperty = larger().properties(Map.of(PropertyRunner.SEED_PROPERTY,
        JavaCode.hex(seed))::get).run().failure().orElseThrow();
    for (Failure again : List.of(inCode, byProperty)) {
      assertEquals(first.original(), again.original());
      assertEquals(first.minimal(), again.minimal());
      assertEquals(first.description(), again.description());
    }
  }

  @Test
  void theTriesPropertyOverridesTheCodeAndIsChecked() {
    PropertyRunner r = BrokenStrategiesTest.isolated(PropertyRunner.forStrategy("rendezvous"))
        .tries(3);
    assertEquals(3, r.run().tries());
    assertEquals(7, r.properties(Map.of(PropertyRunner.TRIES_PROPERTY, "7")::get).run().tries());
    assertThrows(IllegalArgumentException.class,
        () -> r.properties(Map.of(PropertyRunner.TRIES_PROPERTY, "many")::get).run());
    assertThrows(IllegalArgumentException.class,
        () -> r.properties(Map.of(PropertyRunner.TRIES_PROPERTY, "0")::get).run());
    assertThrows(IllegalArgumentException.class, () -> r.tries(0));
  }

  @Test
  void seedsParseInTheFormsReportsPrintThem() {
    assertEquals(-1L, PropertyRunner.parseSeed("0xFFFFFFFFFFFFFFFFL"));
    assertEquals(0x1AL, PropertyRunner.parseSeed(" 0x1a "));
    assertEquals(-42L, PropertyRunner.parseSeed("-42"));
    assertEquals(42L, PropertyRunner.parseSeed("42L"));
    assertThrows(IllegalArgumentException.class, () -> PropertyRunner.parseSeed("seed"));
  }

  @Test
  void aScenarioPastedFromAReportFailsTheSameWay() {
    // Pasted from a report of LargerNameWins (only the seed's permutations matter here).
    Scenario scenario = Scenario.of(0xC7C6202E5D4369D6L)
        .addTargets(
            Target.of("kubernetes-endpointslices", "10.1.0.4:9443",
                Map.of("__meta_kubernetes_pod_node_name", "node-1", "service", "checkout")))
        .addCollectors(
            Collector.of("collector-zfpm8", "node-1"),
            Collector.of("collector-tbjtq", "node-2"))
        .moveCollector("collector-tbjtq", "node-1");
    Failure f = larger().check(scenario).failure().orElseThrow();
    assertEquals("node-locality", f.invariant());
    assertEquals(2, f.step());
    assertTrue(f.description().contains("is on collector-zfpm8, not on collector-tbjtq"),
        f::toString);
    AssertionError e = assertThrows(AssertionError.class, () -> larger().assertHolds(scenario));
    assertEquals(f.toString(), e.getMessage());
    PropertyRunner.forStrategy("per-node").assertHolds(scenario);
  }

  @Test
  void theShrinkerDropsEveryStepThatDoesNotMatter() {
    Target t = Target.of("j", "10.0.0.1:80", Map.of("__meta_kubernetes_pod_node_name", "n1",
        "__meta_extra", "x"));
    Scenario noisy = Scenario.of(1)
        .addCollectors(Collector.of("c-1", "n2"), Collector.of("c-9", "n3"))
        .addTargets(Target.of("j", "10.0.0.2:80"), Target.of("j", "10.0.0.3:80"))
        .emptyCollectors()
        .addCollectors(Collector.of("b", "n1"), Collector.of("a", "n1"))
        .removeTargets(Target.of("j", "10.0.0.2:80"))
        .addTargets(t)
        .moveCollector("c-9", "n4");
    Failure f = larger().check(noisy).failure().orElseThrow();
    assertEquals(2, f.minimal().size(), f::toString);
    String java = f.minimal().toJava();
    assertTrue(java.contains("Collector.of(\"a\", \"n1\")") && java.contains("Collector.of(\"b\", "
        + "\"n1\")") && !java.contains("c-1") && !java.contains("10.0.0.3"), java);
    assertFalse(java.contains("__meta_extra"), "labels that do not matter are dropped: " + java);
  }

  @Test
  void anAllocatorThatThrowsIsReportedAsNoException() {
    Failure f = BrokenStrategiesTest.isolated(PropertyRunner.forAllocator("throws",
        () -> new ToyAllocator.Correct() {
          @Override
          public synchronized void setCollectors(java.util.Collection<Collector> given) {
            if (given.size() > 2) {
              throw new IllegalStateException("too many");
            }
            super.setCollectors(given);
          }
        })).tries(50).run().failure().orElseThrow();
    assertEquals("no-exception", f.invariant());
    assertTrue(f.description().contains("threw java.lang.IllegalStateException: too many"),
        f::toString);
    assertEquals(1, f.minimal().size(), f::toString);
  }

  @Test
  void theModelFollowsTheBlipRuleAndPicksTheSmallerNamePerNode() {
    Inputs in = Inputs.EMPTY;
    for (Step s : Scenario.of(0)
        .addCollectors(Collector.of("b", "n1"), Collector.of("a", "n1"), Collector.of("c"))
        .removeCollectors("a", "b", "c").steps()) {
      in = s.apply(in);
    }
    assertTrue(in.inBlip());
    assertEquals(List.of(), in.declared());
    assertEquals(List.of("a", "b", "c"), Transition.names(in.collectors()), "the last set stands");
    assertEquals("a", in.winner("n1").orElseThrow());
    assertTrue(in.winner("n2").isEmpty());
    Inputs back = new Step.AddCollectors(List.of(Collector.of("d", "n1"))).apply(in);
    assertFalse(back.inBlip());
    assertEquals(List.of("d"), Transition.names(back.collectors()),
        "after a blip the next set is what was declared, not the old set plus it");
    assertFalse(back.sameEffective(in));
    assertTrue(in.sameEffective(new Step.SetCollectors(List.of()).apply(in)));
  }

  @Test
  void replicasRunTheStrategyAtKAndTheReportSaysSo() {
    Invariant two = Invariant.of("two-owners-when-two-collectors", t ->
        t.inputsAfter().collectors().size() < 2 || t.after().replicas() != 2 ? null
            : "fails on purpose with " + t.after().replicas() + " replicas");
    Report report = BrokenStrategiesTest.isolated(PropertyRunner.forStrategy("rendezvous"))
        .replicas(2).invariants(two).tries(20).run();
    assertFalse(report.passed(), "the allocators were built with two replicas");
    assertTrue(report.toString().contains("PropertyRunner.forStrategy(\"rendezvous\")"),
        report::toString);
    assertTrue(report.toString().contains(".replicas(2)"), report::toString);
    assertTrue(BrokenStrategiesTest.isolated(PropertyRunner.forStrategy("rendezvous"))
        .replicas(2).replicas(1).invariants(two).tries(20).run().passed(), "back to one");
    assertThrows(IllegalStateException.class,
        () -> PropertyRunner.forAllocator("toy", ToyAllocator.Correct::new).replicas(2));
    assertThrows(IllegalArgumentException.class,
        () -> PropertyRunner.forStrategy("rendezvous").replicas(0));
  }

  @Test
  void invariantsCheckTheirArgumentsAndNameThemselves() {
    assertThrows(IllegalArgumentException.class, () -> Invariants.boundedLoad(1.0));
    assertThrows(IllegalArgumentException.class, () -> Invariants.boundedMovement(0.5, 1));
    assertThrows(IllegalArgumentException.class, () -> Invariant.of(" ", t -> null));
    assertEquals("Invariants.boundedLoad(1.1)", Invariants.boundedLoad(1.1).toString());
    assertEquals(List.of("completeness", "latest-labels", "idempotence", "reported-moves",
        "all-assigned", "determinism", "node-locality", "replica-locality", "replica-movement"),
        Invariants.forStrategy("per-node").stream().map(Invariant::name)
            .collect(java.util.stream.Collectors.toList()));
    assertEquals(4, Invariants.forStrategy("my-own").size(), "unknown strategies get common()");
    assertThrows(IllegalArgumentException.class, () -> Invariants.replicaMovement(0.9, 1));
    assertEquals("Invariants.replicaMovement(2.0, 10)", Invariants.replicaMovement(
        Invariants.REPLICA_MOVEMENT_FACTOR, Invariants.REPLICA_MOVEMENT_SLACK).toString());
    assertNull(Invariant.of("never", t -> null).check(null));
  }
}
