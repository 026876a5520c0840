package dev.apportion.allocation.internal.chash;

import dev.apportion.allocation.internal.collections.Passes;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.CollectorLimits;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.ring.HashRings;
import dev.apportion.allocation.spi.AllocatorSpec;
import java.util.Arrays;

/**
 * The bounds of {@link ConsistentHashingPlacer}, by member id, and the load each member has
 * taken so far in a placement: its cap (the most cost it may take), its floor, its per-collector
 * target limit, and the cost and count it holds.
 *
 * <p><b>Caps.</b> Each collector has a cap of {@code max(ceil(n / c), floor(loadFactor * n / c +
 * u))}, where {@code u} in {@code [0, 1)} is drawn from the collector's name ({@link #memberCap}):
 * the caps are never above {@link AllocatorSpec#boundedLoadCap}, and when {@code n / c} drifts,
 * only the collectors whose {@code u} the drift crosses change their cap, not all of them at
 * once (a drift of {@code n / c} changes about {@code loadFactor * n / c} caps, spread over the
 * ring, instead of all {@code c}).
 *
 * <p><b>Floors.</b> When some target has a cost other than 1, or the collectors' capacities
 * differ, the bound is two-sided, with the cost load factor (default {@value
 * AllocatorSpec#DEFAULT_COST_LOAD_FACTOR}): caps at {@code costLoadFactor} times each collector's
 * capacity share of the total cost, floors at {@code 2 - costLoadFactor} times it
 * ({@link #memberFloor}). As per-node's fallback the bound stays one-sided: the pool's
 * collectors carry their nodes' targets beside it, so a floor of the pool alone would pull pool
 * targets onto busy collectors.
 *
 * <p>The arrays are kept between calls, grown to the largest member id seen.
 */
final class LoadBounds {
  /** Salt for the per-collector rounding offset {@code u}. */
  private static final long CAP_SALT = 0x2545F4914F6CDD1DL;

  private final double loadFactor;
  private final double costLoadFactor;
  private final boolean twoSided;

  /** By member id: the cap. */
  private long[] caps = new long[0];
  /** By member id: the floor of the two-sided bound (weighted placements only; else 0). */
  private long[] floors = new long[0];
  /** By member id: the cost taken so far. */
  private long[] loads = new long[0];
  /** By member id: the per-collector target limit ({@link Member#targetLimit}) and its count. */
  private int[] countCaps = new int[0];
  private int[] counts = new int[0];

  /**
   * Bounds with the placer's load factors.
   *
   * @param loadFactor the bound of a count placement
   * @param costLoadFactor the bound of a weighted placement
   * @param twoSided whether a weighted placement's bound is two-sided (has floors)
   */
  LoadBounds(double loadFactor, double costLoadFactor, boolean twoSided) {
    this.loadFactor = loadFactor;
    this.costLoadFactor = costLoadFactor;
    this.twoSided = twoSided;
  }

  /**
   * One collector's cap, for a total cost {@code total} (the number of targets when no target has
   * a cost): {@code max(ceil(total * share), floor(loadFactor * total * share + u))}, where
   * {@code share} is the collector's capacity over the total capacity ({@code 1 / c} when all are
   * equal) and {@code u} in [0, 1) is drawn from the collector's hash. Once the even share is
   * 1000 or more (as with real costs) the cap is instead the largest point at or below
   * {@code loadFactor * total * share} of a grid of step {@code granule} (the mean target cost,
   * rounded down to a power of two) shifted by {@code u * granule}, so no load exceeds loadFactor
   * times its share. Never above {@link AllocatorSpec#boundedLoadCap} for equal capacities.
   *
   * @param loadFactor the load factor
   * @param total the total cost (or count)
   * @param c how many collectors
   * @param memberHash the collector's {@link Member#hash}
   * @param capacity the collector's capacity
   * @param totalCapacity the collectors' total capacity
   * @param uniform whether every collector has the same capacity
   * @param granule the grid step: the mean target cost, a power of two
   * @return the cap
   */
  static long memberCap(double loadFactor, long total, int c, long memberHash, double capacity,
      double totalCapacity, boolean uniform, double granule) {
    long even;
    double x;
    if (uniform) {
      even = (total + c - 1) / c;
      x = loadFactor * total / c;
    } else {
      even = (long) Math.ceil(total * capacity / totalCapacity - 1e-9);
      x = loadFactor * total * capacity / totalCapacity;
    }
    // Randomized rounding spreads the caps' steps over the collectors (few caps change at once).
    double u = (HashRings.mix(memberHash ^ CAP_SALT) >>> 11) * 0x1.0p-53;
    if (even >= 1000) {
      // On a grid of one mean target cost, shifted by u: within (x - g, x], so no load exceeds
      // loadFactor times its share, and a small drift of x moves only the caps whose grid point
      // it crosses, by one mean target (few full collectors at once shed or take a target), not
      // every cap by a sliver (each full collector re-packing its boundary).
      double g = Math.max(1.0, granule);
      long onGrid = (long) Math.floor(g * (Math.floor(x / g + u) - u));
      return Math.max(even, Math.min((long) Math.floor(x), onGrid));
    }
    long rounded = (long) Math.floor(x - 1e-9 + u);
    return Math.max(even, rounded);
  }

