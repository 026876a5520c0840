package dev.apportion.bench.sim;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.bench.Placement;
import dev.apportion.bench.sim.ClusterScenario.Plan;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

/**
 * Runs strategies through scenarios on a cluster and measures what each did.
 *
 * <p>For each scenario the steps are drawn once from the seed (so every strategy sees the same
 * events), then each strategy gets a fresh {@link Placement}: the initial placement is applied to
 * it untimed (except in {@link ClusterScenario#INITIAL}, which is that placement), then the
 * scenario's steps are applied one by one, each timed and its moves counted. The figures are taken from the state
 * the scenario ends in.
 *
 * <p>Not thread-safe; a simulator is used once, from one thread.
 */
public final class Simulator {
  private final Mode mode;
  private final long seed;
  private final PrintStream progress;
  private final int replicas;
  private long lastProgress;

  /**
   * A simulator.
   *
   * @param mode how ownership is decided
   * @param seed the seed the scenarios draw their events from
   * @param progress where to report progress on long runs (at most once a second), or null
   */
  public Simulator(Mode mode, long seed, PrintStream progress) {
    this(mode, seed, progress, 1);
  }

  /**
   * A simulator whose placements put every target on {@code replicas} collectors: balance, cost
   * and moves then count every replica.
   *
   * @param mode how ownership is decided
   * @param seed the seed the scenarios draw their events from
   * @param progress where to report progress on long runs (at most once a second), or null
   * @param replicas replicas per target, 1 to 8
   */
  public Simulator(Mode mode, long seed, PrintStream progress, int replicas) {
    this.replicas = replicas;
    this.mode = Objects.requireNonNull(mode, "mode");
    this.seed = seed;
    this.progress = progress;
    this.lastProgress = System.nanoTime();
  }

  /**
   * Runs every strategy through every scenario.
   *
   * @param cluster the cluster
   * @param strategies strategies' names
   * @param scenarios the scenarios, in the order to run them
   * @return one result per scenario and strategy, scenario-major, in the order given
   */
  public List<Result> run(Cluster cluster, List<String> strategies,
      List<ClusterScenario> scenarios) {
    List<Result> results = new ArrayList<>();
    Plan initial = ClusterScenario.INITIAL.plan(cluster, new Random(seed));
    for (ClusterScenario scenario : scenarios) {
      Plan plan = scenario.plan(cluster, randomFor(scenario, seed));
      for (String strategy : strategies) {
        results.add(run(strategy, scenario, initial, plan));
      }
    }
    return results;
  }

  /**
   * The random source {@code scenario}'s events are drawn from: the same for every strategy.
   *
   * @param scenario the scenario
   * @param seed the simulator's seed
   * @return a fresh source
   */
  // The derivation is part of the published figures (docs/simulator.md): keyed by
  // the constant's position, it must stay so for the simulator's output to stay the same.
  @SuppressWarnings("EnumOrdinal")
  static Random randomFor(ClusterScenario scenario, long seed) {
    return new Random(seed * 31 + scenario.ordinal());
  }

  private Result run(String strategy, ClusterScenario scenario, Plan initial, Plan plan) {
    Placement placement = mode.create(strategy, replicas);
    // The topology a Node watcher would supply (KubernetesNodeZones): the zones known at the end.
    placement.setNodeZones(plan.zones());
    if (scenario != ClusterScenario.INITIAL) {
      for (ClusterEvent step : initial.steps()) {
        apply(placement, step);
      }
    }
    Map<Target, List<String>> start = owners(placement.allocation());
    int moved = 0;
    long nanos = 0;
    int done = 0;
    double worstStep = Double.NaN;
    for (ClusterEvent step : plan.steps()) {
      int minimum = stepMinimum(placement.allocation(), step);
      long t0 = System.nanoTime();
      int stepMoved = apply(placement, step);
      nanos += System.nanoTime() - t0;
      moved += stepMoved;
      if (minimum > 0) {
        double ratio = (double) stepMoved / minimum;
        worstStep = Double.isNaN(worstStep) ? ratio : Math.max(worstStep, ratio);
      }
      report(strategy, scenario, ++done, plan.steps().size());
    }
    return measure(placement.allocation(), strategy, scenario, plan.zones(), start, moved, nanos,
        worstStep);
  }

  /**
   * The least a step can move when it changes the collector set by exactly one: what a leaving
   * collector holds, or for a joining one its capacity's share of the assigned targets (the
   * assigned targets over the new collector count when every capacity is 1; rounded down); 0 for
   * any other step.
   */
  static int stepMinimum(Allocation before, ClusterEvent step) {
    if (!(step instanceof ClusterEvent.Collectors c)) {
      return 0;
    }
    Set<String> was = new HashSet<>();
    for (Collector collector : before.collectors()) {
      was.add(collector.name());
    }
    Set<String> now = new HashSet<>();
    for (Collector collector : c.collectors()) {
      now.add(collector.name());
    }
    List<String> left = new ArrayList<>();
    for (String name : was) {
      if (!now.contains(name)) {
        left.add(name);
      }
    }
    int joined = 0;
    double joinedCapacity = 0;
    double totalCapacity = 0;
    for (Collector collector : c.collectors()) {
      totalCapacity += collector.capacity();
      if (!was.contains(collector.name())) {
        joined++;
        joinedCapacity += collector.capacity();
      }
    }
    if (left.size() == 1 && joined == 0) {
      return before.targetCount(left.get(0));
    }
    if (left.isEmpty() && joined == 1) {
      int assigned = before.targets().size() - before.unassigned().size();
      if (before.replicas() > 1) {
        assigned = 0;
        for (Collector collector : before.collectors()) {
          assigned += before.targetCount(collector.name());
        }
      }
      return (int) (assigned * joinedCapacity / totalCapacity);
    }
    return 0;
  }

