package dev.apportion.bench.jmh;

import dev.apportion.bench.sim.Cluster;
import dev.apportion.bench.sim.ClusterGenerator;
import java.util.Map;
import java.util.TreeMap;

/** The clusters the benchmarks run on: generated, seeded, the same on every run. */
final class Shapes {
  /** The seed of every benchmark cluster. */
  static final long SEED = 42;

  private Shapes() {}

  /**
   * A DaemonSet-shaped cluster: {@code collectors} nodes in 3 zones, one collector each, and
   * {@code targets} targets over 12 jobs, 3% of them with no node.
   */
  static Cluster cluster(int targets, int collectors) {
    return ClusterGenerator.generate(
        new ClusterGenerator.Shape(3, collectors, targets, 12, 0.03), SEED);
  }

  /** The node a benchmark's joining collector runs on; no target is on it. */
  static final String JOINED_NODE = "node-joined";

  /**
   * The cluster's node-to-zone topology, with {@link #JOINED_NODE} in the first zone: what a
   * deployment on a zoned cluster supplies ({@code setNodeZones}).
   */
  static Map<String, String> zonesWithJoined(Cluster cluster) {
    Map<String, String> zones = new TreeMap<>(cluster.zones());
    zones.put(JOINED_NODE, ClusterGenerator.zone(0));
    return zones;
  }
}