  /**
   * One collector's floor in a weighted placement: {@code ceil((2 - loadFactor) * total * share)},
   * the mirror of its cap, never below 0.
   *
   * @param loadFactor the load factor
   * @param total the total cost
   * @param capacity the collector's capacity
   * @param totalCapacity the collectors' total capacity
   * @return the floor
   */
  static long memberFloor(double loadFactor, long total, double capacity, double totalCapacity) {
    double x = (2 - loadFactor) * total * capacity / totalCapacity;
    return x <= 0 ? 0 : (long) Math.ceil(x - 1e-9);
  }

  /**
   * Each member's cap ({@link #memberCap}), no higher than its per-collector cost limit, its floor
   * (0 unless the bound is two-sided), and its per-collector target limit net of what the member
   * holds outside this view: the placer keeps within both limits, so the engine's limit rule
   * ({@link CollectorLimits}) rarely has to take back what the placer put down (only the
   * fits-best fallback of a target with room nowhere, and cost held outside the view, which the
   * cost cap does not see). Leaves the loads as they are.
   *
   * @param members the members
   * @param total the view's total cost
   * @param n how many targets the view holds
   * @param heldOutside what the members hold outside the view
   * @param weighted whether some cost is not 1 or the capacities differ
   * @param idSpan one more than the largest member id
   */
  void compute(Members members, long total, int n, Assignment heldOutside, boolean weighted,
      int idSpan) {
    // The grid step: the mean target cost, rounded down to a power of two so that it stays put
    // while targets come and go (a step that followed every change would shift every grid).
    long mean = Math.max(1, total / Math.max(1, n));
    double granule = Long.highestOneBit(mean);
    if (caps.length < idSpan) {
      caps = new long[idSpan];
      floors = new long[idSpan];
      loads = new long[idSpan];
      countCaps = new int[idSpan];
      counts = new int[idSpan];
    }
    // One-sided (per-node's pool), a weighted placement keeps the count's load factor: the pool
    // is bounded as it always was.
    double factor = weighted && twoSided ? costLoadFactor : loadFactor;
    int c = members.size();
    double totalCapacity = members.totalCapacity();
    boolean uniform = members.uniformCapacity();
    boolean withFloors = weighted && twoSided;
    for (Member m : members.array()) {
      bound(m, factor, total, c, totalCapacity, uniform, granule, withFloors, heldOutside);
    }
  }

  /**
   * One member's cap, floor and count cap, for {@link #compute}: a method a member
   * ({@link Passes}).
   */
  private void bound(Member m, double factor, long total, int c, double totalCapacity,
      boolean uniform, double granule, boolean withFloors, Assignment heldOutside) {
    int id = m.id();
    caps[id] = Math.min(m.costLimit(), memberCap(factor, total, c, m.hash(), m.capacity(),
        totalCapacity, uniform, granule));
    floors[id] = withFloors
        ? Math.min(caps[id], memberFloor(factor, total, m.capacity(), totalCapacity))
        : 0;
    int limit = m.targetLimit();
    countCaps[id] = limit == Integer.MAX_VALUE ? limit
        : Math.max(0, limit - heldOutside.heldOutside(m));
  }

