package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRings;
import java.util.Arrays;

/**
 * Decides every target's further replicas from what each rank's allocator chose for it: a choice
 * stands when it is a collector the target's earlier replicas are not on and in the best tier the
 * collectors offer it (see {@link ReplicaRule}); otherwise the replica goes to the first collector
 * of that tier under its load cap on a consistent-hash ring of the collectors ({@link
 * FallbackRing}), walking from a key of (target, rank), and, when every such collector is full,
 * to the first one under its limit. Choices that stand are
 * counted first; the rest are decided in identity-hash order, so the result is a function of the
 * targets, the collectors and the ranks' choices, never of history or input order. Not
 * thread-safe: the allocator's writer owns one.
 */
final class ReplicaPlacement {
  /** Spreads the ranks' ring keys apart (the golden ratio's 64-bit odd constant). */
  private static final long RANK_GAMMA = 0x9E3779B97F4A7C15L;

  private final int k;
  private final ReplicaRule rule;
  private final double loadFactor;
  private final double costLoadFactor;
  private final int maxTargets;
  private final long maxCost;
  /** The best tier on offer, by the owners (and target zone) it depends on; reset per change. */
  private final LongIntMemo bestTiers = new LongIntMemo();
  /** The best tier of a second replica by its primary's id + 1 (rule DISTINCT); reset per change. */
  private int[] bestTierByPrimary = new int[0];
  /** Where replicas whose rank's choice does not stand look next. */
  private final FallbackRing ring = new FallbackRing();
  /** The last targets' indexes in identity-hash order, or null until needed. */
  private int[] order;
  /** The targets of the last call, and their identity hashes and costs (read once per set). */
  private Target[] lastTargets;
  private long[] hashes = new long[0];
  private long[] targetCosts = new long[0];
  /** Scratch of {@link #elsewhere}: by tier, the first collector met under its cap, its limit. */
  private final int[] firstUnderCap = new int[4];
  private final int[] firstUnderLimit = new int[4];

