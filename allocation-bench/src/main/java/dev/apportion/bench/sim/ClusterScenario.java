package dev.apportion.bench.sim;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What happens to the cluster. Every scenario but {@link #INITIAL} starts from the initial
 * placement of the whole cluster (applied first, neither timed nor counted), so each one's
 * figures show that event alone. A scenario's steps are drawn once from the seed and applied
 * identically to every strategy.
 */
public enum ClusterScenario {
  /** Every collector, then every target, on an empty allocator. */
  INITIAL("initial placement") {
    @Override
    Plan plan(Cluster cluster, Random random) {
      return new Plan(List.of(new ClusterEvent.Collectors(cluster.collectors()),
          new ClusterEvent.Targets(cluster.targets())), cluster.zones());
    }
  },
  /** A node joins, with its collector pod and, as yet, no targets. */
  SCALE_OUT("scale out by one") {
    @Override
    Plan plan(Cluster cluster, Random random) {
      Map<String, String> zones = new TreeMap<>(cluster.zones());
      String node = "node-joined";
      List<String> knownZones = new ArrayList<>(new TreeSet<>(zones.values()));
      if (!knownZones.isEmpty()) {
        zones.put(node, knownZones.get(random.nextInt(knownZones.size())));
      }
      List<Collector> after = new ArrayList<>(cluster.collectors());
      after.add(Collector.of(ClusterGenerator.newPodName(random, names(after)), node));
      return new Plan(List.of(new ClusterEvent.Collectors(after)), zones);
    }
  },
  /** One collector goes away; its node and that node's targets stay. */
  SCALE_IN("scale in by one") {
    @Override
    Plan plan(Cluster cluster, Random random) {
      List<Collector> after = new ArrayList<>(cluster.collectors());
      if (after.size() > 1) {
        after.remove(random.nextInt(after.size()));
      }
      return new Plan(List.of(new ClusterEvent.Collectors(after)), cluster.zones());
    }
  },
  /**
   * A DaemonSet rolling update: node by node, a new pod with a new name starts on the node
   * (for a moment both run: the surge), then the old pod goes.
   */
  ROLLING_RESTART("rolling restart") {
    @Override
    Plan plan(Cluster cluster, Random random) {
      List<Collector> current = new ArrayList<>(cluster.collectors());
      List<Collector> order = new ArrayList<>(current);
      order.sort(Comparator.comparing((Collector c) -> c.node().orElse(""))
          .thenComparing(Collector::name));
      Set<String> taken = names(current);
      List<ClusterEvent> steps = new ArrayList<>();
      for (Collector old : order) {
        // The new pod is the old one's replacement: same node, same capacity.
        Collector surge = Collector.of(ClusterGenerator.newPodName(random, taken),
            old.node().orElse(null)).withCapacity(old.capacity());
        current.add(surge);
        steps.add(new ClusterEvent.Collectors(List.copyOf(current)));
        current.remove(old);
        steps.add(new ClusterEvent.Collectors(List.copyOf(current)));
      }
      return new Plan(steps, cluster.zones());
    }
  },
  /**
   * A node fails: the pods on it, targets and collector alike, disappear. The targets go first
   * (discovery sees the pods die), then the collector.
   */
  NODE_LOST("node lost") {
    @Override
    Plan plan(Cluster cluster, Random random) {
      List<Collector> withNode = new ArrayList<>();
      for (Collector c : cluster.collectors()) {
        if (c.node().isPresent()) {
          withNode.add(c);
        }
      }
      if (withNode.isEmpty() || cluster.collectors().size() < 2) {
        return SCALE_IN.plan(cluster, random);
      }
      String node = withNode.get(random.nextInt(withNode.size())).node().orElseThrow();
      List<Target> targets = new ArrayList<>();
      for (Target t : cluster.targets()) {
        if (!t.node().map(node::equals).orElse(false)) {
          targets.add(t);
        }
      }
      List<Collector> collectors = new ArrayList<>();
      for (Collector c : cluster.collectors()) {
        if (!c.node().map(node::equals).orElse(false)) {
          collectors.add(c);
        }
      }
      return new Plan(List.of(new ClusterEvent.Targets(targets),
          new ClusterEvent.Collectors(collectors)), cluster.zones());
    }
  },
  /**
   * One zone loses half its collectors at once (a zonal outage, a bad rollout): the first zone
   * (by name) that has collectors loses every other one of them, in node order. Targets stay.
   */
  ZONE_HALF_LOST("a zone loses half its collectors") {
    @Override
    Plan plan(Cluster cluster, Random random) {
      String zone = null;
      for (Collector c : cluster.collectors()) {
        String z = cluster.zoneOf(c.node().orElse(null)).orElse(null);
        if (z != null && (zone == null || z.compareTo(zone) < 0)) {
          zone = z;
        }
      }
      if (zone == null) {
        return SCALE_IN.plan(cluster, random);
      }
      List<Collector> inZone = new ArrayList<>();
      for (Collector c : cluster.collectors()) {
        if (zone.equals(cluster.zoneOf(c.node().orElse(null)).orElse(null))) {
          inZone.add(c);
        }
      }
      inZone.sort(Comparator.comparing((Collector c) -> c.node().orElse(""))
          .thenComparing(Collector::name));
      Set<String> gone = new HashSet<>();
      for (int i = 1; i < inZone.size(); i += 2) {
        gone.add(inZone.get(i).name());
      }
      List<Collector> after = new ArrayList<>();
      for (Collector c : cluster.collectors()) {
        if (!gone.contains(c.name())) {
          after.add(c);
        }
      }
      return new Plan(List.of(new ClusterEvent.Collectors(after)), cluster.zones());
    }
  },
  /**
   * A sweep of single changes across collector counts: a tenth of the collectors (at least one,
   * at most 50) leave one at a time, drawn at random, then as many new ones join one at a time
   * (on the nodes the leavers had, with their capacities). Each step is judged against its own
   * minimum (what the leaver held; for a join, its capacity's share of the targets): the table's
   * "worst step" is the largest ratio.
   */
  SWEEP("sweep of single removals and additions") {
    @Override
    Plan plan(Cluster cluster, Random random) {
      List<Collector> current = new ArrayList<>(cluster.collectors());
      int k = Math.min(50, Math.max(1, current.size() / 10));
      if (current.size() < 2) {
        return SCALE_OUT.plan(cluster, random);
      }
      k = Math.min(k, current.size() - 1);
      Set<String> taken = names(current);
      List<ClusterEvent> steps = new ArrayList<>();
      List<Collector> gone = new ArrayList<>();
      for (int i = 0; i < k; i++) {
        gone.add(current.remove(random.nextInt(current.size())));
        steps.add(new ClusterEvent.Collectors(List.copyOf(current)));
      }
      for (Collector old : gone) {
        Collector joined = Collector.of(ClusterGenerator.newPodName(random, taken),
            old.node().orElse(null)).withCapacity(old.capacity());
        taken.add(joined.name());
        current.add(joined);
        steps.add(new ClusterEvent.Collectors(List.copyOf(current)));
      }
      return new Plan(steps, cluster.zones());
    }
  };

  private final String title;

  ClusterScenario(String title) {
    this.title = title;
  }

  /**
   * A human title.
   *
   * @return the title, e.g. "rolling restart"
   */
  public String title() {
    return title;
  }

  /**
   * The name used on the command line and in file names: the constant's name in lower case
   * with dashes.
   *
   * @return e.g. "rolling-restart"
   */
  public String id() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  abstract Plan plan(Cluster cluster, Random random);

  private static Set<String> names(List<Collector> collectors) {
    Set<String> names = new HashSet<>();
    for (Collector c : collectors) {
      names.add(c.name());
    }
    return names;
  }

  /**
   * A scenario's steps and the zones known at its end (a joining node brings its zone).
   *
   * @param steps the events, in order
   * @param zones node to zone after the scenario
   */
  record Plan(List<ClusterEvent> steps, Map<String, String> zones) {}
}
