package dev.apportion.allocation.internal;

import static dev.apportion.allocation.internal.Fixtures.assertComplete;
import static dev.apportion.allocation.internal.Fixtures.collectors;
import static dev.apportion.allocation.internal.Fixtures.owners;
import static dev.apportion.allocation.internal.Fixtures.targets;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every strategy shares. Each strategy's test class extends this one (the JCTools
 * pattern): an implementation that breaks the contract fails here, whatever else it does.
 */
abstract class AllocatorContractTest {
  final List<AllocationChange> changes = new ArrayList<>();

  /** The builder of the strategy under test, configured as the subclass wants. */
  abstract Allocators.Builder builder();

  /**
   * The replicas the builder asks for: {@link ReplicatedContractTest} runs the contract at 2 and
   * 3. Every assertion here holds at any count; where one counts targets it counts replicas.
   */
  int replicas() {
    return 1;
  }

  /** Whether the assignment is a function of the two sets alone. */
  boolean deterministic() {
    return true;
  }

  Allocator allocator() {
    return builder().listener(changes::add).build();
  }

  /** The owner of replica {@code r} in a full owner list; null when the target has none. */
  private static String rank(List<String> owners, int r, int k) {
    if (owners == null) {
      return null;
    }
    assertEquals(k, owners.size(), () -> "ranks are known in a full list: " + owners);
    return owners.get(r);
  }

  /** Replicas that changed collector, rank by rank, among targets placed before and after. */
  private static int movedReplicas(Map<Target, List<String>> before,
      Map<Target, List<String>> after, int k) {
    int moved = 0;
    for (Map.Entry<Target, List<String>> e : before.entrySet()) {
      List<String> now = after.get(e.getKey());
      if (now != null) {
        for (int r = 0; r < k; r++) {
          if (!rank(e.getValue(), r, k).equals(rank(now, r, k))) {
            moved++;
          }
        }
      }
    }
    return moved;
  }

  private AllocationChange last() {
    return changes.get(changes.size() - 1);
  }

  @Test
  void targetsSetBeforeCollectorsArePlacedWhenCollectorsArrive() {
    Allocator a = allocator();
    List<Target> ts = targets(500, 5);
    a.setTargets(ts);
    assertComplete(a, ts);
    assertEquals(500, a.snapshot().unassigned().size(), "no collectors yet: all unassigned");
    a.setCollectors(collectors(5));
    assertComplete(a, ts);
    assertTrue(a.snapshot().unassigned().isEmpty());
    assertEquals(500 * Math.min(replicas(), 5), last().moves().size(),
        "every replica placed once");
  }

  @Test
  void shrinkingTheTargetSetKeepsExactlyTheSurvivors() {
    Allocator a = allocator();
    a.setCollectors(collectors(7));
    List<Target> ts = targets(1000, 4);
    a.setTargets(ts);
    List<Target> survivors = ts.subList(0, 600);
    a.setTargets(survivors);
    assertComplete(a, survivors);
    for (Target gone : ts.subList(600, 1000)) {
      assertEquals(Optional.empty(), a.snapshot().collectorOf(gone));
      assertEquals(List.of(), a.snapshot().ownersOf(gone));
    }
  }

  @Test
  void everyAssignmentPointsAtALiveCollectorAfterAnyCollectorChange() {
    Allocator a = allocator();
    List<Target> ts = targets(2000, 3);
    a.setTargets(ts);
    Random random = new Random(42);
    List<Collector> pool = collectors(20);
    for (int step = 0; step < 30; step++) {
      List<Collector> some = new ArrayList<>();
      for (Collector c : pool) {
        if (random.nextInt(3) > 0) {
          some.add(c);
        }
      }
      if (some.isEmpty()) {
        some.add(pool.get(0));
      }
      a.setCollectors(some);
      assertComplete(a, ts);
      assertEquals(some.size() >= replicas() ? 0 : ts.size(), a.snapshot().unassigned().size(),
          "unassigned only with fewer collectors than replicas");
    }
  }

