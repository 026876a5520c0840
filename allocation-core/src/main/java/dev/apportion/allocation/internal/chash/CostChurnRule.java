package dev.apportion.allocation.internal.chash;

import dev.apportion.allocation.internal.collections.Headroom;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.collections.Passes;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import java.util.Arrays;

/**
 * The cost churn rule of {@link ConsistentHashingPlacer}: the costs each target was last placed
 * with, and the test of whether the current costs have strayed far enough from them to place
 * again.
 *
 * <p>A change of costs alone moves nothing while every collector carries at most its cap times
 * {@code 1 + }{@value #COST_SLACK} and, in a weighted placement, at least its floor times
 * {@code 1 - }{@value #COST_SLACK}, all at current costs (the bounds from the current total):
 * until then the placement keeps using the costs of the last placement ({@link #placedCosts}),
 * and the rule is {@linkplain #stale() stale}. Past that ({@link #overAtCurrentCosts}), the placer
 * {@linkplain #forgetPlacedCosts forgets every placed cost} and places the whole view again: the
 * placement is then the pure function of the sets and their current costs, so replicas that saw
 * different cost histories agree again, and the bound holds whichever way the costs drifted (a
 * collector left heavy because the others' targets grew lighter is caught as well as one whose
 * own targets grew).
 *
 * <p>Arrays by slot (the placed costs) grow with headroom like the engine's slots; arrays by
 * member id are kept between calls.
 */
final class CostChurnRule {
  /**
   * Hysteresis of the cost churn rule: a change of costs alone re-places nothing until some
   * collector carries more than its cap times {@code 1 + COST_SLACK}, or less than its floor
   * times {@code 1 - COST_SLACK}, at current costs.
   */
  static final double COST_SLACK = 0.1;

  private final boolean twoSided;
  private final TokenRing ring;
  private final LoadBounds bounds;

  /**
   * Whether some target's cost changed since it was last placed (the placement then uses the
   * costs of its last placement: the churn rule's hysteresis).
   */
  private boolean stale;

  /**
   * By slot, two words side by side (one cache line for both): {@code placed[2 * slot]} the
   * identity hash of the target the last placement placed there, {@code placed[2 * slot + 1]}
   * the cost it used plus one, or 0 when the slot's cost is not known.
   */
  private long[] placed = new long[0];
  /** Whether every cost the last {@link #placedCosts} read was 1. */
  private boolean unitCosts = true;

  /** By member id: cost at current costs, for the check. */
  private long[] current = new long[0];
  /**
   * By member id: the last placement's cap and floor, and its largest cap (the rule tells from
   * them where the placement itself could not keep a collector within its bound).
   */
  private long[] capsThen = new long[0];
  private long[] floorsThen = new long[0];
  private long largestCapThen = Long.MAX_VALUE;
  /** By member id, for the check: cost at the last placement's costs; whether oversize. */
  private long[] placedLoad = new long[0];
  private boolean[] oversizeHeld = new boolean[0];

  /**
   * A rule over shared parts of the placer.
   *
   * @param twoSided whether a weighted placement's bound is two-sided
   * @param ring the ring (updated to the members by the check)
   * @param bounds the bounds (recomputed at current costs by the check)
   */
  CostChurnRule(boolean twoSided, TokenRing ring, LoadBounds bounds) {
    this.twoSided = twoSided;
    this.ring = ring;
    this.bounds = bounds;
  }

  /**
   * Forgets the placed cost of {@code slots}: a slot that leaves the view (or comes into it)
   * forgets the cost it was placed with, so a target that comes back, possibly into a reused
   * slot, brings its current cost.
   *
   * @param slots the slots
   */
  void forget(IntList slots) {
    for (int i = 0; i < slots.size(); i++) {
      forget(slots.get(i));
    }
  }

  private void forget(int slot) {
    if (2 * slot + 1 < placed.length) {
      placed[2 * slot + 1] = 0;
    }
  }

  /**
   * Forgets the placed cost of every target of the view, so that the next placement uses the
   * current ones, and clears {@link #stale()}.
   *
   * @param assignment the view
   */
  void forgetPlacedCosts(Assignment assignment) {
    for (int i = 0; i < assignment.size(); i++) {
      forget(assignment.slotAt(i));
    }
    stale = false;
  }

  /**
   * Whether some target's cost changed since it was last placed.
   *
   * @return true when stale
   */
  boolean stale() {
    return stale;
  }

