package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRings;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Decides every target's further replicas from what each rank's allocator chose for it: a choice
 * stands when it is a collector the target's earlier replicas are not on and in the best tier the
 * collectors offer it (see {@link ReplicaRule}); otherwise the replica goes to the collector of that tier
 * with the highest weighted rendezvous score for (target, rank) that is under its load cap, and,
 * when every such collector is full, to the best one under its limit. Choices that stand are
 * counted first; the rest are decided in identity-hash order, so the result is a function of the
 * targets, the collectors and the ranks' choices, never of history or input order. Not
 * thread-safe: the allocator's writer owns one.
 */
final class ReplicaPlacement {
  /** Spreads the ranks' rendezvous keys apart (the golden ratio's 64-bit odd constant). */
  private static final long RANK_GAMMA = 0x9E3779B97F4A7C15L;

  private final int k;
  private final ReplicaRule rule;
  private final double loadFactor;
  private final int maxTargets;
  private final long maxCost;
  /** The best tier on offer, by the owners (and target zone) it depends on; reset per change. */
  private final Map<Long, Integer> bestTiers = new HashMap<>();

  /**
   * @param k replicas per target
   * @param rule the tier rule
   * @param loadFactor how far above its capacity's share a collector may go before a replica that
   *     must move skips it
   * @param maxTargets the most targets (all replicas) a collector of capacity 1 may hold; 0 for no
   *     limit
   * @param maxCost the most cost (all replicas) a collector of capacity 1 may hold; 0 for no limit
   */
  ReplicaPlacement(int k, ReplicaRule rule, double loadFactor, int maxTargets, long maxCost) {
    this.k = k;
    this.rule = rule;
    this.loadFactor = loadFactor;
    this.maxTargets = maxTargets;
    this.maxCost = maxCost;
  }

  /** The owners of every target, by rank, and what each collector holds. */
  static final class Result {
    /** The owners by rank, then target index: collector ids, -1 for none. */
    final int[][] owners;
    /** How many replicas each collector holds. */
    final int[] counts;
    /** The cost of the replicas each collector holds. */
    final long[] costs;

    Result(int[][] owners, int[] counts, long[] costs) {
      this.owners = owners;
      this.counts = counts;
      this.costs = costs;
    }
  }

  /**
   * Decides the owners of every target.
   *
   * @param targets the targets, by index
   * @param choice each rank's choice for each target (a collector id, or -1); rank 0's is final
   * @param topology the collectors
   * @return the owners by rank (rank 0 a copy of its choices), and each collector's count and cost
   */
  Result place(Target[] targets, int[][] choice, Topology topology) {
    bestTiers.clear();
    int n = targets.length;
    int collectors = topology.size();
    int[][] owners = new int[k][];
    int[] counts = new int[collectors];
    long[] costs = new long[collectors];
    owners[0] = choice[0].clone();
    for (int i = 0; i < n; i++) {
      int c = owners[0][i];
      if (c >= 0) {
        counts[c]++;
        costs[c] += targets[i].cost();
      }
    }
    int[] softCap = softCaps(n, topology);
    int[] zones = rule == ReplicaRule.TARGET_ZONE ? targetZones(targets, topology) : null;
    for (int r = 1; r < k; r++) {
      int[] o = new int[n];
      int[] pending = new int[16];
      int misses = 0;
      for (int i = 0; i < n; i++) {
        int c = choice[r][i];
        if (c >= 0 && stands(c, i, r, owners, zones, topology)) {
          o[i] = c;
          counts[c]++;
          costs[c] += targets[i].cost();
        } else {
          o[i] = -1;
          if (misses == pending.length) {
            pending = Arrays.copyOf(pending, misses * 2);
          }
          pending[misses++] = i;
        }
      }
      owners[r] = o;
      for (int i : inIdentityOrder(pending, misses, targets)) {
        int c = elsewhere(targets[i], i, r, owners, zones, topology, counts, costs, softCap);
        o[i] = c;
        if (c >= 0) {
          counts[c]++;
          costs[c] += targets[i].cost();
        }
      }
    }
    return new Result(owners, counts, costs);
  }

  /** The load cap of each collector: the load factor times its capacity's share of all replicas. */
  private int[] softCaps(int n, Topology topology) {
    int collectors = topology.size();
    int[] caps = new int[collectors];
    long replicas = (long) n * Math.min(k, collectors);
    for (int c = 0; c < collectors; c++) {
      double share = topology.capacity(c) / topology.totalCapacity();
      caps[c] = (int) Math.min(Integer.MAX_VALUE, Math.ceil(loadFactor * replicas * share));
    }
    return caps;
  }

  /** Whether {@code c} can take one more replica of cost {@code cost} within the limits. */
  private boolean withinLimits(int c, long cost, int[] counts, long[] costs, Topology topology) {
    double capacity = topology.capacity(c);
    if (maxTargets > 0 && counts[c] >= Math.max(1, (long) Math.floor(maxTargets * capacity))) {
      return false;
    }
    // As the engine's limit: a target costlier than every limit fits only on an empty collector.
    return maxCost == 0 || counts[c] == 0
        || costs[c] + cost <= Math.max(1, (long) Math.floor(maxCost * capacity));
  }