  @Test
  void settingTheSameTargetsOrCollectorsAgainMovesNothing() {
    Allocator a = allocator();
    List<Target> ts = targets(1000, 3);
    a.setCollectors(collectors(9));
    a.setTargets(ts);
    Allocation before = a.snapshot();
    List<Target> shuffled = new ArrayList<>(ts);
    Collections.shuffle(shuffled, new Random(1));
    a.setTargets(shuffled);
    assertEquals(List.of(), last().moves());
    List<Collector> cs = new ArrayList<>(collectors(9));
    Collections.reverse(cs);
    a.setCollectors(cs);
    assertEquals(List.of(), last().moves());
    assertEquals(0, last().reassigned());
    assertSame(before, a.snapshot(), "nothing changed: the same snapshot stands");
  }

  @Test
  void aMetaLabelChangeKeepsTheCollectorAndCarriesTheNewLabels() {
    Allocator a = allocator();
    a.setCollectors(collectors(4));
    List<Target> ts = targets(200, 2);
    a.setTargets(ts);
    Map<Target, List<String>> before = owners(a.snapshot());
    List<Target> relabeled = new ArrayList<>();
    for (Target t : ts) {
      Map<String, String> labels = new HashMap<>(t.labels());
      labels.put("__meta_kubernetes_pod_annotation_rev", "2");
      relabeled.add(Target.of(t.job(), t.address(), labels));
    }
    a.setTargets(relabeled);
    assertEquals(List.of(), last().moves(), "a meta-only change is not a move");
    assertEquals(before, owners(a.snapshot()));
    Allocation s = a.snapshot();
    for (Target t : relabeled) {
      for (String c : s.ownersOf(t)) {
        Target held = s.targetsFor(c, t.job()).get(s.targetsFor(c, t.job()).indexOf(t));
        assertEquals("2", held.labels().get("__meta_kubernetes_pod_annotation_rev"), c);
      }
    }
    assertComplete(a, relabeled);
  }

  @Test
  void duplicateTargetsCollapseToTheLastOneGiven() {
    Allocator a = allocator();
    a.setCollectors(collectors(3));
    Target first = Target.of("j", "h:1", Map.of("__meta_x", "1"));
    Target second = Target.of("j", "h:1", Map.of("__meta_x", "2"));
    a.setTargets(List.of(first, second));
    assertEquals(1, a.snapshot().targets().size());
    for (String c : a.snapshot().ownersOf(first)) {
      assertEquals("2", a.targetsFor(c, "j").get(0).labels().get("__meta_x"));
    }
    assertEquals(Math.min(replicas(), 3), a.snapshot().ownersOf(first).size());
  }

  @Test
  void targetsForUnknownNamesIsEmpty() {
    Allocator a = allocator();
    assertEquals(List.of(), a.targetsFor("nobody", "nothing"));
    a.setCollectors(collectors(2));
    a.setTargets(targets(10, 1));
    assertEquals(List.of(), a.targetsFor("nobody", "job-0"));
    assertEquals(List.of(), a.targetsFor("collector-0", "no-such-job"));
    assertEquals(0, a.snapshot().targetCount("nobody"));
    assertTrue(a.snapshot().jobsFor("nobody").isEmpty());
  }

  @Test
  void targetsForDoesNotCopy() {
    Allocator a = allocator();
    a.setCollectors(collectors(2));
    a.setTargets(targets(100, 1));
    String c = a.snapshot().collectors().iterator().next().name();
    assertSame(a.targetsFor(c, "job-0"), a.targetsFor(c, "job-0"));
    assertThrows(UnsupportedOperationException.class, () -> a.targetsFor(c, "job-0").clear());
  }

  @Test
  void anEmptyCollectorSetIsATransientBlip() {
    Allocator a = allocator();
    List<Target> ts = targets(300, 3);
    a.setCollectors(collectors(4));
    a.setTargets(ts);
    Allocation before = a.snapshot();
    a.setCollectors(List.of());
    assertSame(before, a.snapshot(), "the last assignment stands");
    assertEquals(List.of(), last().moves());
    List<Target> more = new ArrayList<>(ts);
    more.addAll(targets(400, 3).subList(300, 400));
    a.setTargets(more);
    assertComplete(a, more);
    assertTrue(a.snapshot().unassigned().isEmpty(), "new targets go to the last collector set");
    a.setCollectors(collectors(4));
    assertEquals(List.of(), last().moves(), "the same set again: nothing moves");
  }