  /**
   * The bounds when some targets cost more than every cap: those are placed alone and cannot be
   * shared, so the other collectors' caps and floors are those of the rest of the cost on the
   * rest of the collectors (else the caps would let them carry far more than their share of what
   * can be shared, and the floors would ask for more than there is), and the floor of a collector
   * holding one is 0. Caps only shrink, so another target may now cost more than every cap:
   * the callers set aside again until none does.
   *
   * @param members the members
   * @param total the view's total cost
   * @param n how many targets the view holds
   * @param oversizeTotal the cost of the targets set aside
   * @param oversizeCount how many targets were set aside
   * @param holds by member id, whether it holds one of them
   */
  void withoutOversize(Members members, long total, int n, long oversizeTotal, int oversizeCount,
      boolean[] holds) {
    double capacity = 0;
    int others = 0;
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      if (!holds[m.id()]) {
        capacity += m.capacity();
        others++;
      }
    }
    long rest = total - oversizeTotal;
    long mean = Math.max(1, rest / Math.max(1, n - oversizeCount));
    double granule = Long.highestOneBit(mean);
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      int id = m.id();
      if (holds[id] || others == 0) {
        floors[id] = 0;
        continue;
      }
      caps[id] = Math.min(caps[id], memberCap(costLoadFactor, rest, others, m.hash(),
          m.capacity(), capacity, members.uniformCapacity(), granule));
      floors[id] = Math.min(caps[id], memberFloor(costLoadFactor, rest, m.capacity(), capacity));
    }
  }

  /**
   * The largest cap of the members.
   *
   * @param members the members
   * @return the cap; 0 when there are none
   */
  long largestCap(Members members) {
    long largest = 0;
    for (int id : members.ids()) {
      if (caps[id] > largest) {
        largest = caps[id];
      }
    }
    return largest;
  }

  /**
   * The largest cap of the members holding no target set aside.
   *
   * @param members the members
   * @param holds by member id, whether it holds a target set aside
   * @return the cap; 0 when every one holds one
   */
  long largestCapOfOthers(Members members, boolean[] holds) {
    long largest = 0;
    for (int id : members.ids()) {
      if (!holds[id]) {
        largest = Math.max(largest, caps[id]);
      }
    }
    return largest;
  }

  /**
   * Copies the caps (and, when {@code floorsInto} is given, the floors) of the members {@code
   * ids} into arrays by id: one call a pass, not a call a member ({@link Passes}).
   *
   * @param ids member ids
   * @param capsInto by id, written at {@code ids}
   * @param floorsInto by id, written at {@code ids}; or null
   */
  void copyBounds(int[] ids, long[] capsInto, long[] floorsInto) {
    for (int id : ids) {
      capsInto[id] = caps[id];
    }
    if (floorsInto != null) {
      for (int id : ids) {
        floorsInto[id] = floors[id];
      }
    }
  }

  /**
   * Adds what the members {@code ids} hold to what they are offered: their loads to {@code
   * offered}, their counts to {@code offeredCount} (by id).
   *
   * @param ids member ids
   * @param offered by id
   * @param offeredCount by id
   */
  void addHeld(int[] ids, long[] offered, int[] offeredCount) {
    for (int id : ids) {
      offered[id] += loads[id];
      offeredCount[id] += counts[id];
    }
  }

  /** Every member's load and count back to 0, for a new placement. */
  void clearLoads() {
    Arrays.fill(loads, 0);
    Arrays.fill(counts, 0);
  }

  /**
   * Whether one more target of {@code targetCost} fits under member {@code id}'s caps.
   *
   * @param id a member id
   * @param targetCost the target's cost
   * @return true when it fits under both the cap and the target limit
   */
  boolean room(int id, long targetCost) {
    return loads[id] + targetCost <= caps[id] && counts[id] < countCaps[id];
  }

  /**
   * Member {@code id} takes a target of {@code targetCost}.
   *
   * @param id a member id
   * @param targetCost the target's cost
   */
  void take(int id, long targetCost) {
    loads[id] += targetCost;
    counts[id]++;
  }

  /**
   * Sets member {@code id}'s load and count, as a round computed elsewhere left them.
   *
   * @param id a member id
   * @param load its load
   * @param count how many targets
   */
  void setLoad(int id, long load, int count) {
    loads[id] = load;
    counts[id] = count;
  }

  /**
   * Member {@code id} gives up a target of {@code targetCost} it took.
   *
   * @param id a member id
   * @param targetCost the target's cost
   */
  void give(int id, long targetCost) {
    loads[id] -= targetCost;
    counts[id]--;
  }

  /**
   * The collector whose load relative to its capacity is the least once {@code targetCost} is
   * added; ties to the smaller name. For a target no cap can hold.
   *
   * @param members the members, not empty
   * @param targetCost the target's cost
   * @return its id
   */
  int fitsBest(Members members, long targetCost) {
    int best = -1;
    double bestLoad = Double.POSITIVE_INFINITY;
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      double load = (loads[m.id()] + targetCost) / m.capacity();
      if (load < bestLoad) {
        bestLoad = load;
        best = m.id();
      }
    }
    return best;
  }

  /**
   * Member {@code id}'s cap.
   *
   * @param id a member id
   * @return the cap
   */
  long cap(int id) {
    return caps[id];
  }

  /**
   * Member {@code id}'s floor.
   *
   * @param id a member id
   * @return the floor; 0 in a one-sided bound
   */
  long floor(int id) {
    return floors[id];
  }

  /**
   * Member {@code id}'s target limit in this view.
   *
   * @param id a member id
   * @return the limit; {@link Integer#MAX_VALUE} when unlimited
   */
  int countCap(int id) {
    return countCaps[id];
  }

  /**
   * The cost member {@code id} has taken.
   *
   * @param id a member id
   * @return the cost
   */
  long load(int id) {
    return loads[id];
  }

  /**
   * How many targets member {@code id} has taken.
   *
   * @param id a member id
   * @return the count
   */
  int count(int id) {
    return counts[id];
  }
}
