package dev.apportion.allocation.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** Test data and the completeness check every test runs after every operation. */
public final class Fixtures {
  private Fixtures() {}

  public static List<Target> targets(int n, int jobs) {
    List<Target> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(Target.of("job-" + (i % jobs), "10.0." + (i / 250) + "." + (i % 250) + ":9100",
          Map.of("instance", "i-" + i)));
    }
    return out;
  }

  /** {@code perNode} targets on each of {@code nodes} nodes, via the pod node label. */
  public static List<Target> nodeTargets(int nodes, int perNode) {
    List<Target> out = new ArrayList<>();
    for (int n = 0; n < nodes; n++) {
      for (int i = 0; i < perNode; i++) {
        out.add(Target.of("pods", "10." + n + ".0." + i + ":8080",
            Map.of("__meta_kubernetes_pod_node_name", node(n))));
      }
    }
    return out;
  }

  /**
   * Heavy-tailed (Pareto, shape 1.2, scale 50, capped at 5000) costs attached to {@code ts}, from
   * a fixed seed: a few targets carry most of the cost, as series per scrape do.
   */
  public static List<Target> paretoCosts(List<Target> ts, long seed) {
    java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
    List<Target> out = new ArrayList<>(ts.size());
    for (Target t : ts) {
      out.add(t.withCost(pareto(r)));
    }
    return out;
  }

  public static long pareto(java.util.SplittableRandom r) {
    double u = 1.0 - r.nextDouble();
    return Math.min(5_000L, (long) Math.floor(50.0 / Math.pow(u, 1 / 1.2)));
  }

  /** Each target's cost scaled by a factor drawn in [1 - d, 1 + d], from a fixed seed. */
  public static List<Target> drift(List<Target> ts, double d, long seed) {
    java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
    List<Target> out = new ArrayList<>(ts.size());
    for (Target t : ts) {
      double f = 1 - d + 2 * d * r.nextDouble();
      out.add(t.withCost(Math.round(t.cost() * f)));
    }
    return out;
  }

  /**
   * The targets with a new cost for those whose collector in {@code placed} satisfies
   * {@code on}, the others unchanged: a drift that only some collectors' targets see.
   */
  public static List<Target> recost(List<Target> ts, Allocation placed,
      java.util.function.Predicate<String> on, java.util.function.LongUnaryOperator cost) {
    List<Target> out = new ArrayList<>(ts.size());
    for (Target t : ts) {
      boolean there = on.test(placed.collectorOf(t).orElseThrow());
      out.add(there ? t.withCost(cost.applyAsLong(t.cost())) : t);
    }
    return out;
  }

  /**
   * Adds {@code k} new targets to {@code ts} one write at a time and sums the targets each write
   * moved among the targets placed before it (the added one is not counted).
   */
  public static int movedByAdditions(Allocator a, List<Target> ts, int k) {
    int moved = 0;
    for (int i = 0; i < k; i++) {
      Map<Target, String> before = assignment(a.snapshot());
      ts.add(Target.of("extra", "extra-" + i + ":80"));
      a.setTargets(ts);
      moved += moved(before, assignment(a.snapshot()));
    }
    return moved;
  }

  /** Sum of the costs of the targets each collector holds (every replica), by collector name. */
  public static Map<String, Long> costByCollector(Allocation a) {
    Map<String, Long> out = new HashMap<>();
    for (Collector c : a.collectors()) {
      out.put(c.name(), 0L);
    }
    for (Target t : a.targets()) {
      for (String c : a.ownersOf(t)) {
        out.merge(c, t.cost(), Long::sum);
      }
    }
    return out;
  }

  public static String node(int n) {
    return "node-" + n;
  }

  public static List<Collector> collectors(int n) {
    List<Collector> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(Collector.of("collector-" + i, node(i)));
    }
    return out;
  }

  public static Map<Target, String> assignment(Allocation a) {
    Map<Target, String> out = new HashMap<>();
    for (Target t : a.targets()) {
      a.collectorOf(t).ifPresent(c -> out.put(t, c));
    }
    return out;
  }

  public static int moved(Map<Target, String> before, Map<Target, String> after) {
    int moved = 0;
    for (Map.Entry<Target, String> e : before.entrySet()) {
      String now = after.get(e.getKey());
      if (now != null && !now.equals(e.getValue())) {
        moved++;
      }
    }
    return moved;
  }

  /**
   * Every target of {@code expected} is assigned to exactly one live collector or unassigned,
   * never both, never neither; the per-collector views agree with {@code collectorOf}. With k
   * replicas: every target has at most k distinct live owners, {@code collectorOf} first, each
   * listing it; it is unassigned exactly when it has fewer than k; each collector lists exactly
   * the targets that name it among their owners.
   */
  public static void assertComplete(Allocator allocator, Collection<Target> expected) {
    assertComplete(allocator.snapshot(), expected);
  }

  public static void assertComplete(Allocation a, Collection<Target> expected) {
    Set<Target> want = new HashSet<>(expected);
    assertEquals(want, new HashSet<>(a.targets()), "known targets");
    assertEquals(want.size(), a.targets().size(), "no duplicates in targets()");
    Set<String> live = new HashSet<>();
    for (Collector c : a.collectors()) {
      live.add(c.name());
    }
    int k = a.replicas();
    int held = 0;
    int fewer = 0;
    for (Target t : want) {
      Optional<String> c = a.collectorOf(t);
      List<String> owners = a.ownersOf(t);
      boolean unassigned = a.unassigned().contains(t);
      assertTrue(owners.size() <= k, () -> t + " has more than " + k + " owners: " + owners);
      assertEquals(owners.size(), new HashSet<>(owners).size(),
          () -> t + " is held twice by one collector: " + owners);
      c.ifPresent(p -> assertEquals(p, owners.get(0), () -> t + ": the primary comes first"));
      if (owners.size() < k) {
        fewer++;
        assertTrue(unassigned, () -> t + " has " + owners.size() + " of " + k
            + " owners but is not unassigned");
      } else {
        assertFalse(unassigned, () -> t + " is both assigned and unassigned");
      }
      for (String o : owners) {
        assertTrue(live.contains(o), () -> t + " is on dead collector " + o);
        assertTrue(a.targetsFor(o, t.job()).contains(t),
            () -> t + " missing from targetsFor(" + o + ")");
      }
      held += owners.size();
    }
    int listed = 0;
    for (Collector c : a.collectors()) {
      int count = 0;
      for (String job : a.jobsFor(c.name())) {
        List<Target> l = a.targetsFor(c.name(), job);
        assertFalse(l.isEmpty(), "an empty job list is not listed");
        for (Target t : l) {
          assertTrue(a.ownersOf(t).contains(c.name()), "list and ownersOf agree");
          assertEquals(job, t.job());
        }
        count += l.size();
      }
      assertEquals(count, a.targetCount(c.name()), "targetCount of " + c.name());
      listed += count;
    }
    assertEquals(held, listed, "every replica listed exactly once");
    assertEquals(fewer, a.unassigned().size(), "unassigned count");
  }

  /** Every target's owners, primary first (empty lists left out). */
  public static Map<Target, List<String>> owners(Allocation a) {
    Map<Target, List<String>> out = new HashMap<>();
    for (Target t : a.targets()) {
      List<String> o = a.ownersOf(t);
      if (!o.isEmpty()) {
        out.put(t, o);
      }
    }
    return out;
  }

  /**
   * Fails unless every target of {@code ts} is on the same collector (or unassigned) in both
   * allocations, naming how many differ and the first.
   */
  public static void assertSamePlacement(Allocation want, Allocation have, List<Target> ts,
      String where) {
    int differ = 0;
    String first = null;
    for (Target t : ts) {
      Optional<String> w = want.collectorOf(t);
      Optional<String> h = have.collectorOf(t);
      if (!w.equals(h)) {
        differ++;
        if (first == null) {
          first = t + " is on " + h + ", from scratch on " + w;
        }
      }
    }
    assertEquals(0, differ, where + ": " + differ + " targets differ, e.g. " + first);
  }
}
