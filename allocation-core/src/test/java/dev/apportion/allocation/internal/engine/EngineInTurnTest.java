package dev.apportion.allocation.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.chash.ConsistentHashingPlacer;
import dev.apportion.allocation.internal.leastweighted.LeastWeightedPlacer;
import dev.apportion.allocation.internal.rendezvous.RendezvousPlacer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The engine compares each target of a {@code setTargets} call first with the one the last call
 * was given at the same place ("in turn"), and looks it up in its table only when that fails.
 * That is a shortcut, never a different answer: an engine with it and one without it, given the
 * same histories (targets inserted, deleted, replaced in place, moved, relabeled, re-costed,
 * duplicated, rebuilt as equal new instances, shuffled; collectors changing; identity hashes
 * forced to collide), must publish the same snapshots, keep the same instances, report the same
 * moves and relabels and count the same duplicates.
 */
class EngineInTurnTest {

  static Stream<Arguments> placers() {
    return Stream.of(
        Arguments.of("test placer", (Supplier<Placer>) EngineTestPlacer::new),
        Arguments.of("consistent-hashing",
            (Supplier<Placer>) () -> new ConsistentHashingPlacer(1.2, 1.15, 64, true)),
        Arguments.of("rendezvous", (Supplier<Placer>) RendezvousPlacer::new),
        Arguments.of("least-weighted", (Supplier<Placer>) LeastWeightedPlacer::new));
  }

