package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.ring.HashRings;
import java.util.Arrays;

/**
 * Decides every target's further replicas from its primary, and keeps what it decided so that a
 * change of collectors re-decides only the replicas it touches.
 *
 * <p><b>The rule</b>, rank by rank (r = 1 .. k-1), a function of the targets, the collectors and
 * the primaries, never of history or input order:
 * <ol>
 *   <li>A target without a primary has no further replica.
 *   <li>Replica r <b>proposes</b> to the first collector on a consistent-hash ring of the
 *       collectors ({@link ReplicaRing}), walking from a key of (target, r), that holds no
 *       earlier replica of the target and is in the best tier the collectors offer it ({@link
 *       ReplicaRule}: another node and zone; per-node, the target's zone).
 *   <li>Each collector <b>accepts</b> its proposers in identity-hash order while it stays under
 *       its load cap (the load factor times its capacity's share of every replica), the cost
 *       band's upper end when targets carry costs, and the per-collector limits, counting the
 *       primaries and the replicas of earlier ranks it holds first.
 *   <li>The rejected (a few, from collectors that were nearly full) are <b>probed</b> one by one
 *       in identity-hash order: the first collector of the best tier under its cap and limits
 *       further along the ring; else the first under its limits; else a worse tier.
 * </ol>
 *
 * <p><b>Why a change can be local.</b> Steps 1 to 3 of a replica depend only on its own target,
 * its earlier owners and the collector it proposes to; step 4 runs over the rejected alone. So a
 * change of collectors re-decides: the targets whose primary or earlier replica changed; the
 * proposers of a collector that left; the proposers whose walk passes a point of a collector that
 * joined (found through an index of the walks' keys); the acceptance of each collector whose
 * proposers, count or cap changed and that rejects some before or after; and the probe over every
 * rejected replica. Continuing is only sound while the best tier is the same for every target
 * before and after: {@link #change} places from scratch instead when the collectors may not offer
 * every replica a collector on another node and in another zone ({@link
 * Topology#spreadClasses}); for per-node's rule, when a target's zone or best tier may change
 * ({@link Topology#sameTargetZones}); and when a collector kept its name but changed node, zone
 * or capacity.
 *
 * <p><b>A reader's map.</b> The state: a {@link RankState} per further rank (proposals by
 * collector, rejections, the probe's placements, the walks' keys), the primaries' counts and
 * the caps. {@link #placeAll} runs every target and every collector through the same steps a
 * change runs; {@link #change} marks what a change of collectors touches (the collectors that
 * left and joined, the moved primaries, then rank by rank the replicas to re-decide); {@link
 * #runRank} re-decides them (proposals, each marked collector's acceptance, owners, the probe);
 * then come the caps and limits, and the bookkeeping of what changed. The tiers are {@link
 * Tiers}'s, the ring {@link ReplicaRing}'s.
 *
 * <p>Not thread-safe: the allocator's writer owns one.
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
  private final ReplicaRing ring = new ReplicaRing();
  private final Tiers tiers;

  // The targets of the last placement.
  private Target[] targets = new Target[0];
  private long[] hashes = new long[0];
  private long[] targetCosts = new long[0];
  /** Target indexes in identity-hash order, and each target's place in it. */
  private int[] order = new int[0];
  private int[] place = new int[0];
  private boolean weighted;
  private long costSum;
  private Topology topology = Topology.EMPTY;
  private boolean valid;

  // What was decided.
  private OwnerTable owners;
  private int[] primaryCount = new int[0];
  private long[] primaryCost = new long[0];
  private final RankState[] ranks;
  private int[] softCap = new int[0];
  private long[] costCap = new long[0];

  // Of the change being placed.
  private boolean full;
  private final IntList[] changed;
  private int[][] changedMark;
  /** Marks a collector dirty, or a replica changed, within one call. */
  private int changeEpoch;
  /** Marks a target as re-decided within one rank of one call. */
  private int itemEpoch;
  private int[] itemMark = new int[0];
  private int[] collectorMark = new int[0];
  private final IntList dirtyCollectors = new IntList();
  private final IntList scratch = new IntList();
  private int[] work = new int[0];
  private long[] workCost = new long[0];
  /** Scratch of {@link #elsewhere}: by tier, the first collector met under its cap, its limit. */
  private final int[] firstUnderCap = new int[4];
  private final int[] firstUnderLimit = new int[4];

  /**
   * @param k replicas per target
   * @param rule the tier rule
   * @param loadFactor how far above its capacity's share of every replica a collector may go
   *     before a proposer is rejected
   * @param costLoadFactor the same for cost, when targets carry costs (the cost band's upper end)
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
    this.tiers = new Tiers(rule);
    this.ranks = new RankState[k];
    this.changed = new IntList[k];
    for (int r = 0; r < k; r++) {
      changed[r] = new IntList();
    }
    this.changedMark = new int[k][0];
    this.owners = new OwnerTable(k, 0);
  }

  /** The owners now, by rank then target (writer's table: freeze it to publish). */
  OwnerTable owners() {
    return owners;
  }

  /** Records a call that changed nothing the placement reads: nothing changed owner. */
  void keep() {
    full = false;
    for (IntList c : changed) {
      c.clear();
    }
  }

  /** Whether the last call placed from scratch (then {@link #changed} says nothing). */
  boolean wasFull() {
    return full;
  }

  /** The targets whose replica {@code rank} changed owner in the last call (not from scratch). */
  IntList changed(int rank) {
    return changed[rank];
  }

  /** How many replicas each collector holds, by id. */
  int[] counts() {
    int[] counts = new int[topology.limit()];
    for (int c : topology.live()) {
      counts[c] = primaryCount[c];
      for (int r = 1; r < k; r++) {
        counts[c] += ranks[r].count(c);
      }
    }
    return counts;
  }

  /** The cost of the replicas each collector holds, by id. */
  long[] costs() {
    long[] costs = new long[topology.limit()];
    for (int c : topology.live()) {
      costs[c] = primaryCost[c];
      for (int r = 1; r < k; r++) {
        costs[c] += ranks[r].cost(c);
      }
    }
    return costs;
  }

  /**
   * Places every replica from scratch.
   *
   * @param given the targets, by index
   * @param primaries each target's primary (a collector id, or -1)
   * @param next the collectors
   */
  void placeAll(Target[] given, int[] primaries, Topology next) {
    full = true;
    if (given != targets) {
      readTargets(given);
    }
    useTopology(next);
    int n = targets.length;
    owners = new OwnerTable(k, n);
    tiers.use(topology, owners);
    tiers.readZones(targets, topology);
    primaryCount = new int[topology.limit()];
    primaryCost = new long[topology.limit()];
    for (int i = 0; i < n; i++) {
      int c = primaries[i];
      owners.set(0, i, c);
      if (c >= 0) {
        primaryCount[c]++;
        primaryCost[c] += targetCosts[i];
      }
    }
    softCap = new int[0];
    costCap = new long[0];
    computeCaps();
    IntList all = new IntList(n);
    for (int i = 0; i < n; i++) {
      all.add(i);
    }
    for (int r = 1; r < k; r++) {
      ranks[r] = new RankState(n);
      ranks[r].ensureCollectors(topology.limit());
      for (int i = 0; i < n; i++) {
        ranks[r].key[i] = HashRings.mix(hashes[i] + r * RANK_GAMMA);
      }
      nextEpoch();
      for (int c : topology.live()) {
        markCollector(c);
      }
      runRank(r, all);
    }
    valid = true;
  }

  /**
   * Places a change of collectors (the same targets) from the last placement, with exactly the
   * result of {@link #placeAll}; false, changing nothing, when it cannot continue (the class
   * comment says when), and the caller then places from scratch.
   *
   * @param primaries each target's primary now
   * @param moved the targets whose primary changed
   * @param next the collectors now
   * @return whether it placed the change
   */
  boolean change(int[] primaries, IntList moved, Topology next) {
    if (!canContinue(next)) {
      return false;
    }
    full = false;
    Topology before = topology;
    useTopology(next);
    int limit = topology.limit();
    if (primaryCount.length < limit) {
      primaryCount = Arrays.copyOf(primaryCount, limit);
      primaryCost = Arrays.copyOf(primaryCost, limit);
    }
    for (int r = 0; r < k; r++) {
      changed[r].clear();
      if (changedMark[r].length < targets.length) {
        changedMark[r] = new int[targets.length];
      }
      if (r > 0) {
        ranks[r].ensureCollectors(limit);
      }
    }
    nextEpoch();
    IntList departed = new IntList();
    IntList joined = new IntList();
    for (int c : before.live()) {
      if (!topology.present(c)) {
        departed.add(c);
        markCollector(c);
      }
    }
    for (int c : topology.live()) {
      if (!before.present(c)) {
        joined.add(c);
        markCollector(c);
      }
    }
    for (int j = 0; j < moved.size(); j++) {
      int i = moved.get(j);
      int from = owners.get(0, i);
      int to = primaries[i];
      if (from != to) {
        if (from >= 0) {
          primaryCount[from]--;
          primaryCost[from] -= targetCosts[i];
          markCollector(from);
        }
        if (to >= 0) {
          primaryCount[to]++;
          primaryCost[to] += targetCosts[i];
          markCollector(to);
        }
        setOwner(0, i, to);
      }
    }
    for (int j = 0; j < departed.size(); j++) {
      if (primaryCount[departed.get(j)] != 0) {
        valid = false;
        return false;
      }
    }
    computeCaps();
    IntList items = new IntList();
    for (int r = 1; r < k; r++) {
      RankState s = ranks[r];
      itemEpoch++;
      items.clear();
      for (int q = 0; q < r; q++) {
        addItems(items, changed[q]);
      }
      for (int j = 0; j < departed.size(); j++) {
        scratch.clear();
        s.proposersOf(departed.get(j), scratch);
        addItems(items, scratch);
      }
      for (int j = 0; j < joined.size(); j++) {
        for (long p : ReplicaRing.ringPoints(topology, joined.get(j))) {
          scratch.clear();
          s.walksThrough(p, scratch);
          addItems(items, scratch);
        }
      }
      runRank(r, items);
      for (int j = 0; j < departed.size(); j++) {
        int c = departed.get(j);
        if (s.proposed[c] != 0 || s.probed[c] != 0) {
          valid = false;
          return false;
        }
      }
    }
    return true;
  }

  private boolean canContinue(Topology next) {
    if (!valid || k < 2 || next.generation() != topology.generation()) {
      return false;
    }
    for (int c : next.live()) {
      if (topology.present(c) && !topology.sameCollector(c, next)) {
        return false;
      }
    }
    return rule == ReplicaRule.DISTINCT
        ? topology.spreadClasses() >= k && next.spreadClasses() >= k
        : topology.sameTargetZones(next, k);
  }

  private void readTargets(Target[] given) {
    targets = given;
    int n = given.length;
    hashes = new long[n];
    targetCosts = new long[n];
    costSum = 0;
    weighted = false;
    for (int i = 0; i < n; i++) {
      hashes[i] = given[i].hash();
      targetCosts[i] = given[i].cost();
      costSum += targetCosts[i];
      weighted |= targetCosts[i] != 1;
    }
    order = IdentityOrder.of(given);
    place = new int[n];
    for (int j = 0; j < n; j++) {
      place[order[j]] = j;
    }
    itemMark = new int[n];
    changedMark = new int[k][n];
  }

  private void useTopology(Topology next) {
    topology = next;
    ring.update(next);
    tiers.use(next, owners);
    int limit = next.limit();
    if (collectorMark.length < limit) {
      collectorMark = Arrays.copyOf(collectorMark, limit);
    }
    if (work.length < limit) {
      work = new int[limit];
      workCost = new long[limit];
    }
  }

  /** The caps for the collectors now; marks those whose cap changed. */
  private void computeCaps() {
    int limit = topology.limit();
    int[] caps = new int[limit];
    long[] costCaps = new long[limit];
    long replicas = (long) targets.length * Math.min(k, topology.size());
    double costReplicas = (double) costSum * Math.min(k, topology.size());
    for (int c : topology.live()) {
      double share = topology.capacity(c) / topology.totalCapacity();
      caps[c] = (int) Math.min(Integer.MAX_VALUE, Math.ceil(loadFactor * replicas * share));
      costCaps[c] = weighted
          ? (long) Math.min(Long.MAX_VALUE, Math.floor(costLoadFactor * costReplicas * share))
          : Long.MAX_VALUE;
      if (c >= softCap.length || caps[c] != softCap[c] || costCaps[c] != costCap[c]) {
        markCollector(c);
      }
    }
    softCap = caps;
    costCap = costCaps;
  }

  /**
   * Re-decides rank {@code r} for {@code items} and for the marked collectors: the items'
   * status, the acceptance of every marked collector that rejects some before or after, the
   * items' owners, then the probe over every rejected replica. Marks every collector whose count
   * of this rank changed, for the next rank.
   */
  private void runRank(int r, IntList items) {
    RankState s = ranks[r];
    for (int j = 0; j < items.size(); j++) {
      int i = items.get(j);
      int was = s.remove(i, targetCosts[i]);
      if (was >= 0) {
        markCollector(was);
      }
      decide(r, i);
    }
    for (int j = 0; j < dirtyCollectors.size(); j++) {
      accept(r, dirtyCollectors.get(j));
    }
    for (int j = 0; j < items.size(); j++) {
      int i = items.get(j);
      byte status = s.status[i];
      if (status == RankState.NONE) {
        setOwner(r, i, -1);
      } else if (s.rejectedCount[s.at[i]] == 0) {
        setOwner(r, i, s.at[i]);
      }
    }
    probe(r);
  }

  /** Target {@code i}'s replica {@code r}: none, or a proposal to the first of its tier. */
  private void decide(int r, int i) {
    if (owners.get(0, i) < 0) {
      return;
    }
    int best = tiers.bestTier(i, r);
    if (best == 4) {
      return;
    }
    RankState s = ranks[r];
    int size = ring.size();
    long at = ring.lookup(s.key[i]);
    for (int step = 0; step < size; step++, at = ring.next(at)) {
      int c = ring.owner(at);
      if (tiers.tier(c, i, r) == best) {
        s.addProposal(i, c, ring.point(at), targetCosts[i]);
        markCollector(c);
        return;
      }
    }
    throw new IllegalStateException("no collector of tier " + best + " on the ring");
  }

  /**
   * Collector {@code c}'s acceptance of its proposers of rank {@code r}: all of them when they fit
   * and it rejected none before (their owners are then written by the caller); otherwise in
   * identity-hash order while each fits.
   */
  private void accept(int r, int c) {
    RankState s = ranks[r];
    boolean rejectedBefore = s.rejectedCount[c] > 0;
    if (!topology.present(c)) {
      s.clearRejected(c);
      return;
    }
    int count = baseCount(r, c);
    long cost = baseCost(r, c);
    if (!rejectedBefore && fitsAll(c, count, cost, s.proposed[c], s.proposedCost[c])) {
      return;
    }
    s.clearRejected(c);
    scratch.clear();
    s.proposersOf(c, scratch);
    int m = scratch.size();
    int[] places = new int[m];
    for (int j = 0; j < m; j++) {
      places[j] = place[scratch.get(j)];
    }
    Arrays.sort(places);
    for (int j = 0; j < m; j++) {
      int i = order[places[j]];
      long w = targetCosts[i];
      if (fits(c, count, cost, w)) {
        count++;
        cost += w;
        setOwner(r, i, c);
      } else {
        s.reject(c, i, w);
      }
    }
  }

  /**
   * The rejected replicas of rank {@code r}, in identity-hash order, each to {@link #elsewhere}
   * against the counts after acceptance.
   */
  private void probe(int r) {
    RankState s = ranks[r];
    for (int j = 0; j < s.probedTargets.size(); j++) {
      int c = s.probedOwners.get(j);
      if (c >= 0) {
        s.probed[c]--;
        s.probedCost[c] -= targetCosts[s.probedTargets.get(j)];
        markCollector(c);
      }
    }
    s.probedTargets.clear();
    s.probedOwners.clear();
    scratch.clear();
    IntList rejecting = s.rejecting;
    int kept = 0;
    for (int j = 0; j < rejecting.size(); j++) {
      int c = rejecting.get(j);
      IntList list = s.rejected[c];
      if (list == null || list.isEmpty() || !topology.present(c)) {
        s.listed[c] = false;
        continue;
      }
      rejecting.set(kept++, c);
      for (int x = 0; x < list.size(); x++) {
        scratch.add(place[list.get(x)]);
      }
    }
    rejecting.truncate(kept);
    if (scratch.isEmpty()) {
      return;
    }
    int[] places = scratch.toArray();
    Arrays.sort(places);
    for (int c : topology.live()) {
      work[c] = baseCount(r, c) + s.proposed[c] - s.rejectedCount[c];
      workCost[c] = baseCost(r, c) + s.proposedCost[c] - s.rejectedCost[c];
    }
    for (int p : places) {
      int i = order[p];
      int c = elsewhere(i, r);
      setOwner(r, i, c);
      s.probedTargets.add(i);
      s.probedOwners.add(c);
      if (c >= 0) {
        work[c]++;
        workCost[c] += targetCosts[i];
        s.probed[c]++;
        s.probedCost[c] += targetCosts[i];
        markCollector(c);
      }
    }
  }

  /** Replicas of ranks below {@code r} on collector {@code c}. */
  private int baseCount(int r, int c) {
    int count = primaryCount[c];
    for (int q = 1; q < r; q++) {
      count += ranks[q].count(c);
    }
    return count;
  }

  private long baseCost(int r, int c) {
    long cost = primaryCost[c];
    for (int q = 1; q < r; q++) {
      cost += ranks[q].cost(c);
    }
    return cost;
  }

  /** Whether {@code c}, holding {@code count} of cost {@code cost}, takes all {@code m} more. */
  private boolean fitsAll(int c, int count, long cost, int m, long mCost) {
    if (m == 0) {
      return true;
    }
    double capacity = topology.capacity(c);
    return count + m <= softCap[c] && cost + mCost <= costCap[c]
        && (maxTargets == 0 || count + m <= Math.max(1, (long) Math.floor(maxTargets * capacity)))
        && (maxCost == 0
            || cost + mCost <= Math.max(1, (long) Math.floor(maxCost * capacity)));
  }

  /** Whether {@code c}, holding {@code count} of cost {@code cost}, takes one more of {@code w}. */
  private boolean fits(int c, int count, long cost, long w) {
    return count < softCap[c] && cost + w <= costCap[c] && withinLimits(c, count, cost, w);
  }

  /** Whether {@code c} can take one more replica of cost {@code w} within the limits. */
  private boolean withinLimits(int c, int count, long cost, long w) {
    double capacity = topology.capacity(c);
    if (maxTargets > 0 && count >= Math.max(1, (long) Math.floor(maxTargets * capacity))) {
      return false;
    }
    // As the engine's limit: a target costlier than every limit fits only on an empty collector.
    return maxCost == 0 || count == 0
        || cost + w <= Math.max(1, (long) Math.floor(maxCost * capacity));
  }

  private void setOwner(int r, int i, int c) {
    if (owners.get(r, i) == c) {
      return;
    }
    owners.set(r, i, c);
    if (!full && changedMark[r][i] != changeEpoch) {
      changedMark[r][i] = changeEpoch;
      changed[r].add(i);
    }
  }

  /** Starts a new set of dirty collectors (and of changed replicas). */
  private void nextEpoch() {
    changeEpoch++;
    dirtyCollectors.clear();
  }

  private void markCollector(int c) {
    if (collectorMark[c] != changeEpoch) {
      collectorMark[c] = changeEpoch;
      dirtyCollectors.add(c);
    }
  }

  private void addItems(IntList items, IntList add) {
    for (int j = 0; j < add.size(); j++) {
      int i = add.get(j);
      if (itemMark[i] != itemEpoch) {
        itemMark[i] = itemEpoch;
        items.add(i);
      }
    }
  }

  /**
   * Where target {@code i}'s rejected replica {@code r} goes: the first collector of the best
   * tier under its load cap on the ring, walking from the replica's key; else the first
   * of that tier under its limit; else, with limits, the first of a worse tier under its limit
   * (under its load cap first); -1 when no collector can take it.
   */
  private int elsewhere(int i, int r) {
    int best = tiers.bestTier(i, r);
    if (best == 4) {
      return -1;
    }
    long w = targetCosts[i];
    int size = ring.size();
    int[] underCap = firstUnderCap;
    int[] underLimit = firstUnderLimit;
    Arrays.fill(underCap, -1);
    Arrays.fill(underLimit, -1);
    long at = ring.lookup(ranks[r].key[i]);
    for (int step = 0; step < size; step++, at = ring.next(at)) {
      int c = ring.owner(at);
      if (!withinLimits(c, work[c], workCost[c], w)) {
        continue;
      }
      int tier = tiers.tier(c, i, r);
      if (tier < best) {
        continue;
      }
      if (work[c] < softCap[c] && workCost[c] + w <= costCap[c]) {
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
}
