package dev.apportion.bench.sim;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.ownership.Ownership;
import dev.apportion.allocation.ownership.OwnershipChange;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code simulate --mode local}: no central allocator; every collector replica builds its own
 * {@link Ownership} view from the member list it sees and scrapes the targets it owns. The runs
 * show what the fail-safe rule costs and what it saves:
 * <ul>
 *   <li>{@code steady}: every replica sees every member: each target owned exactly once;
 *   <li>{@code partitioned}: one replica sees only itself (its peers still list it): it owns
 *       everything, so its peers' targets are scraped twice, but none is dropped;
 *   <li>{@code forgotten}: the same, and its peers have dropped it from their lists too: it still
 *       duplicates everything, and nothing is dropped;
 *   <li>{@code leave}: one replica leaves; the survivors' {@code update} reports what each gains;
 *   <li>{@code join}: one replica joins; its peers report what they lose.
 * </ul>
 */
final class LocalSimulation {
  /** One run's counts. */
  record Row(String run, int replicas, int targets, int gaps, int once, int duplicated,
      int moved, int minimum) {}

  private LocalSimulation() {}

  static List<Row> run(Cluster cluster) {
    List<String> names = new ArrayList<>();
    for (Collector c : cluster.collectors()) {
      names.add(c.name());
    }
    List<Target> targets = cluster.targets();
    List<Row> rows = new ArrayList<>();
    rows.add(count("steady", views(names, names, null, false), targets, 0, 0));

    String alone = names.get(0);
    rows.add(count("partitioned", views(names, names, alone, false), targets, 0, 0));
    rows.add(count("forgotten", views(names, names, alone, true), targets, 0, 0));

    List<Ownership> before = views(names, names, null, false);
    String leaving = names.get(names.size() - 1);
    int share = before.get(names.size() - 1).owned(targets).size();
    List<String> fewer = new ArrayList<>(names.subList(0, names.size() - 1));
    List<Ownership> after = new ArrayList<>();
    int gained = 0;
    for (int i = 0; i < fewer.size(); i++) {
      OwnershipChange c = before.get(i).update(fewer, targets);
      gained += c.gained().size();
      after.add(c.after());
    }
    rows.add(count("leave " + leaving, after, targets, gained, share));

    List<String> more = new ArrayList<>(names);
    String joining = "replica-joining";
    more.add(joining);
    List<Ownership> joined = new ArrayList<>();
    int lost = 0;
    for (int i = 0; i < names.size(); i++) {
      OwnershipChange c = before.get(i).update(more, targets);
      lost += c.lost().size();
      joined.add(c.after());
    }
    Ownership newcomer = Ownership.of(joining, more);
    joined.add(newcomer);
    rows.add(count("join " + joining, joined, targets, lost, newcomer.owned(targets).size()));
    return rows;
  }

  /** Views of {@code members}; {@code alone}, when given, sees only itself. */
  private static List<Ownership> views(List<String> members, List<String> seen, String alone,
      boolean forgotten) {
    List<String> peersSee = new ArrayList<>(seen);
    if (forgotten) {
      peersSee.remove(alone);
    }
    List<Ownership> out = new ArrayList<>();
    for (String m : members) {
      out.add(Ownership.of(m, m.equals(alone) ? List.of(m) : peersSee));
    }
    return out;
  }

  private static Row count(String run, List<Ownership> views, List<Target> targets, int moved,
      int minimum) {
    int gaps = 0;
    int once = 0;
    int duplicated = 0;
    for (Target t : targets) {
      int owners = 0;
      for (Ownership v : views) {
        if (v.owns(t)) {
          owners++;
        }
      }
      if (owners == 0) {
        gaps++;
      } else if (owners == 1) {
        once++;
      } else {
        duplicated++;
      }
    }
    return new Row(run, views.size(), targets.size(), gaps, once, duplicated, moved, minimum);
  }

  static void print(PrintStream out, Cluster cluster, List<Row> rows) {
    out.println(cluster);
    out.println();
    out.println("== local ownership (every replica decides from the member list it sees) ==");
    out.printf("%-26s %8s %8s %6s %8s %10s %7s %8s%n", "run", "replicas", "targets", "gaps",
        "once", "duplicated", "moved", "minimum");
    for (Row r : rows) {
      out.printf("%-26s %8d %8d %6d %8d %10d %7d %8d%n", r.run(), r.replicas(), r.targets(),
          r.gaps(), r.once(), r.duplicated(), r.moved(), r.minimum());
    }
    out.println();
    out.println("gaps: targets no replica scrapes; duplicated: targets two or more replicas "
        + "scrape. A replica that sees only itself owns everything (fail-safe): duplicates, "
        + "never gaps. moved: targets gained by survivors (leave) or lost to the newcomer "
        + "(join); minimum: what the leaving replica held, or what the newcomer now owns.");
  }

  /** The runs' counts by name, for tests. */
  static Map<String, Row> byRun(List<Row> rows) {
    Map<String, Row> out = new TreeMap<>();
    for (Row r : rows) {
      out.put(r.run().split(" ", -1)[0], r);
    }
    return out;
  }
}
