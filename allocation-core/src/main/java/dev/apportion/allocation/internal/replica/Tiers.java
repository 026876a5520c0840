package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.Target;
import java.util.Arrays;

/**
 * The tiers of {@link ReplicaRule} for the targets' further replicas, against the owners the
 * placement has decided so far: the tier of one collector, and the best any collector offers,
 * remembered per change by what it depends on (the earlier owners, and the target's zone for
 * per-node). Not thread-safe: the placement's writer owns one.
 */
final class Tiers {
  private final ReplicaRule rule;
  private final LongIntMemo bestTiers = new LongIntMemo();
  /** The best tier of a second replica by its primary's id + 1 (rule DISTINCT). */
  private int[] bestTierByPrimary = new int[0];
  private Topology topology = Topology.EMPTY;
  private OwnerTable owners;
  /** Each target's zone for rule TARGET_ZONE, else null. */
  private int[] zones;

  Tiers(ReplicaRule rule) {
    this.rule = rule;
  }

  /** Starts a change: the collectors and the owners it is decided against, nothing remembered. */
  void use(Topology next, OwnerTable table) {
    topology = next;
    owners = table;
    bestTiers.clear();
    if (bestTierByPrimary.length != next.limit() + 1) {
      bestTierByPrimary = new int[next.limit() + 1];
    }
    Arrays.fill(bestTierByPrimary, -1);
  }

  /** Reads the targets' zones when the rule needs them (per-node), for the topology now. */
  void readZones(Target[] targets, Topology topology) {
    if (rule != ReplicaRule.TARGET_ZONE) {
      zones = null;
      return;
    }
    int[] z = new int[targets.length];
    for (int i = 0; i < targets.length; i++) {
      z[i] = topology.zoneOf(targets[i]);
    }
    zones = z;
  }

  /** The tier of collector {@code c} for target {@code i}'s replica {@code r}; 0 if it holds one. */
  int tier(int c, int i, int r) {
    int node = topology.node(c);
    int zone = topology.zone(c);
    boolean otherNode = true;
    boolean otherZone = true;
    for (int q = 0; q < r; q++) {
      int o = owners.get(q, i);
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
  int bestTier(int i, int r) {
    if (r == 1 && zones == null) {
      // The common case: it depends on the primary alone.
      int primary = owners.get(0, i) + 1;
      int known = bestTierByPrimary[primary];
      if (known < 0) {
        known = bestTierScan(i, r);
        bestTierByPrimary[primary] = known;
      }
      return known;
    }
    long key = memoKey(i, r);
    int known = key == -1 ? -1 : bestTiers.get(key);
    if (known >= 0) {
      return known;
    }
    int best = bestTierScan(i, r);
    if (key != -1) {
      bestTiers.put(key, best);
    }
    return best;
  }

  private int bestTierScan(int i, int r) {
    // Per-node's tier 1 is in the target's zone: a target without one can do no better than 2.
    int floor = zones != null && zones[i] < 0 ? 2 : 1;
    int best = 4;
    for (int c : topology.live()) {
      int t = tier(c, i, r);
      if (t > 0 && t < best) {
        best = t;
        if (best == floor) {
          break;
        }
      }
    }
    return best;
  }

  /**
   * What the best tier depends on, packed in 16-bit fields above the rank: the target's zone (for
   * per-node) and the earlier owners; -1 when they do not fit (more than three fields, or ids of
   * 65,535 or more), and the tier is then computed each time.
   */
  private long memoKey(int i, int r) {
    if (r + (zones == null ? 0 : 1) > 3 || topology.limit() >= 0xFFFF) {
      return -1;
    }
    long key = r;
    if (zones != null) {
      key = (key << 16) | (zones[i] + 1);
    }
    for (int q = 0; q < r; q++) {
      key = (key << 16) | (owners.get(q, i) + 1);
    }
    return key;
  }
}