  /** Records that some target's cost changed since it was last placed. */
  void markStale() {
    stale = true;
  }

  /**
   * Fills the placed costs for the view: a slot keeps the cost it was last placed with while it
   * holds the same target; a new target brings its current cost. Also writes each target's
   * placed cost by its position in the view. One pass in view order, reading the hashes in order
   * ({@link Assignment#hashAt}) and one cache line of the placed words per slot.
   *
   * @param assignment the view
   * @param n how many targets the view holds
   * @param costByPosition where the costs go ({@code [0 .. n)}), or null
   * @return the view's total placed cost
   */
  long placedCosts(Assignment assignment, int n, long[] costByPosition) {
    int maxSlot = 0;
    for (int from = 0; from < n; from += Passes.CHUNK) {
      maxSlot = Math.max(maxSlot, maxSlot(assignment, from, Passes.end(from, n)));
    }
    if (placed.length <= 2 * maxSlot + 1) {
      // The engine's slots have headroom for a few percent of new targets (Headroom.withHeadroom:
      // 1.5 to 6%): so does this array, or the first small change after a full placement would
      // copy it.
      int slots = Math.max(Headroom.withHeadroom(maxSlot + 1), placed.length);
      placed = Arrays.copyOf(placed, 2 * slots);
    }
    long total = 0;
    unitCosts = true;
    for (int from = 0; from < n; from += Passes.CHUNK) {
      total += placedCosts(assignment, from, Passes.end(from, n), costByPosition);
    }
    return total;
  }

  /** The largest slot at positions {@code [from, to)} of the view ({@link Passes}), or 0. */
  private static int maxSlot(Assignment assignment, int from, int to) {
    int max = 0;
    for (int i = from; i < to; i++) {
      max = Math.max(max, assignment.slotAt(i));
    }
    return max;
  }

  /**
   * {@link #placedCosts(Assignment, int, long[])} for positions {@code [from, to)} ({@link
   * Passes}): their total; clears {@link #unitCosts} when one of them is not 1.
   */
  private long placedCosts(Assignment assignment, int from, int to, long[] costByPosition) {
    long[] p = placed;
    long total = 0;
    boolean unit = true;
    for (int i = from; i < to; i++) {
      int slot = assignment.slotAt(i);
      long h = assignment.hashAt(i);
      long c = p[2 * slot + 1] - 1;
      if (c < 0 || p[2 * slot] != h) {
        p[2 * slot] = h;
        c = assignment.cost(slot);
        p[2 * slot + 1] = c + 1;
      }
      if (costByPosition != null) {
        costByPosition[i] = c;
      }
      total += c;
      unit &= c == 1;
    }
    if (!unit) {
      unitCosts = false;
    }
    return total;
  }

  /**
   * Records that {@code slot} was placed with {@code cost} while holding the target of identity
   * hash {@code hash}: what {@link #placedCosts} records for each target of a whole placement,
   * for one target placed by a change ({@link IncrementalMatching}).
   *
   * @param slot the slot
   * @param hash its target's identity hash
   * @param cost the cost it was placed with
   */
  void placedNow(int slot, long hash, long cost) {
    if (placed.length <= 2 * slot + 1) {
      placed = Arrays.copyOf(placed, 2 * Math.max(Headroom.withHeadroom(slot + 1), placed.length));
    }
    placed[2 * slot] = hash;
    placed[2 * slot + 1] = cost + 1;
  }

  /**
   * Whether every cost the last {@link #placedCosts} read was 1.
   *
   * @return true when all were 1
   */
  boolean unitCosts() {
    return unitCosts;
  }

  /**
   * The cost a slot was placed with, as the last {@link #placedCosts} filled it.
   *
   * @param slot a slot of the view
   * @return the cost
   */
  long placedCost(int slot) {
    return placed[2 * slot + 1] - 1;
  }

  /**
   * Remembers the bounds a placement placed within: each member's cap and floor as the bounds
   * hold them now, and its largest cap (above which targets were set aside).
   *
   * @param members the members placed on
   * @param largestCap the placement's largest cap
   */
  void remember(Members members, long largestCap) {
    if (capsThen.length < ring.idSpan()) {
      capsThen = new long[ring.idSpan()];
      floorsThen = new long[ring.idSpan()];
    }
    bounds.copyBounds(members.ids(), capsThen, floorsThen);
    largestCapThen = largestCap;
  }