  /**
   * @param k replicas per target
   * @param rule the tier rule
   * @param costLoadFactor the same for cost, when targets carry costs (the cost band's upper end)
   * @param loadFactor how far above its capacity's share a collector may go before a replica that
   *     must move skips it
   * @param maxTargets the most targets (all replicas) a collector of capacity 1 may hold; 0 for no
   *     limit
   * @param maxCost the most cost (all replicas) a collector of capacity 1 may hold; 0 for no limit
   */
  ReplicaPlacement(int k, ReplicaRule rule, double loadFactor, double costLoadFactor,
      int maxTargets, long maxCost) {
    this.k = k;
    this.rule = rule;
    this.loadFactor = loadFactor;
    this.costLoadFactor = costLoadFactor;
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
   * @param sameTargets whether {@code targets} are, index by index, the identities of the last
   *     call's (their identity-hash order is then kept)
   * @return the owners by rank (rank 0 a copy of its choices), and each collector's count and cost
   */
  Result place(Target[] targets, int[][] choice, Topology topology, boolean sameTargets) {
    bestTiers.clear();
    if (bestTierByPrimary.length != topology.size() + 1) {
      bestTierByPrimary = new int[topology.size() + 1];
    }
    Arrays.fill(bestTierByPrimary, -1);
    ring.update(topology);
    if (!sameTargets || order == null || order.length != targets.length) {
      order = null;
    }
    if (targets != lastTargets) {
      lastTargets = targets;
      hashes = new long[targets.length];
      targetCosts = new long[targets.length];
      for (int i = 0; i < targets.length; i++) {
        hashes[i] = targets[i].hash();
        targetCosts[i] = targets[i].cost();
      }
    }
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
        costs[c] += targetCosts[i];
      }
    }
    int[] softCap = softCaps(n, topology);
    long[] costCap = costCaps(topology);
    int[] zones = rule == ReplicaRule.TARGET_ZONE ? targetZones(targets, topology) : null;
    for (int r = 1; r < k; r++) {
      int[] o = new int[n];
      boolean[] pending = null;
      for (int i = 0; i < n; i++) {
        int c = choice[r][i];
        if (owners[0][i] < 0) {
          // A target without a primary (per-node without a fallback, off its nodes; limits) has
          // no further replica either: its owners, when it has any, start with its primary.
          o[i] = -1;
        } else if (c >= 0 && stands(c, i, r, owners, zones, topology)) {
          o[i] = c;
          counts[c]++;
          costs[c] += targetCosts[i];
        } else {
          o[i] = -1;
          if (pending == null) {
            pending = new boolean[n];
          }
          pending[i] = true;
        }
      }
      owners[r] = o;
      if (pending == null) {
        continue;
      }
      if (order == null) {
        order = inIdentityOrder(targets);
      }
      for (int i : order) {
        if (!pending[i]) {
          continue;
        }
        int c = elsewhere(i, r, owners, zones, topology, counts, costs, softCap, costCap);
        o[i] = c;
        if (c >= 0) {
          counts[c]++;
          costs[c] += targetCosts[i];
        }
      }
    }
    return new Result(owners, counts, costs);
  }

  /** The load cap of each collector: the load factor times its capacity's share of all replicas. */
  /**
   * The cost cap of each collector, when some target costs other than 1: the cost load factor
   * times its capacity's share of every replica's cost, the upper end of the cost band the
   * strategy keeps with one replica; null when every target costs 1 (the count cap is the cap).
   */
  private long[] costCaps(Topology topology) {
    long total = 0;
    boolean weighted = false;
    for (long cost : targetCosts) {
      total += cost;
      weighted |= cost != 1;
    }
    if (!weighted) {
      return null;
    }
    int collectors = topology.size();
    long[] caps = new long[collectors];
    double replicas = (double) total * Math.min(k, collectors);
    for (int c = 0; c < collectors; c++) {
      double share = topology.capacity(c) / topology.totalCapacity();
      caps[c] = (long) Math.min(Long.MAX_VALUE, Math.floor(costLoadFactor * replicas * share));
    }
    return caps;
  }

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
    if (r == 1 && zones == null) {
      // The common case: it depends on the primary alone.
      int primary = owners[0][i] + 1;
      int known = bestTierByPrimary[primary];
      if (known < 0) {
        known = bestTierScan(i, r, owners, zones, topology);
        bestTierByPrimary[primary] = known;
      }
      return known;
    }
    long key = memoKey(i, r, owners, zones, topology);
    int known = key == -1 ? -1 : bestTiers.get(key);
    if (known >= 0) {
      return known;
    }
    int best = bestTierScan(i, r, owners, zones, topology);
    if (key != -1) {
      bestTiers.put(key, best);
    }
    return best;
  }

  private int bestTierScan(int i, int r, int[][] owners, int[] zones, Topology topology) {
    int best = 4;
    for (int c = 0; c < topology.size() && best > 1; c++) {
      int t = tier(c, i, r, owners, zones, topology);
      if (t > 0 && t < best) {
        best = t;
      }
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
   * first collector of the best tier under its load cap on the fallback ring, walking from the
   * replica's key; else the first of that tier under its limit; else, with limits, the first of a
   * worse tier under its limit (under its load cap first); -1 when no collector can take it.
   */
  private int elsewhere(int i, int r, int[][] owners, int[] zones,
      Topology topology, int[] counts, long[] costs, int[] softCap, long[] costCap) {
    int best = bestTier(i, r, owners, zones, topology);
    if (best == 4) {
      return -1;
    }
    int start = ring.lookup(HashRings.mix(hashes[i] + r * RANK_GAMMA));
    int size = ring.size();
    int[] underCap = firstUnderCap;
    int[] underLimit = firstUnderLimit;
    Arrays.fill(underCap, -1);
    Arrays.fill(underLimit, -1);
    for (int step = 0, at = start; step < size; step++, at = at + 1 == size ? 0 : at + 1) {
      int c = ring.owner(at);
      if (!withinLimits(c, targetCosts[i], counts, costs, topology)) {
        continue;
      }
      int tier = tier(c, i, r, owners, zones, topology);
      if (tier < best) {
        continue;
      }
      if (counts[c] < softCap[c] && (costCap == null || costs[c] + targetCosts[i] <= costCap[c])) {
        if (tier == best) {
          return c;
        }
        if (underCap[tier] < 0) {
          underCap[tier] = c;
        }
      }
      if (underLimit[tier] < 0) {
        underLimit[tier] = c;
      }
    }
    for (int tier = best; tier <= 3; tier++) {
      if (underCap[tier] >= 0) {
        return underCap[tier];
      }
      if (underLimit[tier] >= 0) {
        return underLimit[tier];
      }
    }
    return -1;
  }

  /**
   * Every target index sorted by identity hash (unsigned), then by identity: a primitive sort of
   * the hashes' top bits packed with the index, then a pass that orders the (rare) runs whose top
   * bits are equal by the whole hash and the identity.
   */
  static int[] inIdentityOrder(Target[] targets) {
    int n = targets.length;
    int shift = 32 - Integer.numberOfLeadingZeros(Math.max(1, n - 1));
    long mask = (1L << shift) - 1;
    long[] packed = new long[n];
    for (int i = 0; i < n; i++) {
      long unsignedOrder = targets[i].hash() ^ Long.MIN_VALUE;
      packed[i] = ((unsignedOrder >> shift) << shift) | i;
    }
    Arrays.sort(packed);
    int[] sorted = new int[n];
    for (int j = 0; j < n; j++) {
      sorted[j] = (int) (packed[j] & mask);
    }
    for (int from = 0; from < n; ) {
      int to = from + 1;
      while (to < n && (packed[to] >> shift) == (packed[from] >> shift)) {
        to++;
      }
      if (to - from > 1) {
        sortRun(sorted, from, to, targets);
      }
      from = to;
    }
    return sorted;
  }

  private static void sortRun(int[] sorted, int from, int to, Target[] targets) {
    Integer[] run = new Integer[to - from];
    for (int j = from; j < to; j++) {
      run[j - from] = sorted[j];
    }
    Arrays.sort(run, (a, b) -> {
      int h = Long.compareUnsigned(targets[a].hash(), targets[b].hash());
      return h != 0 ? h : targets[a].toString().compareTo(targets[b].toString());
    });
    for (int j = from; j < to; j++) {
      sorted[j] = run[j - from];
    }
  }
}
