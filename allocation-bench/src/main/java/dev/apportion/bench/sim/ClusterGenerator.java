package dev.apportion.bench.sim;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Builds a synthetic Kubernetes cluster from a {@link Shape} and a seed: the same shape and seed
 * give the same cluster, byte for byte, on every machine.
 *
 * <p>The cluster is what a DaemonSet of collectors sees: {@code nodes} nodes spread round-robin
 * over {@code zones} zones, one collector pod per node with a DaemonSet-style name (a fixed
 * prefix and five random characters, so a replacement pod sorts before or after its predecessor
 * at random, as in a real rollout), and {@code targets} pod targets. Pods are spread over the
 * nodes unevenly (each node gets a random density from 0.5 to 1.5, as real nodes differ) and over
 * {@code jobs} jobs; a share of the targets names no node (probes, external endpoints), which is
 * what a {@code per-node} allocator must hand to its fallback.
 */
public final class ClusterGenerator {
  /** The prefix of every generated collector pod name. */
  public static final String POD_PREFIX = "otel-collector-";
  /** The label the generated pod targets carry their node in. */
  public static final String NODE_LABEL = "__meta_kubernetes_pod_node_name";

  private static final char[] POD_SUFFIX_CHARS = "bcdfghjklmnpqrstvwxz2456789".toCharArray();

  private ClusterGenerator() {}

  /**
   * What to generate.
   *
   * @param zones how many zones, at least 1
   * @param nodes how many nodes (and collectors), at least 1
   * @param targets how many targets, at least 0
   * @param jobs how many scrape jobs the pod targets spread over, at least 1
   * @param nodelessShare the share of targets that name no node, from 0 to 1
   */
  public record Shape(int zones, int nodes, int targets, int jobs, double nodelessShare) {
    /** The default cluster: 3 zones, 60 nodes, 30k targets over 12 jobs, 3% with no node. */
    public static final Shape DEFAULT = new Shape(3, 60, 30_000, 12, 0.03);

    /**
     * Checks the ranges.
     *
     * @throws IllegalArgumentException if a number is out of range; the message names it and
     *     its value
     */
    public Shape {
      // Not `this` in the messages: a compact constructor's fields are still unassigned here.
      if (zones < 1) {
        throw new IllegalArgumentException("zones must be at least 1: " + zones);
      }
      if (nodes < 1) {
        throw new IllegalArgumentException("nodes must be at least 1: " + nodes);
      }
      if (targets < 0) {
        throw new IllegalArgumentException("targets must be at least 0: " + targets);
      }
      if (jobs < 1) {
        throw new IllegalArgumentException("jobs must be at least 1: " + jobs);
      }
      if (!(nodelessShare >= 0 && nodelessShare <= 1)) {
        throw new IllegalArgumentException("nodelessShare must be from 0 to 1: " + nodelessShare);
      }
    }
  }

  /**
   * Generates a cluster.
   *
   * @param shape what to generate
   * @param seed the random seed
   * @return the cluster
   */
  public static Cluster generate(Shape shape, long seed) {
    Random random = new Random(seed);
    int width = Integer.toString(shape.nodes() - 1).length();
    String[] nodes = new String[shape.nodes()];
    Map<String, String> zones = new LinkedHashMap<>();
    List<Collector> collectors = new ArrayList<>(shape.nodes());
    Set<String> names = new HashSet<>();
    for (int i = 0; i < nodes.length; i++) {
      nodes[i] = String.format("node-%0" + width + "d", i);
      zones.put(nodes[i], zone(i % shape.zones()));
      collectors.add(Collector.of(newPodName(random, names), nodes[i]));
    }
    double[] cumulative = new double[nodes.length];
    double sum = 0;
    for (int i = 0; i < nodes.length; i++) {
      sum += 0.5 + random.nextDouble();
      cumulative[i] = sum;
    }
    int nodeless = (int) Math.round(shape.targets() * shape.nodelessShare());
    List<Target> targets = new ArrayList<>(shape.targets());
    for (int i = 0; i < shape.targets() - nodeless; i++) {
      double pick = random.nextDouble() * sum;
      int n = Arrays.binarySearch(cumulative, pick);
      String node = nodes[Math.min(nodes.length - 1, n < 0 ? -n - 1 : n)];
      String job = String.format("app-%02d", random.nextInt(shape.jobs()));
      targets.add(Target.of(job, ip(i) + ":8080", Map.of(
          NODE_LABEL, node,
          "__meta_kubernetes_namespace", "ns-" + job,
          "__meta_kubernetes_pod_name", job + "-" + i)));
    }
    for (int i = 0; i < nodeless; i++) {
      targets.add(Target.of("blackbox", "https://probe-" + i + ".example.com/healthz"));
    }
    return new Cluster(zones, collectors, targets);
  }

  /**
   * The name of zone {@code i}: {@code zone-a}, {@code zone-b}, ...
   *
   * @param i the zone's index
   * @return its name
   */
  public static String zone(int i) {
    return i < 26 ? "zone-" + (char) ('a' + i) : "zone-" + i;
  }

  /**
   * A new DaemonSet-style pod name not in {@code taken}, which it is added to.
   *
   * @param random the source of the suffix
   * @param taken names already used
   * @return the name
   */
  public static String newPodName(Random random, Set<String> taken) {
    while (true) {
      char[] suffix = new char[5];
      for (int i = 0; i < suffix.length; i++) {
        suffix[i] = POD_SUFFIX_CHARS[random.nextInt(POD_SUFFIX_CHARS.length)];
      }
      String name = POD_PREFIX + new String(suffix);
      if (taken.add(name)) {
        return name;
      }
    }
  }

  private static String ip(int i) {
    return "10." + ((i >>> 16) & 0xFF) + "." + ((i >>> 8) & 0xFF) + "." + (i & 0xFF);
  }
}
