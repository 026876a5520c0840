package dev.apportion.bench.sim;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.bench.Placement;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a crash costs with and without replicas: on the initial placement, the targets left with
 * no live owner when collectors die, counted before the membership notices (nothing has moved
 * yet). With one replica that is every target of the dead collectors; with k, the targets whose
 * every owner died. The crashes: one collector, two collectors, and every collector of one zone
 * (drawn from the seed, the same for every strategy).
 */
final class CrashCost {
  /**
   * One strategy's figures.
   *
   * @param strategy the strategy
   * @param dark per crash, targets with no live owner: with one replica, then with k
   */
  record Row(String strategy, @SuppressWarnings("ArrayRecordComponent") int[][] dark) {}

  /**
   * The crashes and every strategy's figures.
   *
   * @param crashes what each crash kills, described
   * @param rows one per strategy
   */
  record Report(List<String> crashes, List<Row> rows) {}

  private CrashCost() {}

  static Report run(Cluster cluster, List<String> strategies, long seed, int replicas) {
    ClusterScenario.Plan initial = ClusterScenario.INITIAL.plan(cluster, new Random(seed));
    List<Collector> collectors = new ArrayList<>(cluster.collectors());
    java.util.Collections.sort(collectors);
    Random random = new Random(seed * 31 + 101);
    List<Set<String>> dead = new ArrayList<>();
    List<String> crashes = new ArrayList<>();
    String one = collectors.get(random.nextInt(collectors.size())).name();
    dead.add(Set.of(one));
    crashes.add("1 collector");
    if (collectors.size() > 2) {
      String other;
      do {
        other = collectors.get(random.nextInt(collectors.size())).name();
      } while (other.equals(one));
      dead.add(Set.of(one, other));
      crashes.add("2 collectors");
    }
    TreeSet<String> zones = new TreeSet<>(initial.zones().values());
    if (zones.size() > 1) {
      String zone = new ArrayList<>(zones).get(random.nextInt(zones.size()));
      Set<String> inZone = new HashSet<>();
      for (Collector c : collectors) {
        String z = c.zone().orElse(c.node().map(initial.zones()::get).orElse(null));
        if (zone.equals(z)) {
          inZone.add(c.name());
        }
      }
      dead.add(inZone);
      crashes.add(zone + " (" + inZone.size() + ")");
    }
    List<Row> rows = new ArrayList<>();
    for (String strategy : strategies) {
      Allocation single = placed(Placement.of(strategy), initial);
      Allocation replicated = placed(Placement.of(strategy, replicas), initial);
      int[][] dark = new int[dead.size()][];
      for (int d = 0; d < dead.size(); d++) {
        dark[d] = new int[] {dark(single, dead.get(d)), dark(replicated, dead.get(d))};
      }
      rows.add(new Row(strategy, dark));
    }
    return new Report(crashes, rows);
  }

  private static Allocation placed(Placement p, ClusterScenario.Plan initial) {
    p.setNodeZones(initial.zones());
    for (ClusterEvent step : initial.steps()) {
      if (step instanceof ClusterEvent.Collectors c) {
        p.setCollectors(c.collectors());
      } else {
        p.setTargets(((ClusterEvent.Targets) step).targets());
      }
    }
    return p.allocation();
  }

  /** Targets with at least one owner, every one of them in {@code dead}. */
  private static int dark(Allocation a, Set<String> dead) {
    int count = 0;
    for (Target t : a.targets()) {
      List<String> owners = a.ownersOf(t);
      if (!owners.isEmpty() && dead.containsAll(owners)) {
        count++;
      }
    }
    return count;
  }

  static void print(PrintStream out, Report report, int replicas) {
    out.println();
    out.printf(Locale.ROOT, "crash: targets with no live owner until the membership notices, "
        + "1 replica -> %d%n", replicas);
    StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "  %-24s", "strategy"));
    for (String crash : report.crashes()) {
      header.append(String.format(Locale.ROOT, " %18s", crash));
    }
    out.println(header);
    for (Row row : report.rows()) {
      StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "  %-24s",
          row.strategy()));
      for (int[] d : row.dark()) {
        line.append(String.format(Locale.ROOT, " %18s", d[0] + " -> " + d[1]));
      }
      out.println(line);
    }
  }
}