  private static int apply(Placement placement, ClusterEvent step) {
    if (step instanceof ClusterEvent.Collectors c) {
      return placement.setCollectors(c.collectors());
    }
    return placement.setTargets(((ClusterEvent.Targets) step).targets());
  }

  private void report(String strategy, ClusterScenario scenario, int done, int total) {
    if (progress == null) {
      return;
    }
    long now = System.nanoTime();
    if (now - lastProgress >= 1_000_000_000L) {
      lastProgress = now;
      progress.printf("simulate: %s, %s: step %d of %d%n", strategy, scenario.title(), done,
          total);
    }
  }

  /** Each assigned target's owners (with replicas, every replica's collector). */
  private static Map<Target, List<String>> owners(Allocation a) {
    Map<Target, List<String>> owners = new HashMap<>();
    for (Collector c : a.collectors()) {
      for (String job : a.jobsFor(c.name())) {
        for (Target t : a.targetsFor(c.name(), job)) {
          owners.computeIfAbsent(t, x -> new ArrayList<>(1)).add(c.name());
        }
      }
    }
    return owners;
  }

  static Result measure(Allocation a, String strategy, ClusterScenario scenario,
      Map<String, String> zones, Map<Target, List<String>> start, int moved, long nanos,
      double worstStep) {
    List<Collector> collectors = new ArrayList<>(a.collectors());
    int[] loads = new int[collectors.size()];
    Set<String> live = new HashSet<>();
    int idle = 0;
    int crossNode = 0;
    int nodeKnown = 0;
    int crossZone = 0;
    int zoneKnown = 0;
    for (int i = 0; i < collectors.size(); i++) {
      Collector c = collectors.get(i);
      live.add(c.name());
      loads[i] = a.targetCount(c.name());
      if (loads[i] == 0) {
        idle++;
      }
      String collectorNode = c.node().orElse(null);
      String collectorZone = collectorNode == null ? null : zones.get(collectorNode);
      for (String job : a.jobsFor(c.name())) {
        for (Target t : a.targetsFor(c.name(), job)) {
          Optional<String> node = t.node();
          if (node.isEmpty() || collectorNode == null) {
            continue;
          }
          nodeKnown++;
          if (!node.get().equals(collectorNode)) {
            crossNode++;
          }
          String zone = zones.get(node.get());
          if (zone != null && collectorZone != null) {
            zoneKnown++;
            if (!zone.equals(collectorZone)) {
              crossZone++;
            }
          }
        }
      }
    }
    int minimum = 0;
    for (Map.Entry<Target, List<String>> e : start.entrySet()) {
      for (String owner : e.getValue()) {
        if (!live.contains(owner) && a.targets().contains(e.getKey())) {
          minimum++;
        }
      }
    }
    int[] sorted = loads.clone();
    Arrays.sort(sorted);
    for (int i = 0, j = sorted.length - 1; i < j; i++, j--) {
      int tmp = sorted[i];
      sorted[i] = sorted[j];
      sorted[j] = tmp;
    }
    double totalCapacity = 0;
    long totalCost = 0;
    for (Collector c : collectors) {
      totalCapacity += c.capacity();
      totalCost += a.costOf(c.name());
    }
    double[] shares = new double[totalCost == 0 ? 0 : collectors.size()];
    for (int i = 0; i < shares.length; i++) {
      Collector c = collectors.get(i);
      shares[i] = (a.costOf(c.name()) / c.capacity()) / (totalCost / totalCapacity);
    }
    long assigned = 0;
    for (int l : loads) {
      assigned += l;
    }
    double[] countShares = new double[assigned == 0 ? 0 : collectors.size()];
    for (int i = 0; i < countShares.length; i++) {
      Collector c = collectors.get(i);
      countShares[i] = (a.targetCount(c.name()) / c.capacity()) / (assigned / totalCapacity);
    }
    return new Result(strategy, scenario, collectors.size(), a.targets().size(), sorted, idle,
        crossNode, nodeKnown, crossZone, zoneKnown, moved, minimum, a.unassigned().size(), nanos,
        highestFirst(shares), highestFirst(countShares), worstStep);
  }

  private static double[] highestFirst(double[] xs) {
    Arrays.sort(xs);
    for (int i = 0, j = xs.length - 1; i < j; i++, j--) {
      double tmp = xs[i];
      xs[i] = xs[j];
      xs[j] = tmp;
    }
    return xs;
  }
}
