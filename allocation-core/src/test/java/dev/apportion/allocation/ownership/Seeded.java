package dev.apportion.allocation.ownership;

import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;

/** Seeded member lists and target sets, so that every failure names the seed that found it. */
final class Seeded {
  private Seeded() {}

  /** {@code n} distinct member names in the shapes replicas call themselves: pod IPs and names. */
  static List<String> members(SplittableRandom rng, int n) {
    Set<String> out = new LinkedHashSet<>();
    while (out.size() < n) {
      if (rng.nextBoolean()) {
        out.add("10." + rng.nextInt(256) + "." + rng.nextInt(256) + "." + rng.nextInt(256));
      } else {
        out.add("alloy-" + Long.toString(rng.nextLong() >>> 1, 36).substring(0, 5));
      }
    }
    return new ArrayList<>(out);
  }

  /** Weights from 0.25 to 4 for {@code members}. */
  static Map<String, Double> weights(SplittableRandom rng, List<String> members) {
    Map<String, Double> out = new TreeMap<>();
    for (String m : members) {
      out.put(m, 0.25 + rng.nextInt(16) * 0.25);
    }
    return out;
  }

  /** {@code n} distinct targets over a few jobs, with identity and {@code __meta_} labels. */
  static List<Target> targets(SplittableRandom rng, int n) {
    Set<Target> out = new LinkedHashSet<>();
    while (out.size() < n) {
      Map<String, String> labels = new TreeMap<>();
      labels.put("namespace", "ns-" + rng.nextInt(7));
      if (rng.nextBoolean()) {
        labels.put("pod", "pod-" + rng.nextInt(1 << 20));
      }
      labels.put("__meta_kubernetes_pod_node_name", "node-" + rng.nextInt(50));
      out.add(Target.of("job-" + rng.nextInt(5),
          "10." + rng.nextInt(256) + "." + rng.nextInt(256) + "." + rng.nextInt(256) + ":"
              + (8000 + rng.nextInt(2000)),
          labels));
    }
    return new ArrayList<>(out);
  }

  /** One fail-safe view per member, each with the same list. */
  static List<Ownership> replicas(List<String> members, TargetKey key) {
    List<Ownership> out = new ArrayList<>();
    for (String m : members) {
      out.add(Ownership.builder(m).key(key).build(members));
    }
    return out;
  }

  /** How many of {@code views} own {@code t}. */
  static int owners(List<Ownership> views, Target t) {
    int n = 0;
    for (Ownership v : views) {
      if (v.owns(t)) {
        n++;
      }
    }
    return n;
  }
}
