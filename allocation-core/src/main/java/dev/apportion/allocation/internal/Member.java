package dev.apportion.allocation.internal;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.ring.HashRings;
import java.util.Arrays;

/**
 * The engine's mutable record of one collector: its stable id, its position in the current
 * name-ordered set, and how much it holds (in all, and per job). Owned by the writer (touched only
 * under the engine's lock); readers never see it. One object per collector name lives as long as
 * that name stays in the collector set, across node changes.
 */
final class Member {
  private final String name;
  private final long hash;
  private final int id;
  private Collector collector;
  private int index;
  private int load;
  /** Targets held per job id; grown on demand. */
  private int[] jobLoads = new int[0];

  Member(Collector collector, int id) {
    this.name = collector.name();
    this.hash = HashRings.memberHash(name);
    this.collector = collector;
    this.id = id;
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

  /**
   * A small number, unique among the live members and stable while this member lives (an owner
   * is stored as this number); a departed member's id is reused by a later one.
   *
   * @return the id
   */
  public int id() {
    return id;
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
    return load;
  }

  /**
   * How many targets of a job it holds.
   *
   * @param job a job id ({@link Slots#job})
   * @return the count
   */
  public int jobLoad(int job) {
    return job < jobLoads.length ? jobLoads[job] : 0;
  }

  void add(int job) {
    load++;
    if (job >= jobLoads.length) {
      jobLoads = Arrays.copyOf(jobLoads, Math.max(job + 1, jobLoads.length * 2));
    }
    jobLoads[job]++;
  }

  void remove(int job) {
    load--;
    jobLoads[job]--;
  }

  @Override
  public String toString() {
    return collector.toString();
  }
}
