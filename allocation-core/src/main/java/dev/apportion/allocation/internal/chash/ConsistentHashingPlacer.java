package dev.apportion.allocation.internal.chash;

import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.collections.LongSort;
import dev.apportion.allocation.internal.collections.Passes;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.CollectorSetChange;
import dev.apportion.allocation.internal.engine.Continuing;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.engine.Placer;
import dev.apportion.allocation.ring.HashRings;
import dev.apportion.allocation.spi.AllocatorSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code consistent-hashing}: consistent hashing with bounded loads (Mirrokni, Thorup and
 * Zadimoghaddam, "Consistent Hashing with Bounded Loads", SODA 2018), made a pure function of the
 * two sets and built so that one change disturbs little.
 *
 * <p><b>Design.</b> A ring with {@value #VIRTUAL_NODES} tokens per collector ({@link TokenRing}).
 * Each collector has a cap of {@code max(ceil(n / c), floor(loadFactor * n / c + u))}, where
 * {@code u} in {@code [0, 1)} is drawn from the collector's name: the caps are never above
 * {@link AllocatorSpec#boundedLoadCap}, and when {@code n / c} drifts, only the collectors whose
 * {@code u} the drift crosses change their cap, not all of them at once ({@link LoadBounds}).
 * Placement is a deferred-acceptance matching (Gale and Shapley) in rounds
 * ({@link BoundedMatching}): every target proposes to the collector owning its hash on the ring,
 * and a collector offered more than its cap keeps the targets closest to its tokens; each
 * rejected target then proposes along its own probe sequence, and a collector with room left
 * keeps the closest of that round's proposals; the few still homeless after the probe rounds
 * take the first collector with room clockwise from their hash. Every tie is broken by the
 * targets' identity-hash order, so two allocators given the same sets agree on every target.
 *
 * <p><b>Why this moves little.</b> The clockwise walk of the first design let an overflowing
 * target, processed in hash order, take the room a later target needed on its own arc, so a
 * change anywhere shifted the overflow all along the ring; and a cap that all collectors changed
 * at once (110 to 111 at 100k targets on 1000 to 999 collectors) sent every full collector's
 * overflow back. Here primaries beat overflow; a removed collector's targets land at the far end
 * of their new owners' arcs, so they displace few; an added collector takes the far ends of its
 * successors' arcs, the very targets those collectors rejected when they were full; and a drift
 * of {@code n / c} changes about {@code loadFactor * n / c} caps, spread over the ring, instead
 * of all {@code c}. What remains is inherent to any bounded load that is a pure function of the
 * sets: when a full collector gains or loses a proposer, one target must go or come back.
 * {@code docs/strategies.md} has the figures.
 *
 * <p><b>Weighted placements.</b> When some target has a cost other than 1, or the collectors'
 * capacities differ, the bound is two-sided, with the cost load factor (default {@value
 * AllocatorSpec#DEFAULT_COST_LOAD_FACTOR}): caps at {@code costLoadFactor} times each collector's
 * capacity share of the total cost, floors at {@code 2 - costLoadFactor} times it. After the
 * rounds a {@link FloorPhase floor phase} lets each collector below its floor extend its arcs
 * clockwise past its own tokens until it reaches its floor. As per-node's fallback the bound
 * stays one-sided. A change of costs alone moves nothing until a collector strays from its bound
 * by more than a slack ({@link CostChurnRule}).
 *
 * <p><b>Cost.</b> A change of a count placement continues the last matching
 * ({@link IncrementalMatching}: round 1 re-run for the over-full collectors concerned, the probe
 * rounds over round 1's rejected targets, the same result as from scratch). Any other change
 * re-places all targets: one merge walk of the targets (already in
 * identity-hash order) against the sorted tokens, a radix sort of the proposals to over-full
 * collectors, a few short rounds for the overflow, and one array read per target to compare with
 * the current owner. The tokens are updated incrementally when collectors change. The scratch
 * arrays are kept between calls, sized to the largest placement seen.
 *
 * <p>This class is the orchestrator: it drives its parts ({@link TokenRing}, {@link LoadBounds},
 * {@link BoundedMatching}, {@link FloorPhase}, {@link CostChurnRule}, sharing one
 * {@link ViewScratch}) through the {@link Placer} calls, writes the result to the assignment and
 * logs the oversize episodes.
 */
public final class ConsistentHashingPlacer implements Placer, Continuing {
  private static final Logger LOG = LoggerFactory.getLogger(ConsistentHashingPlacer.class);

  /**
   * Tokens per collector. Twice the rings' default: the arcs' spread adds to the targets' own
   * (Poisson) spread in deciding how many collectors are full, and every full collector costs
   * moves (see the class comment); 8 bytes a token.
   */
  public static final int VIRTUAL_NODES = 2 * HashRings.DEFAULT_VIRTUAL_NODES;

  /** Whether the last placement had a target costlier than every cap (an episode, logged once). */
  private boolean oversizeEpisode;
  /** The last placement's targets costlier than every cap, and its largest cap. */
  private int lastOversize;
  private long lastLargestCap;

  private final boolean twoSided;
  /** One sorter for the ring's tokens and the matching's proposals: one scratch buffer. */
  private final LongSort longSort = new LongSort();
  private final TokenRing ring;
  private final LoadBounds bounds;
  private final ViewScratch scratch = new ViewScratch();
  private final BoundedMatching matching;
  private final FloorPhase floorPhase;
  private final CostChurnRule churn;
  /** Continues the last count matching for a change ({@link IncrementalMatching}). */
  private final IncrementalMatching incremental;

  /**
   * A placer whose ring has {@code virtualNodes} tokens per unit of capacity. Fewer tokens make
   * each collector change cheaper and the arcs less even; for a small set of targets the caps,
   * not the arcs, decide the balance.
   *
   * @param loadFactor the bound of a count placement
   * @param costLoadFactor the bound of a weighted placement
   * @param virtualNodes tokens per unit of capacity
   * @param twoSided whether a weighted placement's bound is two-sided (false for per-node's pool,
   *     whose collectors carry their nodes' targets beside it: a floor there would pull pool
   *     targets onto collectors already busy with their own node's)
   */
  public ConsistentHashingPlacer(double loadFactor, double costLoadFactor, int virtualNodes,
      boolean twoSided) {
    this.twoSided = twoSided;
    this.ring = new TokenRing(virtualNodes);
    this.bounds = new LoadBounds(loadFactor, costLoadFactor, twoSided);
    this.matching = new BoundedMatching(ring, bounds, scratch, longSort);
    this.floorPhase = new FloorPhase(ring, bounds, scratch);
    this.churn = new CostChurnRule(twoSided, ring, bounds);
    this.incremental = new IncrementalMatching(ring, bounds, matching, scratch);
  }

  @Override
  public void targetsChanged(IntList added, IntList removed, Members members,
      Assignment assignment) {
    // A slot that leaves the view (or comes into it) forgets the cost it was placed with: a
    // target that comes back, possibly into a reused slot, brings its current cost.
    churn.forget(removed);
    churn.forget(added);
    if (!members.isEmpty() && (!added.isEmpty() || !removed.isEmpty())) {
      if (!churn.stale() && incremental.targetsChanged(added, removed, members, assignment)) {
        for (int i = 0; i < added.size(); i++) {
          int s = added.get(i);
          churn.placedNow(s, assignment.hash(s), 1);
        }
        continued(members);
        return;
      }
      placeWithinBounds(members, assignment);
    }
  }

  /**
   * A collector change of a count placement continues the last matching ({@link
   * IncrementalMatching}); any other is placed from scratch, with every target's current cost
   * when costs are stale: such a change moves about a collector's share anyway, and after it the
   * placement is again the pure function of the sets and their current costs, so replicas that
   * saw different cost histories agree again.
   */
  @Override
  public void collectorsChanged(CollectorSetChange change, Assignment assignment) {
    // As for a change of targets: a slot that came into the view or left it forgets its cost.
    // When the view does not say which came, every orphan forgets it (one may have been outside
    // the view, and its cost changed there, since it was placed here).
    if (change.viewChangeKnown()) {
      churn.forget(change.departures());
      churn.forget(change.arrivals());
    } else {
      churn.forget(change.orphans());
    }
    if (!churn.stale() && incremental.collectorsChanged(change, assignment)) {
      IntList arrivals = change.arrivals();
      for (int i = 0; i < arrivals.size(); i++) {
        int s = arrivals.get(i);
        churn.placedNow(s, assignment.hash(s), 1);
      }
      continued(change.after());
      return;
    }
    if (churn.stale()) {
      refresh(change.after(), assignment);
      reportOversize();
    } else {
      placeWithinBounds(change.after(), assignment);
    }
  }

  /**
   * After a change the last matching was continued for: what a whole placement records besides
   * the assignment (the bounds it placed within; no target set aside).
   */
  private void continued(Members members) {
    lastOversize = 0;
    lastLargestCap = bounds.largestCap(members);
    churn.remember(members, lastLargestCap);
    reportOversize();
  }

  /**
   * Places with the costs of the last placement; if some collector then strays from its bound
   * by more than the slack at current costs ({@link CostChurnRule#overAtCurrentCosts}), refreshes
   * every cost and places again, so the bound holds within the slack after every write.
   */
  private void placeWithinBounds(Members members, Assignment assignment) {
    place(members, assignment);
    if (churn.stale() && churn.overAtCurrentCosts(members, assignment)) {
      refresh(members, assignment);
    }
    reportOversize();
  }

  /** The view changed in a way the calls did not say: the next change is placed from scratch. */
  @Override
  public void viewChangedUnsaid() {
    incremental.invalidate();
  }

  /**
   * The cost churn rule ({@link CostChurnRule}): a change of costs alone moves nothing while
   * every collector stays within its bound, with a slack, at current costs; past that, every
   * target's cost is refreshed and the whole view is placed again.
   */
  @Override
  public void costsChanged(IntList recosted, Members members, Assignment assignment) {
    int n = assignment.size();
    if (n == 0 || members.isEmpty() || recosted.isEmpty()) {
      return;
    }
    churn.markStale();
    if (churn.overAtCurrentCosts(members, assignment)) {
      refresh(members, assignment);
      reportOversize();
    }
  }

  /** Forgets the costs of the last placement and places with the current ones. */
  private void refresh(Members members, Assignment assignment) {
    churn.forgetPlacedCosts(assignment);
    place(members, assignment);
  }

  /**
   * Places the whole view: the ring and the bounds for the members and the placed costs, the
   * matching rounds, the floor phase of a two-sided weighted bound; then writes every target
   * whose collector changed.
   */
  private void place(Members members, Assignment assignment) {
    int n = assignment.size();
    // The ring is built even with no target to place: targets that arrive later in a view that
    // was empty (per-node's pool, when a collector leaves) then find it built, where building it
    // from nothing would cost more than their placement. Once built, it is brought up to date
    // only when there are targets to place: while the view stays empty (per-node with a
    // collector on every node), a collector change does not rewrite a ring nobody reads, and
    // the update that comes with the next targets is incremental.
    if (n == 0) {
      if (ring.size() == 0) {
        ring.update(members);
      }
      lastOversize = 0;
      incremental.invalidate();
      return;
    }
    ring.update(members);
    scratch.ensure(n);
    scratch.ensureDistance(n);
    long total = churn.placedCosts(assignment, n, scratch.cost);
    boolean weighted = !churn.unitCosts() || !members.uniformCapacity();
    bounds.compute(members, total, n, assignment, weighted, ring.idSpan());
    bounds.clearLoads();
    boolean floors = weighted && twoSided && members.size() > 1;
    int k = matching.matchRoundOne(members, assignment, total, weighted && twoSided, floors);
    if (!weighted) {
      // A count placement's round 1 is what the next change continues: its over-full members'
      // sorted keys are kept (recordFull says whether they are valid).
      incremental.round1(matching.roundOneKeys(), k, matching.roundOneIdBits());
    }
    matching.finishMatch(members, assignment);
    lastOversize = matching.oversize();
    lastLargestCap = matching.largestCap();
    if (floors) {
      floorPhase.fill(members, n);
    }
    churn.remember(members, matching.largestCap());
    incremental.recordFull(members, assignment,
        !weighted && matching.oversize() == 0 && !churn.stale());
    for (int from = 0; from < n; from += Passes.CHUNK) {
      write(assignment, from, Passes.end(from, n));
    }
    if (n > (1 << 16)) {
      // Scratch sized to the view that no change reads, not kept between operations (8 bytes a
      // target each at most).
      longSort.release();
      matching.releaseKeys();
      scratch.releaseDistance();
    }
  }

  /**
   * Writes the matching's choice for positions {@code [from, to)} ({@link Passes}) where it
   * differs from the owner.
   */
  // The same Member object: owners are compared by identity.
  @SuppressWarnings("ReferenceEquality")
  private void write(Assignment assignment, int from, int to) {
    int[] chosen = scratch.chosen;
    for (int i = from; i < to; i++) {
      int slot = assignment.slotAt(i);
      Member m = ring.member(chosen[i]);
      if (assignment.ownerOf(slot) != m) {
        assignment.place(slot, m);
      }
    }
  }

  /**
   * Logs, once per episode, that targets costlier than every collector's bound were placed where
   * they fit best: they are never dropped, but the bound cannot hold for their collectors.
   */
  private void reportOversize() {
    int oversize = lastOversize;
    long largestCap = lastLargestCap;
    if (oversize > 0 && !oversizeEpisode) {
      oversizeEpisode = true;
      LOG.warn("[consistent-hashing] {} target(s) cost more than any collector's bound ({}): "
          + "each is placed alone where it fits best, never dropped, and its collector carries "
          + "more than the load factor allows. Give collectors more capacity, add collectors, "
          + "or split the target's job; logged again when an episode starts after this one ends.",
          oversize, largestCap);
    } else if (oversize == 0 && oversizeEpisode) {
      oversizeEpisode = false;
      LOG.info("[consistent-hashing] no target costs more than a collector's bound any more");
    }
  }
}
