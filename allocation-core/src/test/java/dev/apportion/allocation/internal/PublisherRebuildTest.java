package dev.apportion.allocation.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The publisher builds a snapshot two ways: from the previous one and the operation's deltas
 * (few targets touched), or from the state alone (most touched: a first placement, a large
 * change). Both must give the same snapshot, list for list and in the same order. Rendezvous and
 * per-node place a target by the current sets alone, so an allocator taken through a random
 * history of small and large changes must publish exactly what a fresh allocator given the same
 * sets publishes (which always builds from the state): every collector's jobs, every list in
 * order, every owner, the unassigned set and the targets' iteration order, through replacements,
 * relabels (a target's node changes), re-costs and collector changes.
 */
class PublisherRebuildTest {

  private static Target target(int id, int nodes, Random r) {
    return Target.of("job-" + r.nextInt(9), "10.0." + (id >> 8 & 255) + "." + (id & 255) + ":"
            + (1000 + id / 65536),
        Map.of("__meta_kubernetes_pod_node_name", "node-" + r.nextInt(nodes)));
  }

  @ParameterizedTest(name = "{0}, listener {1}, seed {2}")
  @CsvSource({
      "rendezvous, false, 1", "rendezvous, true, 2", "per-node, false, 3", "per-node, true, 4",
      "rendezvous, false, 5", "per-node, false, 6"})
  void aHistoryOfSmallAndLargeChangesPublishesWhatAFreshAllocatorDoes(String strategy,
      boolean listener, long seed) {
    Random r = new Random(seed);
    int nodes = 40;
    List<Collector> collectors = new ArrayList<>();
    for (int c = 0; c < 30; c++) {
      collectors.add(Collector.of("collector-" + c, "node-" + c));
    }
    List<Target> targets = new ArrayList<>();
    int nextId = 0;
    for (; nextId < 3000; nextId++) {
      targets.add(target(nextId, nodes, r));
    }
    Allocators.Builder builder = Allocators.builder(strategy);
    int[] calls = new int[1];
    if (listener) {
      builder.listener(change -> calls[0]++);
    }
    Allocator a = builder.build();
    a.setCollectors(collectors);
    a.setTargets(targets);
    assertSameAsFresh(strategy, a.snapshot(), collectors, targets, "first placement");
    for (int step = 0; step < 60; step++) {
      String what;
      // Re-costs only under rendezvous: per-node's fallback keeps the costs it placed with (its
      // churn rule), so its placement after a re-cost is not a fresh allocator's.
      int kind = r.nextInt(strategy.equals("rendezvous") ? 6 : 5);
      if (kind >= 4) {
        // Relabel (another node) or re-cost a share of the targets, the identities kept.
        double share = r.nextBoolean() ? 0.02 : 0.5;
        List<Target> next = new ArrayList<>(targets.size());
        for (Target t : targets) {
          if (r.nextDouble() >= share) {
            next.add(t);
          } else if (kind == 4) {
            next.add(Target.of(t.job(), t.address(),
                Map.of("__meta_kubernetes_pod_node_name", "node-" + r.nextInt(nodes))));
          } else {
            next.add(t.withCost(1 + r.nextInt(5)));
          }
        }
        targets = next;
        a.setTargets(targets);
        what = "step " + step + (kind == 4 ? ": relabels" : ": costs") + ", share " + share;
      } else if (kind < 3) {
        // Replace a share of the targets: 0.1% to 90%, so both ways of publishing are taken.
        double share = kind == 0 ? 0.001 : kind == 1 ? 0.05 : 0.3 + 0.6 * r.nextDouble();
        List<Target> next = new ArrayList<>(targets.size());
        for (Target t : targets) {
          next.add(r.nextDouble() < share ? target(nextId++, nodes, r) : t);
        }
        int grow = r.nextInt(200) - 100;
        for (int i = 0; i < grow; i++) {
          next.add(target(nextId++, nodes, r));
        }
        for (int i = 0; i < -grow && !next.isEmpty(); i++) {
          next.remove(r.nextInt(next.size()));
        }
        targets = next;
        a.setTargets(targets);
        what = "step " + step + ": targets, share " + share;
      } else {
        // A collector leaves or joins (on a node with targets or a new one).
        List<Collector> next = new ArrayList<>(collectors);
        if (r.nextBoolean() && next.size() > 1) {
          next.remove(r.nextInt(next.size()));
        } else {
          int c = 100 + step;
          next.add(Collector.of("collector-" + c, "node-" + r.nextInt(nodes + 5)));
        }
        collectors = next;
        a.setCollectors(collectors);
        what = "step " + step + ": collectors";
      }
      assertSameAsFresh(strategy, a.snapshot(), collectors, targets, what);
    }
    if (listener) {
      assertEquals(62, calls[0]);
    }
  }

  private static void assertSameAsFresh(String strategy, Allocation got,
      List<Collector> collectors, List<Target> targets, String what) {
    Allocator fresh = Allocators.builder(strategy).build();
    fresh.setCollectors(collectors);
    fresh.setTargets(targets);
    Allocation want = fresh.snapshot();
    // The snapshot agrees with itself: each listed target is owned, in the table, by the
    // collector that lists it, and the lists hold every owned target once.
    int listed = 0;
    for (Collector c : got.collectors()) {
      for (String job : got.jobsFor(c.name())) {
        for (Target t : got.targetsFor(c.name(), job)) {
          assertEquals(java.util.Optional.of(c.name()), got.collectorOf(t),
              what + ": the table's owner of " + t + ", listed by " + c.name());
          listed++;
        }
      }
    }
    assertEquals(got.targets().size() - got.unassigned().size(), listed,
        what + ": the owned targets, listed once each");
    assertEquals(List.copyOf(want.targets()), List.copyOf(got.targets()),
        what + ": the targets in order");
    assertEquals(List.copyOf(want.unassigned()), List.copyOf(got.unassigned()),
        what + ": the unassigned targets");
    assertEquals(want.collectors(), got.collectors(), what + ": the collectors");
    for (Collector c : want.collectors()) {
      assertEquals(List.copyOf(want.jobsFor(c.name())), List.copyOf(got.jobsFor(c.name())),
          what + ": the jobs of " + c.name());
      assertEquals(want.targetCount(c.name()), got.targetCount(c.name()),
          what + ": the count of " + c.name());
      for (String job : want.jobsFor(c.name())) {
        assertEquals(want.targetsFor(c.name(), job), got.targetsFor(c.name(), job),
            what + ": " + c.name() + "'s " + job);
      }
    }
    for (Target t : targets) {
      assertEquals(want.collectorOf(t), got.collectorOf(t), what + ": the owner of " + t);
    }
  }
}
