package dev.apportion.allocation.testkit;

import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The equivalence property of an allocator that places changes incrementally: after every step
 * of a random history (targets added, dropped, relabeled and re-costed; collectors joining,
 * leaving, moving node and changing capacity; blips), the allocator under test places every
 * target exactly where a fresh allocator fed the same two sets places it
 * ({@link Invariants#determinism()}: in every other order and history for small sets, one in
 * rotation for larger ones). At a higher try count than {@link BuiltInStrategiesTest}: this is
 * the property the engine's incremental paths (the partial snapshot, the orphans found from the
 * last snapshot, the dense view order) and any incremental placement must keep.
 * {@code -Dapportion.equivalence.tries=N} searches deeper.
 */
class FreshAllocatorEquivalenceTest {
  private static final int TRIES = Integer.getInteger("apportion.equivalence.tries", 600);

  private static final Generator WEIGHTED = Generator.defaults().costs(true);

  static Stream<Arguments> configurations() {
    return Stream.of(
        Arguments.of("consistent-hashing", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("consistent-hashing")),
        Arguments.of("consistent-hashing, load factor 1.05", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("consistent-hashing", b -> b.loadFactor(1.05))),
        Arguments.of("consistent-hashing, costs and capacities", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("consistent-hashing").generator(WEIGHTED)),
        Arguments.of("consistent-hashing, zone-aware", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("consistent-hashing", b -> b.zoneAware().maxSkew(1.5))),
        Arguments.of("consistent-hashing, zone-aware, no skew limit",
            (Supplier<PropertyRunner>) () ->
                PropertyRunner.forStrategy("consistent-hashing", b -> b.zoneAware())),
        Arguments.of("rendezvous", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("rendezvous")),
        Arguments.of("rendezvous, costs and capacities", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("rendezvous").generator(WEIGHTED)),
        Arguments.of("rendezvous, zone-aware", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("rendezvous", b -> b.zoneAware())),
        Arguments.of("per-node", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("per-node")),
        Arguments.of("per-node, costs and capacities", (Supplier<PropertyRunner>) () ->
            PropertyRunner.forStrategy("per-node").generator(WEIGHTED)),
        Arguments.of("per-node without zone partitions, costs and capacities",
            (Supplier<PropertyRunner>) () ->
                PropertyRunner.forStrategy("per-node", b -> b.noPartitioning())
                    .generator(WEIGHTED)));
  }

  /** Tries per replicated configuration: a quarter of the above, each try costing k times more. */
  private static final int REPLICATED_TRIES = Math.max(1, TRIES / 4);

  private static final Generator ZONED = Generator.defaults().zones(true);

  /** The equivalence at 2 and 3 replicas: every owner, primary first, as a fresh allocator's. */
  static Stream<Arguments> replicated() {
    List<Arguments> out = new java.util.ArrayList<>();
    for (int k = 2; k <= 3; k++) {
      int replicas = k;
      out.add(Arguments.of("consistent-hashing, zones, " + k + " replicas",
          (Supplier<PropertyRunner>) () -> PropertyRunner.forStrategy("consistent-hashing")
              .replicas(replicas).generator(ZONED)));
      out.add(Arguments.of("consistent-hashing, costs and capacities, " + k + " replicas",
          (Supplier<PropertyRunner>) () -> PropertyRunner.forStrategy("consistent-hashing")
              .replicas(replicas).generator(WEIGHTED)));
      out.add(Arguments.of("rendezvous, zones, " + k + " replicas",
          (Supplier<PropertyRunner>) () -> PropertyRunner.forStrategy("rendezvous")
              .replicas(replicas).generator(ZONED)));
      out.add(Arguments.of("per-node, " + k + " replicas",
          (Supplier<PropertyRunner>) () -> PropertyRunner.forStrategy("per-node")
              .replicas(replicas)));
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("replicated")
  void everyStepPlacesAsAFreshAllocatorDoesWithReplicas(String name,
      Supplier<PropertyRunner> runner) {
    runner.get().invariants(List.of(Invariants.completeness(), Invariants.determinism()))
        .tries(REPLICATED_TRIES).assertHolds();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("configurations")
  void everyStepPlacesAsAFreshAllocatorDoes(String name, Supplier<PropertyRunner> runner) {
    runner.get().invariants(List.of(Invariants.completeness(), Invariants.determinism()))
        .tries(TRIES).assertHolds();
  }
}