  private static Target target(int id, int version, long cost) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("pod", "p-" + id);
    labels.put("__meta_kubernetes_pod_annotation_v", "v" + version);
    return Target.of("job-" + (id % 3), "10.0.0." + id + ":80", labels).withCost(cost);
  }

  private static Target copy(Target t) {
    return Target.of(t.job(), t.address(), new LinkedHashMap<>(t.labels())).withCost(t.cost());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("placers")
  void inTurnAndByTablePublishTheSame(String name, Supplier<Placer> placer) {
    for (long keyMask : new long[] {-1L, 0xFL}) {
      for (long seed = 1; seed <= 40; seed++) {
        run(placer, keyMask, seed);
      }
    }
  }

  private static void run(Supplier<Placer> placer, long keyMask, long seed) {
    Random random = new Random(seed);
    List<AllocationChange> heardByTable = new ArrayList<>();
    List<AllocationChange> heardInTurn = new ArrayList<>();
    Engine byTable = TestEngines.keyedBy(placer.get(), List.of(heardByTable::add), keyMask, false);
    Engine inTurn = TestEngines.keyedBy(placer.get(), List.of(heardInTurn::add), keyMask, true);
    List<Collector> collectors = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      collectors.add(Collector.of("c-" + i));
    }
    byTable.setCollectors(collectors);
    inTurn.setCollectors(collectors);
    List<Target> given = new ArrayList<>();
    int nextId = 0;
    // Some histories span many lookup batches of the engine's input loop.
    int size = seed % 4 == 0 ? 300 : 30;
    for (int i = 0; i < size; i++) {
      given.add(target(nextId++, 0, 1));
    }
    for (int op = 0; op < 40; op++) {
      String where = "seed " + seed + " mask " + keyMask + " op " + op;
      int kind = random.nextInt(12);
      if (kind == 0) {
        collectors.add(Collector.of("c-" + (4 + op)));
        if (collectors.size() > 6) {
          collectors.remove(random.nextInt(collectors.size()));
        }
        byTable.setCollectors(collectors);
        inTurn.setCollectors(collectors);
      } else {
        given = edit(given, kind, random, nextId);
        nextId += 10;
        List<Target> call = List.copyOf(given);
        byTable.setTargets(call);
        // Sometimes as a collection that is not a random-access list: the engine's other loop.
        inTurn.setTargets(random.nextInt(3) == 0 ? new ArrayDeque<>(call) : call);
      }
      assertSameSnapshot(byTable.snapshot(), inTurn.snapshot(), where);
      assertEquals(moves(heardByTable), moves(heardInTurn), where);
      assertEquals(relabeled(heardByTable), relabeled(heardInTurn), where);
    }
  }

  /** The next call's targets: the last call's, edited one way. */
  private static List<Target> edit(List<Target> last, int kind, Random random, int nextId) {
    List<Target> next = new ArrayList<>(last);
    int n = next.size();
    switch (kind) {
      case 1 -> { // insert a few new targets anywhere
        for (int i = 0; i < 1 + random.nextInt(4); i++) {
          next.add(random.nextInt(next.size() + 1), target(nextId + i, 0, 1));
        }
      }
      case 2 -> { // delete a few
        for (int i = 0; i < 1 + random.nextInt(4) && next.size() > 1; i++) {
          next.remove(random.nextInt(next.size()));
        }
      }
      case 3 -> { // replace a few in place
        for (int i = 0; i < 1 + random.nextInt(4); i++) {
          next.set(random.nextInt(n), target(nextId + i, 0, 1));
        }
      }
      case 4 -> { // relabel a few (same identity, new labels)
        for (int i = 0; i < 1 + random.nextInt(4); i++) {
          int at = random.nextInt(n);
          Target t = next.get(at);
          next.set(at, target(idOf(t), random.nextInt(3), t.cost()));
        }
      }
      case 5 -> { // re-cost a few
        for (int i = 0; i < 1 + random.nextInt(4); i++) {
          int at = random.nextInt(n);
          next.set(at, next.get(at).withCost(1 + random.nextInt(4)));
        }
      }
      case 6 -> { // duplicate a few: an equal copy, same or other labels, elsewhere
        for (int i = 0; i < 1 + random.nextInt(3); i++) {
          Target t = next.get(random.nextInt(n));
          Target d = random.nextBoolean() ? copy(t) : target(idOf(t), 7, t.cost());
          next.add(random.nextInt(next.size() + 1), d);
        }
      }
      case 7 -> { // move a block
        int from = random.nextInt(n);
        int to = Math.min(n, from + 1 + random.nextInt(6));
        List<Target> block = new ArrayList<>(next.subList(from, to));
        next.subList(from, to).clear();
        next.addAll(random.nextInt(next.size() + 1), block);
      }
      case 8 -> Collections.shuffle(next, random);
      case 9 -> { // every target rebuilt as an equal new instance, in the same order
        next.replaceAll(EngineInTurnTest::copy);
      }
      case 10 -> { // the duplicates dropped, as the next refresh would
        Map<Target, Target> unique = new LinkedHashMap<>();
        for (Target t : next) {
          unique.putIfAbsent(t, t);
        }
        next = new ArrayList<>(unique.values());
      }
      default -> { // the same list again
      }
    }
    return next;
  }

  private static int idOf(Target t) {
    return Integer.parseInt(t.labels().get("pod").substring(2));
  }

  @Test
  void aRefreshInTheSameOrderKeepsTheHeldInstances() {
    Engine engine = TestEngines.engine("test", new EngineTestPlacer(), List.of());
    engine.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    List<Target> first = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      first.add(target(i, 0, 1));
    }
    engine.setTargets(first);
    List<Target> again = new ArrayList<>();
    for (Target t : first) {
      again.add(copy(t));
    }
    again.set(10, target(10, 1, 1));
    engine.setTargets(again);
    Allocation a = engine.snapshot();
    for (String c : List.of("a", "b")) {
      for (String job : a.jobsFor(c)) {
        for (Target t : a.targetsFor(c, job)) {
          int i = idOf(t);
          assertSame(i == 10 ? again.get(i) : first.get(i), t, "held instance of " + t);
        }
      }
    }
  }

  private static List<String> moves(List<AllocationChange> heard) {
    List<String> out = new ArrayList<>();
    for (AllocationChange c : heard) {
      for (Move m : c.moves()) {
        out.add(m + " " + m.target().labels() + " " + System.identityHashCode(m.target()));
      }
      out.add("| " + c.reassigned());
    }
    return out;
  }

  private static List<String> relabeled(List<AllocationChange> heard) {
    List<String> out = new ArrayList<>();
    for (AllocationChange c : heard) {
      for (Target t : c.relabeled()) {
        out.add(t + " " + t.labels() + " " + System.identityHashCode(t));
      }
    }
    return out;
  }

  private static void assertSameSnapshot(Allocation expected, Allocation actual, String where) {
    EngineCollisionTest.assertSameAllocation(expected, actual, where);
    for (Collector c : expected.collectors()) {
      for (String job : expected.jobsFor(c.name())) {
        List<Target> e = expected.targetsFor(c.name(), job);
        List<Target> a = actual.targetsFor(c.name(), job);
        for (int i = 0; i < e.size(); i++) {
          assertSame(e.get(i), a.get(i), where + ": the same instance kept");
          assertEquals(e.get(i).cost(), a.get(i).cost(), where);
        }
      }
    }
    List<Target> eu = new ArrayList<>(expected.unassigned());
    List<Target> au = new ArrayList<>(actual.unassigned());
    for (int i = 0; i < eu.size(); i++) {
      assertSame(eu.get(i), au.get(i), where + ": the same unassigned instance kept");
    }
  }
}
