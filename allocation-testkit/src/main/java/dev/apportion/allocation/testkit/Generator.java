package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Makes realistic allocator inputs and operation sequences from a seed.
 *
 * <h2>What it makes</h2>
 * <ul>
 *   <li><b>Clusters</b>: nodes {@code node-1 .. node-k}, each running zero, one or two collectors
 *       named like DaemonSet pods ({@code collector-x7k2p}), sometimes a collector with no node.
 *   <li><b>Targets</b> across jobs, in the forms Kubernetes service discovery gives them: pods
 *       ({@code __meta_kubernetes_pod_node_name}), nodes ({@code __meta_kubernetes_node_name}),
 *       endpoints ({@code __meta_kubernetes_endpoint_node_name}, sometimes absent), endpoint
 *       slices (target kind {@code Node}, or {@code Pod} with or without a pod node name), and
 *       static targets with no node. Some name a node that runs no collector or is not in the
 *       cluster.
 *   <li><b>Operation sequences</b>: targets added, removed, relabeled ({@code __meta_*} churn
 *       only: identity never changes), sent with stale duplicates in one call, replaced in bulk;
 *       collectors added, removed, replaced one by one (a rolling update), replaced all at once,
 *       surged (a second pod on a node, then the old one leaves), re-reported on another node,
 *       and an empty collector set (a blip). Openings vary: collectors first, targets first, a
 *       blip before any collector.
 * </ul>
 *
 * <p>Sizes vary with the seed: about half the scenarios are small (what shrinks and reads
 * easily), most of the rest medium, one in ten large (up to {@link #maxTargets(int)} targets).
 *
 * <h2>Reproducibility</h2>
 * Every choice is drawn from the seed with the kit's own SplitMix64, in a fixed order, over
 * lists and sorted maps only: the same seed and configuration give the same scenario on every
 * machine and JVM.
 *
 * <p>Immutable and thread-safe; configuration methods return a new generator. Generating
 * allocates the scenario and nothing else.
 *
 * @since 0.1.0
 */
public final class Generator {
  private static final String SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
  private static final String[] NAMESPACES = {"default", "monitoring", "shop"};
  private static final String[] SERVICES = {"api", "cart", "checkout", "web"};
  private static final String POD_NODE = "__meta_kubernetes_pod_node_name";
  private static final String NODE_NAME = "__meta_kubernetes_node_name";
  private static final String ENDPOINT_NODE = "__meta_kubernetes_endpoint_node_name";
  private static final String SLICE_KIND = "__meta_kubernetes_endpointslice_address_target_kind";
  private static final String SLICE_NAME = "__meta_kubernetes_endpointslice_address_target_name";
  private static final String REVISION = "__meta_kubernetes_pod_annotation_revision";

  private final int maxNodes;
  private final int maxTargets;
  private final int maxSteps;
  private final boolean nodeChurn;
  private final boolean costs;
  private final boolean zones;

  private Generator(int maxNodes, int maxTargets, int maxSteps, boolean nodeChurn,
      boolean costs, boolean zones) {
    this.maxNodes = maxNodes;
    this.maxTargets = maxTargets;
    this.maxSteps = maxSteps;
    this.nodeChurn = nodeChurn;
    this.costs = costs;
    this.zones = zones;
  }

  /**
   * The default generator: up to 12 nodes, 400 targets and 20 steps, with node churn.
   *
   * @return the generator
   */
  public static Generator defaults() {
    return new Generator(12, 400, 20, true, false, false);
  }

  /**
   * The most nodes a cluster has.
   *
   * @param max at least 1
   * @return a new generator
   * @throws IllegalArgumentException if {@code max} is below 1
   */
  public Generator maxNodes(int max) {
    return new Generator(atLeast(1, max, "nodes"), maxTargets, maxSteps,
        nodeChurn, costs, zones);
  }

  /**
   * The most targets a large scenario starts from.
   *
   * @param max at least 1
   * @return a new generator
   * @throws IllegalArgumentException if {@code max} is below 1
   */
  public Generator maxTargets(int max) {
    return new Generator(maxNodes, atLeast(1, max, "targets"), maxSteps,
        nodeChurn, costs, zones);
  }

  /**
   * The most operations after the opening.
   *
   * @param max at least 1
   * @return a new generator
   * @throws IllegalArgumentException if {@code max} is below 1
   */
  public Generator maxSteps(int max) {
    return new Generator(maxNodes, maxTargets, atLeast(1, max, "steps"),
        nodeChurn, costs, zones);
  }

  /**
   * Whether {@code __meta_*} churn may also change the labels a target's node is read from, so
   * that a target keeps its identity but reports another node. Kubernetes does not do this to a
   * pod (its node is fixed for its life), but an endpoint or a static target with the same
   * identity can be re-pointed, and {@code per-node} must follow it; on by default.
   *
   * @param enabled true to churn node labels too
   * @return a new generator
   */
  public Generator nodeChurn(boolean enabled) {
    return new Generator(maxNodes, maxTargets, maxSteps, enabled, costs, zones);
  }

  /**
   * Whether targets carry {@linkplain Target#cost() costs} and collectors {@linkplain
   * Collector#capacity() capacities}. Each new target draws a heavy-tailed cost (mostly 50 to
   * 5000, sometimes 0, rarely one costlier than a collector's whole share) that it keeps for
   * life, relabels included; each new collector draws a capacity of 1, 2 or 4. Costs held fixed,
   * a strategy that reads them must still be a function of the sets. Off by default; with it
   * off, every scenario is exactly what it was before the option existed.
   *
   * @param enabled true for costs and capacities
   * @return a new generator
   */
  public Generator costs(boolean enabled) {
    return new Generator(maxNodes, maxTargets, maxSteps, nodeChurn, enabled, zones);
  }

  /**
   * Whether collectors carry zones: a collector on a node is in that node's zone, one of three
   * ({@code zone-a}, {@code zone-b}, {@code zone-c}, a function of the node's name), so that
   * replicas have zones to spread over. A collector re-reported on another node keeps no zone
   * (the move changes its node only). Off by default; with it off, every scenario is exactly
   * what it was before the option existed.
   *
   * @param enabled true for zones
   * @return a new generator
   */
  public Generator zones(boolean enabled) {
    return new Generator(maxNodes, maxTargets, maxSteps, nodeChurn, costs, enabled);
  }

  /** The zone of {@code node} when zones are on: one of three, by the node's name. */
  static String zoneOf(String node) {
    int sum = 0;
    for (int i = 0; i < node.length(); i++) {
      sum += node.charAt(i);
    }
    return "zone-" + (char) ('a' + sum % 3);
  }

  private static int atLeast(int min, int value, String what) {
    if (value < min) {
      throw new IllegalArgumentException("max " + what + " must be at least " + min + ": "
          + value);
    }
    return value;
  }

  /**
   * A cluster's collectors, as {@link #scenario(long)} would start from for this seed.
   *
   * @param seed the seed
   * @return a new list, in node order
   */
  public List<Collector> collectors(long seed) {
    return new Run(new SplitMix64(seed)).sized().cluster.collectors;
  }

  /**
   * Targets on a cluster, as {@link #scenario(long)} would start from for this seed.
   *
   * @param seed the seed
   * @return a new list
   */
  public List<Target> targets(long seed) {
    Run run = new Run(new SplitMix64(seed)).sized();
    List<Target> out = new ArrayList<>();
    for (int i = 0; i < run.targetCount; i++) {
      out.add(run.newTarget());
    }
    return out;
  }

  /**
   * A scenario: an opening that brings in a cluster and its targets, then operations.
   *
   * @param seed the seed
   * @return the scenario; its {@link Scenario#seed()} is {@code seed}
   */
  public Scenario scenario(long seed) {
    return new Run(new SplitMix64(seed)).sized().scenario(seed);
  }

  /** The cluster a scenario starts from. */
  private static final class Cluster {
    final List<String> nodes = new ArrayList<>();
    final List<Collector> collectors = new ArrayList<>();
  }

  /** One generation: the random source, the size drawn for it, and the names used so far. */
  private final class Run {
    final SplitMix64 r;
    final TreeSet<String> collectorNames = new TreeSet<>();
    Cluster cluster;
    int targetCount;
    int steps;
    int serial;
    int revision;
    int extraNodes;

    Run(SplitMix64 r) {
      this.r = r;
    }

    Run sized() {
      int kind = r.nextInt(10);
      int nodes;
      if (kind < 5) {
        nodes = r.between(1, Math.min(4, maxNodes));
        targetCount = r.between(0, Math.min(24, maxTargets));
        steps = r.between(Math.min(3, maxSteps), Math.min(10, maxSteps));
      } else if (kind < 9) {
        nodes = r.between(1, Math.min(10, maxNodes));
        targetCount = r.between(0, Math.min(120, maxTargets));
        steps = r.between(Math.min(5, maxSteps), maxSteps);
      } else {
        nodes = r.between(1, maxNodes);
        targetCount = r.between(maxTargets / 2, maxTargets);
        int fewest = Math.min(3, maxSteps);
        steps = r.between(fewest, Math.max(fewest, maxSteps / 2));
      }
      cluster = cluster(nodes);
      return this;
    }

    Cluster cluster(int nodes) {
      Cluster c = new Cluster();
      for (int i = 1; i <= nodes; i++) {
        String node = "node-" + i;
        c.nodes.add(node);
        int p = r.nextInt(10);
        int count = p < 2 ? 0 : p < 8 ? 1 : 2;
        for (int k = 0; k < count; k++) {
          c.collectors.add(collector(newCollectorName(), node));
        }
      }
      if (r.chance(0.1)) {
        c.collectors.add(collector(newCollectorName(), null));
      }
      return c;
    }

    /** A new collector; with costs, of capacity 1, 2 or 4. */
    Collector collector(String name, String node) {
      Collector c = zones && node != null ? Collector.of(name, node, zoneOf(node))
          : Collector.of(name, node);
      return costs ? c.withCapacity(1 << r.nextInt(3)) : c;
    }

    String newCollectorName() {
      while (true) {
        StringBuilder sb = new StringBuilder("collector-");
        for (int i = 0; i < 5; i++) {
          sb.append(SUFFIX_ALPHABET.charAt(r.nextInt(SUFFIX_ALPHABET.length())));
        }
        if (collectorNames.add(sb.toString())) {
          return sb.toString();
        }
      }
    }

    String someNode() {
      int p = r.nextInt(10);
      if (p < 9 || cluster.nodes.isEmpty()) {
        return cluster.nodes.isEmpty() ? "node-1" : cluster.nodes.get(r.nextInt(
            cluster.nodes.size()));
      }
      return "node-gone-" + r.between(1, 3);
    }

    String ip(int n) {
      return "10." + (1 + n / 62500) + "." + (n / 250 % 250) + "." + (n % 250);
    }

    /** A new target; with costs, carrying one for life. */
    Target newTarget() {
      Target t = newUncostedTarget();
      if (!costs) {
        return t;
      }
      int p = r.nextInt(100);
      if (p < 2) {
        return t.withCost(0);
      }
      if (p < 3) {
        return t.withCost(1_000_000);
      }
      // Pareto, shape 1.2, from 50 to 5000: a few targets carry much of the cost.
      double u = (r.nextLong() >>> 11) * 0x1.0p-53;
      return t.withCost(Math.min(5000, (long) Math.floor(50 / Math.pow(1 - u, 1 / 1.2))));
    }

    Target newUncostedTarget() {
      int n = serial++;
      int form = r.nextInt(20);
      Map<String, String> labels = new TreeMap<>();
      String node = someNode();
      if (form < 9) {
        String ns = NAMESPACES[r.nextInt(NAMESPACES.length)];
        String pod = "app-" + n;
        labels.put("__meta_kubernetes_namespace", ns);
        labels.put("__meta_kubernetes_pod_name", pod);
        labels.put(POD_NODE, node);
        labels.put("__meta_kubernetes_pod_ready", "true");
        labels.put("namespace", ns);
        labels.put("pod", pod);
        return Target.of("kubernetes-pods", ip(n) + ":" + (r.chance(0.5) ? 8080 : 9090),
            labels);
      }
      if (form < 11) {
        labels.put(NODE_NAME, node);
        labels.put("instance", node + "-" + n);
        return Target.of("kubernetes-nodes", "10.250." + (n / 250 % 250) + "." + (n % 250)
            + ":10250", labels);
      }
      String svc = SERVICES[r.nextInt(SERVICES.length)];
      if (form < 15) {
        labels.put("__meta_kubernetes_service_name", svc);
        labels.put("__meta_kubernetes_endpoint_ready", "true");
        if (r.chance(0.8)) {
          labels.put(ENDPOINT_NODE, node);
        }
        labels.put("service", svc);
        return Target.of("kubernetes-service-endpoints", ip(n) + ":8443", labels);
      }
      if (form < 18) {
        labels.put("__meta_kubernetes_endpointslice_name", svc + "-slice");
        int kind = r.nextInt(3);
        if (kind == 0) {
          labels.put(SLICE_KIND, "Node");
          labels.put(SLICE_NAME, node);
        } else {
          labels.put(SLICE_KIND, "Pod");
          labels.put(SLICE_NAME, "app-" + n);
          if (kind == 1) {
            labels.put(POD_NODE, node);
          }
        }
        labels.put("service", svc);
        return Target.of("kubernetes-endpointslices", ip(n) + ":9443", labels);
      }
      if (r.chance(0.5)) {
        labels.put("__meta_filepath", "/etc/prometheus/file_sd/static.json");
      }
      labels.put("env", r.chance(0.5) ? "prod" : "staging");
      return Target.of("static", "host-" + n + ".example.com:9100", labels);
    }

    /** The same target with other {@code __meta_*} labels (and, with node churn, another node). */
    Target relabel(Target t) {
      Map<String, String> labels = new TreeMap<>(t.labels());
      revision++;
      labels.put(REVISION, "r" + revision);
      labels.computeIfPresent("__meta_kubernetes_pod_ready",
          (k, v) -> "true".equals(v) ? "false" : "true");
      if (nodeChurn && t.node().isPresent() && r.chance(0.3)) {
        String other = someNode();
        for (String name : new String[] {POD_NODE, NODE_NAME, ENDPOINT_NODE, SLICE_NAME}) {
          if (labels.containsKey(name)) {
            labels.put(name, other);
            break;
          }
        }
      }
      Target relabeled = Target.of(t.job(), t.address(), labels);
      return t.cost() == 1 ? relabeled : relabeled.withCost(t.cost());
    }

    <T> List<T> pick(List<T> from, int max) {
      List<T> pool = new ArrayList<>(from);
      List<T> out = new ArrayList<>();
      int n = Math.min(pool.size(), r.between(1, Math.max(1, max)));
      for (int i = 0; i < n; i++) {
        out.add(pool.remove(r.nextInt(pool.size())));
      }
      return out;
    }

    Scenario scenario(long seed) {
      List<Step> out = new ArrayList<>();
      Inputs[] in = {Inputs.EMPTY};
      Consumer<Step> emit = s -> {
        out.add(s);
        in[0] = s.apply(in[0]);
      };
      int initial = targetCount * 7 / 10;
      List<Target> first = new ArrayList<>();
      for (int i = 0; i < initial; i++) {
        first.add(newTarget());
      }
      int opening = r.nextInt(20);
      if (opening < 11) {
        emit.accept(new Step.AddCollectors(cluster.collectors));
        emit.accept(new Step.AddTargets(first));
      } else if (opening < 16) {
        emit.accept(new Step.AddTargets(first));
        emit.accept(new Step.AddCollectors(cluster.collectors));
      } else if (opening < 18) {
        emit.accept(new Step.AddTargets(first));
        emit.accept(new Step.SetCollectors(List.of()));
        emit.accept(new Step.AddCollectors(cluster.collectors));
      } else {
        emit.accept(new Step.AddCollectors(cluster.collectors));
        int half = first.size() / 2;
        emit.accept(new Step.AddTargets(first.subList(0, half)));
        emit.accept(new Step.AddTargets(first.subList(half, first.size())));
      }
      int batch = Math.max(1, targetCount / 8);
      for (int i = 0; i < steps; i++) {
        operation(in[0], batch, emit);
      }
      return Scenario.of(seed).withSteps(out);
    }

    void operation(Inputs in, int batch, Consumer<Step> emit) {
      List<Target> known = in.targets();
      List<Collector> declared = in.declared();
      int op = r.nextInt(100);
      if (op < 12 || (known.isEmpty() && op < 40)) {
        List<Target> add = new ArrayList<>();
        for (int i = r.between(1, batch); i > 0; i--) {
          add.add(newTarget());
        }
        emit.accept(new Step.AddTargets(add));
      } else if (op < 40 && !known.isEmpty()) {
        if (op < 22) {
          emit.accept(new Step.RemoveTargets(pick(known, batch)));
        } else if (op < 32) {
          List<Target> relabeled = new ArrayList<>();
          for (Target t : pick(known, Math.max(1, known.size() / 4))) {
            relabeled.add(relabel(t));
          }
          emit.accept(new Step.RelabelTargets(relabeled));
        } else if (op < 37) {
          List<Target> stale = new ArrayList<>();
          for (Target t : pick(known, 3)) {
            stale.add(relabel(t));
          }
          emit.accept(new Step.SendDuplicates(stale));
        } else {
          List<Target> next = new ArrayList<>();
          for (Target t : known) {
            if (r.chance(0.5)) {
              next.add(t);
            }
          }
          for (int i = r.between(0, batch); i > 0; i--) {
            next.add(newTarget());
          }
          emit.accept(new Step.SetTargets(next));
        }
      } else if (op < 52 || declared.isEmpty()) {
        List<Collector> add = new ArrayList<>();
        for (int i = r.chance(0.8) ? 1 : 2; i > 0; i--) {
          add.add(collector(newCollectorName(), collectorNode(declared)));
        }
        emit.accept(new Step.AddCollectors(add));
      } else if (op < 64) {
        List<String> names = new ArrayList<>();
        for (Collector c : pick(declared, r.chance(0.8) ? 1 : 2)) {
          names.add(c.name());
        }
        emit.accept(new Step.RemoveCollectors(names));
      } else if (op < 73) {
        Collector old = declared.get(r.nextInt(declared.size()));
        emit.accept(new Step.ReplaceCollector(old.name(),
            collector(newCollectorName(), old.node().orElse(null))));
      } else if (op < 82) {
        Collector old = declared.get(r.nextInt(declared.size()));
        emit.accept(new Step.AddCollectors(List.of(
            collector(newCollectorName(), old.node().orElse(null)))));
        emit.accept(new Step.RemoveCollectors(List.of(old.name())));
      } else if (op < 88) {
        Collector c = declared.get(r.nextInt(declared.size()));
        String node = r.chance(0.1) ? null : someNode();
        emit.accept(new Step.MoveCollector(c.name(), node));
      } else if (op < 95) {
        emit.accept(new Step.SetCollectors(List.of()));
        if (r.chance(0.5)) {
          emit.accept(new Step.SetCollectors(declared));
        }
      } else {
        List<Collector> all = new ArrayList<>();
        for (Collector c : declared) {
          all.add(collector(newCollectorName(), c.node().orElse(null)));
        }
        emit.accept(new Step.SetCollectors(all));
      }
    }

    /** Where a new collector runs: often a node without one, sometimes a new node or none. */
    String collectorNode(List<Collector> declared) {
      int p = r.nextInt(10);
      if (p < 4) {
        TreeSet<String> free = new TreeSet<>(cluster.nodes);
        for (Collector c : declared) {
          c.node().ifPresent(free::remove);
        }
        if (!free.isEmpty()) {
          return new ArrayList<>(free).get(r.nextInt(free.size()));
        }
      }
      if (p < 8) {
        return someNode();
      }
      if (p < 9) {
        extraNodes++;
        String node = "node-" + (cluster.nodes.size() + extraNodes);
        cluster.nodes.add(node);
        return node;
      }
      return null;
    }
  }
}
