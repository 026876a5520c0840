package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRings;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The engine's mutable record of one collector: what it holds and how much. Owned by the writer
 * (touched only under the engine's lock); readers never see it. One object per collector name
 * lives as long as that name stays in the collector set, across node changes.
 */
public final class Member {
  private final String name;
  private final long hash;
  private Collector collector;
  private int index;
  final Set<Target> targets = new HashSet<>();
  private final Map<String, int[]> jobLoads = new HashMap<>();

  Member(Collector collector) {
    this.name = collector.name();
    this.hash = HashRings.memberHash(name);
    this.collector = collector;
  }

  /** The collector's name. @return the name */
  public String name() {
    return name;
  }

  /** The node, or null. @return the node */
  public String node() {
    return collector.node().orElse(null);
  }

  /** {@link HashRings#memberHash} of the name, computed once. @return the hash */
  public long hash() {
    return hash;
  }

  /** The collector value as last reported. @return the collector */
  public Collector collector() {
    return collector;
  }

  void collector(Collector c) {
    this.collector = c;
  }

  /** Position in the current {@link Members}, name order. @return the index */
  public int index() {
    return index;
  }

  void index(int i) {
    this.index = i;
  }

  /** How many targets it holds. @return the count */
  public int load() {
    return targets.size();
  }

  /**
   * How many targets of {@code job} it holds.
   *
   * @param job a job
   * @return the count
   */
  public int jobLoad(String job) {
    int[] c = jobLoads.get(job);
    return c == null ? 0 : c[0];
  }

  void add(Target t) {
    targets.add(t);
    jobLoads.computeIfAbsent(t.job(), j -> new int[1])[0]++;
  }

  void remove(Target t) {
    targets.remove(t);
    int[] c = jobLoads.get(t.job());
    if (--c[0] == 0) {
      jobLoads.remove(t.job());
    }
  }

  @Override
  public String toString() {
    return collector.toString();
  }
}