  private static int[] targetZones(Target[] targets, Topology topology) {
    int[] zones = new int[targets.length];
    for (int i = 0; i < targets.length; i++) {
      zones[i] = topology.zoneOf(targets[i]);
    }
    return zones;
  }

  /** Whether rank {@code r}'s own choice {@code c} for target {@code i} stands. */
  private boolean stands(int c, int i, int r, int[][] owners, int[] zones, Topology topology) {
    int tier = tier(c, i, r, owners, zones, topology);
    return tier == 1 || (tier > 0 && tier <= bestTier(i, r, owners, zones, topology));
  }

  /** The tier of collector {@code c} for target {@code i}'s replica {@code r}; 0 if it holds one. */
  private int tier(int c, int i, int r, int[][] owners, int[] zones, Topology topology) {
    int node = topology.node(c);
    int zone = topology.zone(c);
    boolean otherNode = true;
    boolean otherZone = true;
    for (int q = 0; q < r; q++) {
      int o = owners[q][i];
      if (o == c) {
        return 0;
      }
      if (o >= 0) {
        otherNode &= node < 0 || topology.node(o) != node;
        otherZone &= zone < 0 || topology.zone(o) != zone;
      }
    }
    if (!otherNode) {
      return 3;
    }
    boolean zoneFits = rule == ReplicaRule.DISTINCT ? otherZone : zone >= 0 && zone == zones[i];
    return zoneFits ? 1 : 2;
  }

  /** The best tier any collector offers target {@code i}'s replica {@code r}; 4 if none. */
  private int bestTier(int i, int r, int[][] owners, int[] zones, Topology topology) {
    long key = memoKey(i, r, owners, zones, topology);
    Integer known = key == -1 ? null : bestTiers.get(key);
    if (known != null) {
      return known;
    }
    int best = 4;
    for (int c = 0; c < topology.size() && best > 1; c++) {
      int t = tier(c, i, r, owners, zones, topology);
      if (t > 0 && t < best) {
        best = t;
      }
    }
    if (key != -1) {
      bestTiers.put(key, best);
    }
    return best;
  }

  /**
   * What the best tier depends on, packed in 16-bit fields: the earlier owners (and, for per-node,
   * the target's zone); -1 when it does not fit (more than three earlier replicas, or 65,535
   * collectors or more), and the tier is then computed each time.
   */
  private long memoKey(int i, int r, int[][] owners, int[] zones, Topology topology) {
    if (r > 3 || topology.size() >= 0xFFFF) {
      return -1;
    }
    long key = zones == null ? 0 : zones[i] + 1;
    for (int q = 0; q < r; q++) {
      key = (key << 16) | (owners[q][i] + 1);
    }
    return key;
  }

  /**
   * Where target {@code i}'s replica {@code r} goes when its rank's choice does not stand: the
   * collector of the best tier with the highest weighted rendezvous score that is under its load
   * cap; else the best of that tier under its limit; else, with limits, the best of a worse tier
   * under its limit; -1 when no collector can take it.
   */
  private int elsewhere(Target target, int i, int r, int[][] owners, int[] zones,
      Topology topology, int[] counts, long[] costs, int[] softCap) {
    int best = bestTier(i, r, owners, zones, topology);
    if (best == 4) {
      return -1;
    }
    long key = HashRings.mix(target.hash() + r * RANK_GAMMA);
    for (int tier = best; tier <= 3; tier++) {
      int underCap = -1;
      double underCapScore = 0;
      int underLimit = -1;
      double underLimitScore = 0;
      for (int c = 0; c < topology.size(); c++) {
        if (!withinLimits(c, target.cost(), counts, costs, topology)
            || tier(c, i, r, owners, zones, topology) != tier) {
          continue;
        }
        double s = score(topology, c, key);
        if (underLimit < 0 || s > underLimitScore) {
          underLimit = c;
          underLimitScore = s;
        }
        if (counts[c] < softCap[c] && (underCap < 0 || s > underCapScore)) {
          underCap = c;
          underCapScore = s;
        }
      }
      if (underCap >= 0) {
        return underCap;
      }
      if (underLimit >= 0) {
        return underLimit;
      }
    }
    return -1;
  }

  /**
   * Weighted rendezvous: {@code capacity / -ln(u)} for the pair's uniform {@code u} in (0, 1),
   * so that a collector wins in proportion to its capacity. Ties (equal scores) keep the smaller
   * id, the earlier name.
   */
  private static double score(Topology topology, int c, long key) {
    long bits = HashRings.rendezvousScore(topology.hash(c), key);
    double u = ((bits >>> 11) + 0.5) * 0x1.0p-53;
    return topology.capacity(c) / -Math.log(u);
  }

  /** The pending target indexes sorted by identity hash (unsigned), then by identity. */
  private static int[] inIdentityOrder(int[] pending, int count, Target[] targets) {
    Integer[] boxed = new Integer[count];
    for (int j = 0; j < count; j++) {
      boxed[j] = pending[j];
    }
    Arrays.sort(boxed, (a, b) -> {
      int h = Long.compareUnsigned(targets[a].hash(), targets[b].hash());
      return h != 0 ? h : targets[a].toString().compareTo(targets[b].toString());
    });
    int[] sorted = new int[count];
    for (int j = 0; j < count; j++) {
      sorted[j] = boxed[j];
    }
    return sorted;
  }
}