  @Test
  void duplicateCollectorNamesAreRejectedAndLeaveTheStateAsItWas() {
    Allocator a = allocator();
    a.setCollectors(collectors(3));
    a.setTargets(targets(100, 2));
    Allocation before = a.snapshot();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> a.setCollectors(List.of(Collector.of("x", "n1"), Collector.of("y"),
            Collector.of("x", "n2"))));
    assertTrue(e.getMessage().contains("'x'"), e.getMessage());
    assertSame(before, a.snapshot());
    // A known collector's name twice (its member found by name twice), in any order.
    Collector known = collectors(3).get(1);
    List<Collector> twice = new ArrayList<>(collectors(3));
    twice.add(0, Collector.of(known.name(), "elsewhere"));
    e = assertThrows(IllegalArgumentException.class, () -> a.setCollectors(twice));
    assertTrue(e.getMessage().contains("'" + known.name() + "'"), e.getMessage());
    assertSame(before, a.snapshot());
    assertThrows(NullPointerException.class, () -> a.setCollectors(null));
    assertThrows(NullPointerException.class,
        () -> a.setCollectors(java.util.Arrays.asList(Collector.of("a"), null)));
    assertThrows(NullPointerException.class, () -> a.setTargets(null));
    assertThrows(NullPointerException.class,
        () -> a.setTargets(java.util.Arrays.asList(Target.of("j", "a"), null)));
    assertSame(before, a.snapshot());
  }

  @Test
  void movesReportedToListenersMatchTheSnapshots() {
    Allocator a = allocator();
    List<Target> ts = targets(1500, 3);
    a.setTargets(ts);
    a.setCollectors(collectors(10));
    a.setCollectors(collectors(12));
    a.setCollectors(collectors(12).subList(1, 12));
    a.setTargets(ts.subList(100, 1500));
    int k = replicas();
    for (AllocationChange c : changes) {
      // Ten collectors or more, so every placed target has all its replicas: ranks are known.
      Map<Target, List<String>> before = owners(c.before());
      Map<Target, List<String>> after = owners(c.after());
      int expected = 0;
      for (Move m : c.moves()) {
        assertTrue(m.replica() < k, m::toString);
        assertEquals(Optional.ofNullable(rank(before.get(m.target()), m.replica(), k)),
            m.from());
        assertEquals(Optional.ofNullable(rank(after.get(m.target()), m.replica(), k)), m.to());
      }
      java.util.Set<Target> all = new java.util.HashSet<>(before.keySet());
      all.addAll(after.keySet());
      for (Target t : all) {
        for (int r = 0; r < k; r++) {
          if (!java.util.Objects.equals(rank(before.get(t), r, k), rank(after.get(t), r, k))) {
            expected++;
          }
        }
      }
      assertEquals(expected, c.moves().size(), "every changed replica is a move, once");
      assertEquals(a.strategy(), c.strategy());
    }
  }

  @Test
  void theSameSetsInAnotherOrderAndHistoryGiveTheSameAssignment() {
    if (!deterministic()) {
      return;
    }
    List<Target> ts = targets(3000, 5);
    Allocator one = allocator();
    one.setCollectors(collectors(13));
    one.setTargets(ts);

    Allocator two = allocator();
    List<Target> reversed = new ArrayList<>(ts);
    Collections.reverse(reversed);
    two.setTargets(reversed.subList(0, 1000));
    two.setCollectors(collectors(20));
    two.setTargets(reversed);
    two.setCollectors(collectors(5));
    List<Collector> cs = new ArrayList<>(collectors(13));
    Collections.shuffle(cs, new Random(3));
    two.setCollectors(cs);
    assertEquals(owners(one.snapshot()), owners(two.snapshot()));
  }

  @Test
  void allocatorsShareNoState() {
    Allocator one = allocator();
    Allocator two = allocator();
    assertNotSame(one, two);
    one.setCollectors(collectors(3));
    one.setTargets(targets(50, 1));
    assertTrue(two.snapshot().targets().isEmpty());
    assertTrue(two.snapshot().collectors().isEmpty());
  }

  @Test
  void readersNeverSeeAHalfAppliedChange() throws Exception {
    Allocator a = allocator();
    List<Target> ts = targets(2000, 4);
    a.setTargets(ts);
    a.setCollectors(collectors(8));
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread writer = new Thread(() -> {
      try {
        for (int i = 0; i < 60 && failure.get() == null; i++) {
          a.setCollectors(collectors(4 + i % 9));
        }
      } catch (Throwable e) {
        failure.compareAndSet(null, e);
      } finally {
        stop.set(true);
      }
    });
    writer.start();
    int checks = 0;
    while (!stop.get() || checks == 0) {
      try {
        assertComplete(a.snapshot(), ts);
      } catch (Throwable e) {
        failure.compareAndSet(null, e);
        break;
      }
      checks++;
    }
    writer.join();
    if (failure.get() != null) {
      throw new AssertionError("after " + checks + " checks", failure.get());
    }
  }

  @Test
  void aThrowingListenerDoesNotSilenceTheOthers() {
    List<AllocationChange> second = new ArrayList<>();
    RuntimeException boom = new IllegalStateException("boom");
    Allocator a = builder().listener(c -> {
      throw boom;
    }).listener(second::add).build();
    RuntimeException thrown = assertThrows(RuntimeException.class,
        () -> a.setCollectors(collectors(2)));
    assertSame(boom, thrown);
    assertEquals(1, second.size(), "the second listener heard the change");
    assertEquals(2, a.snapshot().collectors().size(), "the change was applied");
  }

  /** Throws a checked exception that the listener's signature does not declare. */
  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void sneakyThrow(Throwable t) throws T {
    throw (T) t;
  }

  @Test
  void whateverAListenerThrowsTheOthersHearTheChange() {
    List<Throwable> thrown = List.of(new AssertionError("assert"), new StackOverflowError(),
        new java.io.IOException("checked"), new IllegalArgumentException("runtime"));
    for (Throwable t : thrown) {
      List<AllocationChange> before = new ArrayList<>();
      List<AllocationChange> after = new ArrayList<>();
      Allocator a = builder().listener(before::add).listener(c -> sneakyThrow(t))
          .listener(after::add).build();
      Throwable caught = assertThrows(Throwable.class, () -> a.setCollectors(collectors(2)));
      assertSame(t, caught, "rethrown as it is");
      assertEquals(1, before.size());
      assertEquals(1, after.size(), "the listener after the throwing one heard " + t);
      assertEquals(2, a.snapshot().collectors().size(), "the change was applied");
    }
  }

  @Test
  void twoThrowingListenersReachTheCallerAsOneWithTheOtherSuppressed() {
    Error first = new AssertionError("first");
    RuntimeException second = new IllegalStateException("second");
    Allocator a = builder().listener(c -> {
      throw first;
    }).listener(c -> {
      throw second;
    }).build();
    Error caught = assertThrows(AssertionError.class, () -> a.setCollectors(collectors(2)));
    assertSame(first, caught);
    assertEquals(List.of(second), List.of(caught.getSuppressed()));
  }

  @Test
  void anOutOfMemoryErrorFromAListenerPropagatesAtOnce() {
    OutOfMemoryError oom = new OutOfMemoryError("simulated");
    List<AllocationChange> after = new ArrayList<>();
    Allocator a = builder().listener(c -> {
      throw oom;
    }).listener(after::add).build();
    assertSame(oom, assertThrows(OutOfMemoryError.class, () -> a.setCollectors(collectors(2))));
    assertEquals(0, after.size(), "a VirtualMachineError other than a stack overflow stops here");
    assertEquals(2, a.snapshot().collectors().size(), "the change was applied all the same");
  }

  @Test
  void aListenerMustNotWriteToItsAllocator() {
    AtomicReference<Allocator> self = new AtomicReference<>();
    AtomicReference<Throwable> seen = new AtomicReference<>();
    Allocator a = builder().listener(c -> {
      if (c.cause() == AllocationChange.Cause.SET_COLLECTORS) {
        try {
          self.get().setTargets(targets(5, 1));
        } catch (IllegalStateException e) {
          seen.set(e);
        }
      }
    }).build();
    self.set(a);
    a.setCollectors(collectors(2));
    assertTrue(seen.get() instanceof IllegalStateException, "the nested write is refused");
    assertTrue(a.snapshot().targets().isEmpty(), "and changed nothing");
  }

  @Test
  void relabeledTargetsAreReportedWithTheirNewLabels() {
    Allocator a = allocator();
    a.setCollectors(collectors(3));
    List<Target> ts = targets(20, 2);
    a.setTargets(ts);
    List<Target> next = new ArrayList<>(ts);
    Map<String, String> labels = new HashMap<>(ts.get(4).labels());
    labels.put("__meta_kubernetes_pod_ready", "false");
    Target relabeled = Target.of(ts.get(4).job(), ts.get(4).address(), labels);
    next.set(4, relabeled);
    a.setTargets(next);
    assertEquals(1, last().relabeled().size());
    assertEquals("false", last().relabeled().get(0).labels().get("__meta_kubernetes_pod_ready"));
    assertEquals(List.of(), last().moves());
    a.setTargets(next);
    assertEquals(List.of(), last().relabeled(), "the same labels again: nothing to report");
  }

  @Test
  void withoutCostsEveryTargetCostsOneAndCostIsTheCount() {
    Allocator a = allocator();
    List<Target> ts = targets(600, 3);
    a.setCollectors(collectors(7));
    a.setTargets(ts);
    for (Collector c : a.snapshot().collectors()) {
      assertEquals(a.snapshot().targetCount(c.name()), a.snapshot().costOf(c.name()), c.name());
    }
    assertEquals(0, a.snapshot().costOf("nobody"));
  }

  @Test
  void aCostOnlyChangeKeepsEveryTargetAndUpdatesTheTotals() {
    Allocator a = allocator();
    List<Target> ts = Fixtures.paretoCosts(targets(2000, 4), 7);
    a.setCollectors(collectors(10));
    a.setTargets(ts);
    Map<Target, List<String>> before = owners(a.snapshot());
    Allocation beforeSnapshot = a.snapshot();
    a.setTargets(ts);
    assertSame(beforeSnapshot, a.snapshot(), "the same costs again: nothing published");
    List<Target> drifted = Fixtures.drift(ts, 0.10, 11);
    a.setTargets(drifted);
    assertComplete(a, ts);
    int moved = movedReplicas(before, owners(a.snapshot()), replicas());
    // The cost churn rule: a +-10% drift of every target's cost moves at most 1% of them (of
    // their replicas, with several).
    assertTrue(moved <= replicas() * ts.size() / 100, () -> "a +-10% cost drift moved " + moved);
    assertEquals(moved, last().reassigned());
    // A snapshot's target instances carry the cost they were published with (a cost-only change
    // republishes only the totals), so the expected totals come from the drifted inputs.
    Map<String, Long> totals = new HashMap<>();
    Map<Target, Long> cost = new HashMap<>();
    for (Target t : drifted) {
      cost.put(t, t.cost());
    }
    for (Target t : a.snapshot().targets()) {
      for (String c : a.snapshot().ownersOf(t)) {
        totals.merge(c, cost.get(t), Long::sum);
      }
    }
    for (Collector c : a.snapshot().collectors()) {
      assertEquals(totals.getOrDefault(c.name(), 0L), a.snapshot().costOf(c.name()), c.name());
    }
  }

  @Test
  void dropsAndMovesCarryTheirCostWithThem() {
    Allocator a = allocator();
    List<Target> ts = Fixtures.paretoCosts(targets(500, 2), 3);
    a.setCollectors(collectors(5));
    a.setTargets(ts);
    List<Collector> fewer = new ArrayList<>(collectors(5));
    fewer.remove(1);
    a.setCollectors(fewer);
    a.setTargets(ts.subList(0, 300));
    assertComplete(a, ts.subList(0, 300));
    Map<String, Long> recount = Fixtures.costByCollector(a.snapshot());
    for (Collector c : a.snapshot().collectors()) {
      assertEquals(recount.get(c.name()).longValue(), a.snapshot().costOf(c.name()), c.name());
    }
  }
}