  /**
   * Whether some collector of the view carries more than its cap times {@code 1 + }{@value
   * #COST_SLACK}, or less than its floor times {@code 1 - }{@value #COST_SLACK}, with the view's
   * current costs and bounds computed from their total; a collector the last placement could not
   * keep within its bound is measured from where it left it. Counts only the view's targets (a
   * view may be one partition, or per-node's pool). Recomputes the bounds.
   *
   * @param members the members
   * @param assignment the view
   * @return true when the view should be placed again with current costs
   */
  boolean overAtCurrentCosts(Members members, Assignment assignment) {
    int n = assignment.size();
    if (n == 0 || members.isEmpty()) {
      return false;
    }
    ring.update(members);
    int span = ring.idSpan();
    if (current.length < span) {
      current = new long[span];
    }
    Arrays.fill(current, 0);
    long total = 0;
    boolean unit = true;
    for (int i = 0; i < n; i++) {
      long c = assignment.cost(assignment.slotAt(i));
      total += c;
      unit &= c == 1;
    }
    boolean weighted = !unit || !members.uniformCapacity();
    bounds.compute(members, total, n, assignment, weighted, span);
    long largestCap = bounds.largestCap(members);
    // A target costlier than every cap is placed alone wherever it fits best and keeps its
    // collector above the bound for good: it does not count, or one such target would turn
    // every drift into a re-placement. In a weighted placement the others' bounds are those of
    // the rest (as in the matching, set aside until none is left).
    if (placedLoad.length < span) {
      placedLoad = new long[span];
      oversizeHeld = new boolean[span];
    }
    long limit = largestCap;
    while (true) {
      Arrays.fill(oversizeHeld, false);
      long oversizeTotal = 0;
      int oversizeCount = 0;
      for (int i = 0; i < n; i++) {
        int slot = assignment.slotAt(i);
        long c = assignment.cost(slot);
        if (c > limit) {
          Member owner = assignment.ownerOf(slot);
          if (owner != null && owner.id() < oversizeHeld.length) {
            oversizeHeld[owner.id()] = true;
          }
          oversizeTotal += c;
          oversizeCount++;
        }
      }
      if (oversizeCount == 0 || !(weighted && twoSided)) {
        break;
      }
      bounds.withoutOversize(members, total, n, oversizeTotal, oversizeCount, oversizeHeld);
      long next = bounds.largestCapOfOthers(members, oversizeHeld);
      if (next >= limit) {
        break;
      }
      limit = next;
    }
    // Beside the current costs, the costs of the last placement on the current owners (which
    // the engine's limits may have changed).
    Arrays.fill(placedLoad, 0);
    boolean becameOversize = false;
    for (int i = 0; i < n; i++) {
      int slot = assignment.slotAt(i);
      long c = assignment.cost(slot);
      Member owner = assignment.ownerOf(slot);
      if (owner == null || owner.id() >= current.length) {
        continue;
      }
      int id = owner.id();
      boolean known = 2 * slot + 1 < placed.length && placed[2 * slot + 1] != 0
          && placed[2 * slot] == assignment.hash(slot);
      long then = known ? placed[2 * slot + 1] - 1 : c;
      if (c <= limit) {
        current[id] += c;
      } else if (then <= largestCapThen) {
        // Costlier than every cap now, not when it was placed: it shares its collector.
        becameOversize = true;
      }
      if (then <= largestCapThen) {
        placedLoad[id] += then;
      }
    }
    if (becameOversize) {
      return true;
    }
    for (int id : members.ids()) {
      // Measured from the bound, or, for a collector the last placement could not keep within
      // its bound then (a floor no nearby target could fill, a limit that took targets off),
      // from where it left it, scaled as its bound moved since: else every drift would
      // re-place. Only the placement's own miss counts, so a collector the other collectors'
      // drift pushes out of the band is caught either way.
      long then = placedLoad[id];
      long cap = bounds.cap(id);
      long floor = bounds.floor(id);
      boolean missedHigh = id < capsThen.length && then > capsThen[id];
      boolean missedLow = id < floorsThen.length && then < floorsThen[id];
      double high = missedHigh
          ? Math.max((double) cap, (double) then * cap / capsThen[id]) : cap;
      double low = missedLow
          ? Math.min((double) floor, (double) then * floor / floorsThen[id]) : floor;
      if (current[id] > high * (1 + COST_SLACK) || current[id] < low * (1 - COST_SLACK)) {
        return true;
      }
    }
    return false;
  }
}
