package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.ring.HashRings;
import java.util.Arrays;

/**
 * The engine's mutable record of one collector: its stable id, its position in the current
 * name-ordered set, its capacity and limits, and how much it holds (targets in all and per job,
 * and their total cost). Owned by the writer (touched only
 * under the engine's lock); readers never see it. One object per collector name lives as long as
 * that name stays in the collector set, across node changes.
 */
public final class Member {
  private final String name;
  private final long hash;
  private final int nameHash;
  private final int id;
  private Collector collector;
  /** The collector's node, or null: read on every per-node winner search, kept unboxed. */
  private String node;
  /** The collector's zone, or null: read once a value, not through an Optional a pass. */
  private String zone;
  /** The collector's capacity, read once a value. */
  private double capacity;
  private int index;
  private int load;
  /** Sum of the costs ({@link Assignment#cost}) of the targets it holds. */
  private long cost;
  /** The most targets it may hold: {@link Integer#MAX_VALUE} when unlimited. */
  private int targetLimit = Integer.MAX_VALUE;
  /** The most cost it may hold: {@link Long#MAX_VALUE} when unlimited. */
  private long costLimit = Long.MAX_VALUE;
  /** Targets held per job id; grown on demand. */
  private int[] jobLoads = new int[0];

  public Member(Collector collector, int id) {
    this.name = collector.name();
    this.hash = HashRings.memberHash(name);
    this.nameHash = name.hashCode();
    this.collector = collector;
    this.node = collector.node().orElse(null);
    this.zone = collector.zone().orElse(null);
    this.capacity = collector.capacity();
    this.id = id;
  }

  /** The collector's name. @return the name */
  public String name() {
    return name;
  }

  /** The node, or null. @return the node */
  public String node() {
    return node;
  }

  /** The collector's zone, or null. @return the zone */
  String zone() {
    return zone;
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
    this.node = c.node().orElse(null);
    this.zone = c.zone().orElse(null);
    this.capacity = c.capacity();
  }

  /**
   * The collector's capacity ({@link Collector#capacity()}): a finite number &gt; 0, 1 unless
   * the caller set it. Strategies balance {@link #cost()} / capacity.
   *
   * @return the capacity
   */
  public double capacity() {
    return capacity;
  }

  /**
   * Total cost of the targets it holds: the sum of {@link Assignment#cost} over them, kept up to
   * date by the engine as targets are placed, dropped or change cost.
   *
   * @return the sum
   */
  public long cost() {
    return cost;
  }

  /**
   * The most targets the per-collector limit lets it hold ({@code floor(maxTargets * capacity)},
   * at least 1), or {@link Integer#MAX_VALUE} when there is no limit. The engine enforces it
   * after the placer ran; a placer may use it to avoid proposing to a full member.
   *
   * @return the limit
   */
  public int targetLimit() {
    return targetLimit;
  }

  /**
   * The most cost the per-collector limit lets it hold ({@code floor(maxCost * capacity)}), or
   * {@link Long#MAX_VALUE} when there is no limit. Enforced like {@link #targetLimit()}.
   *
   * @return the limit
   */
  public long costLimit() {
    return costLimit;
  }

  /**
   * Whether one more target of {@code targetCost} fits under both limits. An empty member always
   * takes a target (a target costlier than every limit is placed alone rather than nowhere).
   *
   * @param targetCost the target's cost
   * @return true when it fits
   */
  public boolean fits(long targetCost) {
    return load == 0 || (load < targetLimit && cost <= costLimit - targetCost);
  }

  public void limits(int targetLimit, long costLimit) {
    this.targetLimit = targetLimit;
    this.costLimit = costLimit;
  }

  /** Position in the current {@link Members}, name order. @return the index */
  public int index() {
    return index;
  }

  /**
   * {@code name().hashCode()}, computed once: what {@link NameIndex} is built from.
   *
   * @return the name's hash
   */
  int nameHash() {
    return nameHash;
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

  void add(int job, long targetCost) {
    load++;
    cost += targetCost;
    if (job >= jobLoads.length) {
      jobLoads = Arrays.copyOf(jobLoads, Math.max(job + 1, jobLoads.length * 2));
    }
    jobLoads[job]++;
  }

  void recost(long delta) {
    cost += delta;
  }

  void remove(int job, long targetCost) {
    load--;
    cost -= targetCost;
    jobLoads[job]--;
  }

  @Override
  public String toString() {
    return collector.toString();
  }
}
