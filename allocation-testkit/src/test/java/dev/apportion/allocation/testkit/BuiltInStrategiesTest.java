package dev.apportion.allocation.testkit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRing;
import dev.apportion.allocation.ring.HashRings;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The invariant suite against every built-in strategy and the configurations users run them in.
 * {@value #TRIES} tries per configuration keep this class well under a minute of CPU on a
 * 2-core machine (see docs/testing.md); {@code -Dapportion.tries=N} searches deeper.
 */
class BuiltInStrategiesTest {
  static final int TRIES = 100;

  /**
   * Rendezvous placement is exactly highest-random-weight over the ring's scores: every target
   * is on {@code HashRings.rendezvous(names).owner(target.hash())}.
   */
  static final Invariant RENDEZVOUS_PLACEMENT = Invariant.of("rendezvous-placement", t -> {
    List<Collector> live = t.inputsAfter().collectors();
    if (live.isEmpty()) {
      return null;
    }
    HashRing ring = HashRings.rendezvous(Transition.names(live));
    for (Target x : Invariants.sorted(t.inputsAfter().targets())) {
      String want = ring.owner(x.hash());
      Optional<String> have = t.after().collectorOf(x);
      if (!have.equals(Optional.of(want))) {
        return x + " is on " + have.orElse("(unassigned)") + ", rendezvous says " + want;
      }
    }
    return null;
  });

  private static final Generator WEIGHTED = Generator.defaults().costs(true);

  private static List<Invariant> with(List<Invariant> base, Invariant... more) {
    List<Invariant> out = new ArrayList<>(base);
    out.addAll(List.of(more));
    return out;
  }

  static Stream<Arguments> configurations() {
    return Stream.of(
        Arguments.of("consistent-hashing", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("consistent-hashing")),
        Arguments.of("consistent-hashing, load factor 1.1", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("consistent-hashing", b -> b.loadFactor(1.1))
                .invariants(with(Invariants.common(), Invariants.allAssigned(),
                    Invariants.determinism(), Invariants.boundedLoad(1.1)))),
        Arguments.of("rendezvous", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("rendezvous").invariants(
                with(Invariants.forStrategy("rendezvous"), RENDEZVOUS_PLACEMENT))),
        Arguments.of("least-weighted", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("least-weighted")),
        Arguments.of("per-node", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("per-node")),
        Arguments.of("per-node, no fallback", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("per-node", b -> b.noFallback())
                .invariants(with(Invariants.common(), Invariants.determinism(),
                    Invariants.nodeLocalityWithoutFallback()))),
        Arguments.of("per-node, rendezvous fallback", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("per-node", b -> b.fallback("rendezvous"))),
        Arguments.of("per-node, least-weighted fallback", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("per-node", b -> b.fallback("least-weighted"))
                .invariants(with(Invariants.common(), Invariants.allAssigned(),
                    Invariants.nodeLocality()))),
        // The partitioning layer around the strategies. The generated clusters carry no zones,
        // so every target is in the cluster-wide group: these hold the layer's plumbing (blips,
        // relabels, collisions, snapshots) to the same invariants; ZonesTest covers partitions.
        Arguments.of("per-node, no zone partitioning", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("per-node", b -> b.noPartitioning())),
        Arguments.of("consistent-hashing, zone-aware", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("consistent-hashing", b -> b.zoneAware().maxSkew(1.5).loadFactor(1.1))
                .invariants(with(Invariants.common(), Invariants.allAssigned(),
                    Invariants.determinism(), Invariants.boundedLoad(1.1)))),
        Arguments.of("rendezvous, zone-aware", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("rendezvous", b -> b.zoneAware()).invariants(
                with(Invariants.forStrategy("rendezvous"), RENDEZVOUS_PLACEMENT))),
        // Costs and capacities (held fixed per target and collector): the weighted placements,
        // consistent-hashing's cost band and floor phase included, stay functions of the sets.
        // Bounded load and bounded movement are of counts, so they do not apply there.
        Arguments.of("consistent-hashing, costs and capacities", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("consistent-hashing").generator(WEIGHTED)
                .invariants(with(Invariants.common(), Invariants.allAssigned(),
                    Invariants.determinism()))),
        Arguments.of("consistent-hashing, costs and capacities, load factor 1.5",
            (Supplier<PropertyRunner>) () ->
                PropertyRunner.forStrategy("consistent-hashing", b -> b.loadFactor(1.5))
                    .generator(WEIGHTED).invariants(with(Invariants.common(),
                        Invariants.allAssigned(), Invariants.determinism()))),
        Arguments.of("per-node, costs and capacities", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("per-node").generator(WEIGHTED)),
        Arguments.of("least-weighted, costs and capacities", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("least-weighted").generator(WEIGHTED)),
        Arguments.of("rendezvous, costs and capacities", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("rendezvous").generator(WEIGHTED)));
  }

  /** Tries per replicated configuration: a third of {@value #TRIES}, each try costing more. */
  static final int REPLICATED_TRIES = TRIES / 3;

  private static final Generator ZONED = Generator.defaults().zones(true);

  /**
   * Every strategy at 2 and 3 replicas, held to its profile (which reads the replica count from
   * the snapshots). The non-per-node strategies run on zoned clusters, so that spreading over
   * zones is exercised; per-node runs unzoned, as its zone-partitioned fallback learns node zones
   * from history (a determinism question of its own, at one replica too).
   */
  static Stream<Arguments> replicated() {
    List<Arguments> out = new ArrayList<>();
    for (int k = 2; k <= 3; k++) {
      int replicas = k;
      for (String s : List.of("consistent-hashing", "rendezvous", "least-weighted")) {
        out.add(Arguments.of(s + ", " + k + " replicas", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy(s).replicas(replicas).generator(ZONED)));
      }
      out.add(Arguments.of("per-node, " + k + " replicas", (Supplier<PropertyRunner>) () ->
          PropertyRunner.forStrategy("per-node").replicas(replicas)));
    }
    // Zoned per-node without determinism (see above): the further replicas' zone is exercised.
    List<Invariant> zonedPerNode = new ArrayList<>(Invariants.forStrategy("per-node"));
    zonedPerNode.removeIf(i -> i.name().equals("determinism"));
    out.add(Arguments.of("per-node, zones, 2 replicas", (Supplier<PropertyRunner>) () ->
        PropertyRunner.forStrategy("per-node").replicas(2).generator(ZONED)
            .invariants(zonedPerNode)));
    out.add(Arguments.of("per-node, no fallback, 2 replicas", (Supplier<PropertyRunner>) () ->
        PropertyRunner.forStrategy("per-node", b -> b.noFallback()).replicas(2)
            .invariants(with(Invariants.common(), Invariants.determinism(),
                Invariants.nodeLocalityWithoutFallback()))));
    out.add(Arguments.of("consistent-hashing, costs and capacities, 2 replicas",
        (Supplier<PropertyRunner>) () -> PropertyRunner.forStrategy("consistent-hashing")
            .replicas(2).generator(WEIGHTED).invariants(with(Invariants.common(),
                Invariants.allAssigned(), Invariants.determinism(), Invariants.replicaSpread()))));
    return out.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("replicated")
  void holdsEveryInvariantItPromisesWithReplicas(String name, Supplier<PropertyRunner> runner) {
    runner.get().tries(REPLICATED_TRIES).assertHolds();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("replicated")
  void snapshotsStayConsistentUnderConcurrentWritesWithReplicas(String name,
      Supplier<PropertyRunner> runner) {
    runner.get().tries(REPLICATED_TRIES).assertSnapshotsConsistent();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("configurations")
  void holdsEveryInvariantItPromises(String name, Supplier<PropertyRunner> runner) {
    runner.get().tries(TRIES).assertHolds();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("configurations")
  void snapshotsStayConsistentUnderConcurrentWrites(String name,
      Supplier<PropertyRunner> runner) {
    runner.get().tries(TRIES).assertSnapshotsConsistent();
  }

  /**
   * The suite is not vacuous: over the same tries, the situations the invariants are about
   * happen, many times each. Counted by an invariant that never fails.
   */
  @Test
  void theTriesReachTheSituationsTheInvariantsAreAbout() {
    Map<String, Integer> seen = new TreeMap<>();
    Invariant count = Invariant.of("count", t -> {
      Inputs before = t.inputsBefore();
      Inputs after = t.inputsAfter();
      List<String> b = Transition.names(before.collectors());
      List<String> a = Transition.names(after.collectors());
      if (after.inBlip() && after.targetCount() != before.targetCount()) {
        seen.merge("targets changed during a blip", 1, Integer::sum);
      }
      if (!before.collectors().isEmpty() && after.inBlip() && !before.inBlip()) {
        seen.merge("blip", 1, Integer::sum);
      }
      if (!b.isEmpty() && before.targetCount() == after.targetCount()
          && ((a.containsAll(b) && a.size() == b.size() + 1)
              || (b.containsAll(a) && b.size() == a.size() + 1))) {
        seen.merge("one collector added or removed", 1, Integer::sum);
      }
      for (Collector c : after.collectors()) {
        Optional<Collector> was = before.collector(c.name());
        if (was.isPresent() && !was.get().node().equals(c.node())) {
          seen.merge("collector re-reported on another node", 1, Integer::sum);
        }
      }
      for (Target x : after.targets()) {
        if (x.node().isPresent() && collectorsOn(after, x.node().get()) == 2) {
          seen.merge("target on a node with two collectors", 1, Integer::sum);
          break;
        }
      }
      for (Target x : after.targets()) {
        if (x.node().isPresent() && !after.collectors().isEmpty()
            && after.winner(x.node().get()).isEmpty()) {
          seen.merge("target on a node with no collector", 1, Integer::sum);
          break;
        }
      }
      return null;
    });
    assertTrue(BrokenStrategiesTest.isolated(PropertyRunner.forStrategy("per-node"))
        .invariants(count).tries(TRIES).run().passed());
    for (String situation : List.of("targets changed during a blip", "blip",
        "one collector added or removed", "collector re-reported on another node",
        "target on a node with two collectors", "target on a node with no collector")) {
      assertTrue(seen.getOrDefault(situation, 0) >= 10,
          () -> situation + " happened too rarely: " + seen);
    }
  }

  private static int collectorsOn(Inputs in, String node) {
    int n = 0;
    for (Collector c : in.collectors()) {
      if (c.node().equals(Optional.of(node))) {
        n++;
      }
    }
    return n;
  }
}
