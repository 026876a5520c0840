package dev.apportion.allocation.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocator;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Each invariant can fail: a strategy with one deliberate bug is caught by the invariant that
 * covers it, and the failure shrinks to a sequence of a few steps. Every runner here checks that
 * one invariant alone, so the test shows that invariant, not another, does the catching.
 */
class BrokenStrategiesTest {
  private static final int TRIES = 100;

  /**
   * These tests need their own number of tries and every seed: a {@code -Dapportion.tries} or
   * {@code -Dapportion.seed} meant for the suite must not shrink their search.
   */
  static PropertyRunner isolated(PropertyRunner runner) {
    return runner.properties(name -> null);
  }

  private static Failure caught(PropertyRunner runner, String invariant, int maxSteps) {
    Report report = isolated(runner).tries(TRIES).run();
    assertFalse(report.passed(), () -> "the bug went unnoticed in " + TRIES + " tries");
    Failure f = report.failure().orElseThrow();
    assertEquals(invariant, f.invariant(), f::toString);
    assertTrue(f.minimal().size() <= maxSteps,
        () -> "shrunk to " + f.minimal().size() + " steps, expected at most " + maxSteps + "\n" + f);
    assertTrue(f.minimal().size() <= f.original().size(), "shrinking never grows");
    Report replay = runner.check(f.minimal());
    assertEquals(invariant, replay.failure().orElseThrow().invariant(),
        "the minimal scenario fails again, the same way, when replayed");
    return f;
  }

  private static Failure caught(Supplier<Allocator> strategy, Invariant invariant,
      int maxSteps) {
    return caught(PropertyRunner.forAllocator(strategy.get().strategy(), strategy)
        .invariants(invariant), invariant.name(), maxSteps);
  }

  @Test
  void completenessCatchesAStrategyThatLosesTheTargetsOfARemovedCollector() {
    Failure f = caught(Broken.ForgetsOrphans::new, Invariants.completeness(), 4);
    assertTrue(f.description().contains("neither assigned nor unassigned"), f::toString);
  }

  @Test
  void determinismCatchesAStrategyThatDependsOnInputOrder() {
    caught(Broken.InputOrderRoundRobin::new, Invariants.determinism(), 2);
  }

  @Test
  void idempotenceCatchesAStrategyThatMovesTargetsWhenNothingChanged() {
    Failure f = caught(Broken.Flapping::new, Invariants.idempotence(), 2);
    assertTrue(f.description().contains("repeating the call moved"), f::toString);
  }

  @Test
  void minimalMovementCatchesHashMod() {
    caught(Broken.HashMod::new, Invariants.minimalMovement(), 3);
  }

  @Test
  void onlyOrphansMoveCatchesHashMod() {
    caught(Broken.HashMod::new, Invariants.onlyOrphansMove(), 3);
  }

  @Test
  void boundedMovementCatchesHashMod() {
    Failure f = caught(Broken.HashMod::new,
        Invariants.boundedMovement(Invariants.CH_MOVEMENT_FACTOR, Invariants.CH_MOVEMENT_SLACK),
        3);
    assertTrue(f.description().contains("targets moved when"), f::toString);
  }

  @Test
  void boundedLoadCatchesAStrategyThatPilesEverythingOnOneCollector() {
    Failure f = caught(Broken.AllOnFirst::new, Invariants.boundedLoad(1.1), 2);
    assertTrue(f.description().contains("above the cap"), f::toString);
  }

  @Test
  void nodeLocalityCatchesAPerNodeStrategyThatPicksTheLargerName() {
    Failure f = caught(Broken.LargerNameWins::new, Invariants.nodeLocality(), 2);
    assertTrue(f.description().contains("smaller-name collector"), f::toString);
  }

  @Test
  void nodeLocalityWithoutFallbackCatchesAStrategyThatPlacesWhatItShouldLeave() {
    Failure f = caught(Broken.LeakyNoFallback::new, Invariants.nodeLocalityWithoutFallback(), 2);
    assertTrue(f.description().contains("although there is no fallback"), f::toString);
  }

  @Test
  void allAssignedCatchesAStrategyThatIgnoresTargetsDuringABlip() {
    Failure f = caught(Broken.IgnoresTargetsDuringBlip::new, Invariants.allAssigned(), 3);
    assertTrue(f.description().contains("is unassigned although collectors"), f::toString);
  }

  @Test
  void latestLabelsCatchesAStrategyThatKeepsStaleLabels() {
    caught(Broken.StaleLabels::new, Invariants.latestLabels(), 2);
  }

  @Test
  void reportedMovesCatchesAListenerThatIsToldNothing() {
    PropertyRunner runner = PropertyRunner.forListeningAllocator("silent",
        Broken.SilentListener::new).invariants(Invariants.reportedMoves());
    Failure f = caught(runner, "reported-moves", 2);
    assertTrue(f.description().contains("was not reported"), f::toString);
  }

  @Test
  void completenessCatchesAReplicaHeldTwiceByOneCollector() {
    Failure f = caught(ReplicaToy.FillsWithThePrimary::new, Invariants.completeness(), 2);
    assertTrue(f.description().contains("held twice"), f::toString);
  }

  @Test
  void replicaSpreadCatchesReplicasThatIgnoreNodes() {
    Failure f = caught(ReplicaToy.NextByName::new, Invariants.replicaSpread(), 2);
    assertTrue(f.description().contains("node(s)"), f::toString);
  }

  @Test
  void replicaMovementCatchesModuloSharding() {
    Failure f = caught(ReplicaToy.Modulo::new, Invariants.replicaMovement(
        Invariants.REPLICA_MOVEMENT_FACTOR, Invariants.REPLICA_MOVEMENT_SLACK), 3);
    assertTrue(f.description().contains("replicas left a collector"), f::toString);
  }

  @Test
  void snapshotConsistencyCatchesAStrategyThatPublishesInSeveralWrites() {
    Report report = isolated(PropertyRunner.forAllocator("torn", Broken.TornPublisher::new))
        .concurrentPasses(300).tries(60).checkConcurrentSnapshots();
    assertFalse(report.passed(), "a torn publisher went unnoticed");
    Failure f = report.failure().orElseThrow();
    assertEquals("snapshot-consistency", f.invariant(), f::toString);
    assertTrue(f.minimal().size() <= 3, f::toString);
    assertTrue(f.toString().contains(".assertSnapshotsConsistent(scenario);"), f::toString);
  }

  @Test
  void theSameToysWithoutTheirBugPassEveryInvariantTheyPromise() {
    Report report = isolated(PropertyRunner.forAllocator("correct-toy",
        ToyAllocator.Correct::new))
        .invariants(Invariants.completeness(), Invariants.latestLabels(),
            Invariants.idempotence(), Invariants.allAssigned(), Invariants.determinism(),
            Invariants.minimalMovement())
        .tries(TRIES).run();
    assertTrue(report.passed(), report::toString);
    assertTrue(isolated(PropertyRunner.forAllocator("correct-toy", ToyAllocator.Correct::new))
        .tries(TRIES).checkConcurrentSnapshots().passed());
    for (int k = 1; k <= 3; k++) {
      int replicas = k;
      Report replicated = isolated(PropertyRunner.forAllocator("correct-replica-toy",
          () -> new ReplicaToy.Correct(replicas)))
          .invariants(Invariants.completeness(), Invariants.idempotence(),
              Invariants.allAssigned(), Invariants.determinism(), Invariants.replicaSpread())
          .tries(TRIES).run();
      assertTrue(replicated.passed(), replicated::toString);
    }
  }
}
