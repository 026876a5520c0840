package dev.apportion.allocation.internal;

import dev.apportion.allocation.spi.AllocatorSpec;
import dev.apportion.allocation.ring.HashRings;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code consistent-hashing}: consistent hashing with bounded loads (Mirrokni, Thorup and
 * Zadimoghaddam, "Consistent Hashing with Bounded Loads", SODA 2018), made a pure function of the
 * two sets and built so that one change disturbs little.
 *
 * <p><b>Design.</b> A ring with {@value #VIRTUAL_NODES} tokens per collector.
 * Each collector has a cap of {@code max(ceil(n / c), floor(loadFactor * n / c + u))}, where
 * {@code u} in {@code [0, 1)} is drawn from the collector's name: the caps are never above
 * {@link AllocatorSpec#boundedLoadCap}, and when {@code n / c} drifts, only the collectors whose
 * {@code u} the drift crosses change their cap, not all of them at once. Placement is a
 * deferred-acceptance matching (Gale and Shapley) in rounds:
 * <ol>
 *   <li>every target proposes to the collector owning its hash on the ring; a collector offered
 *       more than its cap keeps the targets <em>closest to its tokens</em> (the shortest
 *       clockwise distance from the target's hash to the token) and rejects the rest;
 *   <li>each rejected target then proposes along its own probe sequence (fresh hashes of the
 *       target, each looked up on the ring: the "random jumps" of Chen, Coleman and Shrivastava,
 *       AAAI 2021, instead of the clockwise walk), and a collector with room left keeps the
 *       closest of that round's proposals. An overflowing target never displaces one that was
 *       accepted in an earlier round.
 * </ol>
 * After {@value #PROBE_ROUNDS} rounds the few still homeless take the first collector with room
 * clockwise from their hash. Every tie is broken by the targets' identity-hash order, so two
 * allocators given the same sets agree on every target.
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
 * capacity share of the total cost, floors at {@code 2 - costLoadFactor} times it. Caps alone
 * leave a collector whose arcs drew few or light targets far below its share (heavy-tailed costs
 * spread about 25% around it), so after the rounds a <em>floor phase</em> lets each collector
 * below its floor, in name order, extend its arcs clockwise past its own tokens: it takes,
 * nearest first, each target there that fits under its cap and whose collector stays at or
 * above its floor (first only from collectors at or above the middle of their band, about their
 * share), until it reaches its floor. Those targets are the far ends of the next collectors' arcs, the first those would
 * reject. A pure function of the sets and costs like the rest, at the price of more movement than
 * a one-sided bound: {@code docs/strategies.md} ("Cost and capacity") has the figures. As
 * per-node's fallback the bound stays one-sided: the pool's collectors carry their nodes'
 * targets beside it, so a floor of the pool alone would pull pool targets onto busy collectors.
 *
 * <p><b>Cost.</b> Every change re-places all targets: one merge walk of the targets (already in
 * identity-hash order) against the sorted tokens, a radix sort of the proposals to over-full
 * collectors, a few short rounds for the overflow, and one array read per target to compare with
 * the current owner. The tokens are updated incrementally when collectors change. The scratch
 * arrays are kept between calls, sized to the largest placement seen.
 */
final class ConsistentHashingPlacer implements Placer {
  private static final Logger LOG = LoggerFactory.getLogger(ConsistentHashingPlacer.class);

  /**
   * Tokens per collector. Twice the rings' default: the arcs' spread adds to the targets' own
   * (Poisson) spread in deciding how many collectors are full, and every full collector costs
   * moves (see the class comment); 8 bytes a token.
   */
  static final int VIRTUAL_NODES = 2 * HashRings.DEFAULT_VIRTUAL_NODES;

  /** Probe rounds before the clockwise fallback. */
  static final int PROBE_ROUNDS = 32;
  private static final int ID_BITS = 20;
  private static final long ID_MASK = (1L << ID_BITS) - 1;
  private static final long POSITION_MASK = ~ID_MASK;
  private static final long GOLDEN = 0x9E3779B97F4A7C15L;
  /** Odd constant for the probe sequence (not the token sequence's). */
  private static final long PROBE_GAMMA = 0xD1B54A32D192ED03L;
  /** Salt for the per-collector rounding offset {@code u}. */
  private static final long CAP_SALT = 0x2545F4914F6CDD1DL;

  /**
   * Hysteresis of the cost churn rule: a change of costs alone re-places nothing until some
   * collector carries more than its cap times {@code 1 + COST_SLACK}, or less than its floor
   * times {@code 1 - COST_SLACK}, at current costs.
   */
  static final double COST_SLACK = 0.1;

  /**
   * Whether some target's cost changed since it was last placed (the placement then uses the
   * costs of its last placement: the churn rule's hysteresis).
   */
  private boolean stale;
  /** Whether the last placement had a target costlier than every cap (an episode, logged once). */
  private boolean oversizeEpisode;
  /** The last placement's targets costlier than every cap, and its largest cap. */
  private int lastOversize;
  private long lastLargestCap;

  private final double loadFactor;
  private final double costLoadFactor;
  private final boolean twoSided;
  private final int virtualNodes;
  private final LongSort longSort = new LongSort();

  // The ring: positions (high bits) | member id (low bits), ascending as unsigned numbers.
  private long[] tokens = new long[0];
  /** How many of {@link #tokens} are the ring; the rest is room kept for the next rebuild. */
  private int tokenCount;
  /** The member each id's tokens were made for, and for which capacity. */
  private Member[] ringIds = new Member[0];
  private double[] ringCapacity = new double[0];
  private Members ringFor;

  // Scratch by member id.
  private Member[] byId = new Member[0];
  private long[] caps = new long[0];
  /** By member id: the floor of the two-sided bound (weighted placements only; else 0). */
  private long[] floors = new long[0];
  private long[] loads = new long[0];
  /** By member id: the per-collector target limit ({@link Member#targetLimit}) and its count. */
  private int[] countCaps = new int[0];
  private int[] counts = new int[0];
  /** By member id: cost at current costs, for the churn rule's check. */
  private long[] current = new long[0];
  /**
   * By member id: the last placement's cap and floor, and its largest cap (the churn rule tells
   * from them where the placement itself could not keep a collector within its bound).
   */
  private long[] capsThen = new long[0];
  private long[] floorsThen = new long[0];
  private long largestCapThen = Long.MAX_VALUE;
  /** By member id, for the churn rule's check: cost at the last placement's costs; oversize. */
  private long[] placedLoad = new long[0];
  private boolean[] oversizeHeld = new boolean[0];
  private long[] oversizeLoad = new long[0];

  /**
   * By slot, two words side by side (one cache line for both): {@code placed[2 * slot]} the
   * identity hash of the target the last placement placed there, {@code placed[2 * slot + 1]}
   * the cost it used (the cost churn rule) plus one, or 0 when the slot's cost is not known.
   */
  private long[] placed = new long[0];
  /** Whether every cost the last {@link #placedCosts} read was 1. */
  private boolean unitCosts = true;

  // Scratch by position in the view's identity-hash order.
  private int[] chosen = new int[0];
  private long[] cost = new long[0];
  private long[] distance = new long[0];
  private long[] keys = new long[0];
  private final IntList pending = new IntList();
  private final IntList next = new IntList();

  /**
   * A placer whose ring has {@code virtualNodes} tokens per unit of capacity. Fewer tokens make
   * each collector change cheaper and the arcs less even; for a small set of targets the caps,
   * not the arcs, decide the balance.
   *
   * @param loadFactor the bound of a count placement
   * @param costLoadFactor the bound of a weighted placement
   * @param twoSided whether a weighted placement's bound is two-sided (false for per-node's pool,
   *     whose collectors carry their nodes' targets beside it: a floor there would pull pool
   *     targets onto collectors already busy with their own node's)
   */
  ConsistentHashingPlacer(double loadFactor, double costLoadFactor, int virtualNodes,
      boolean twoSided) {
    this.loadFactor = loadFactor;
    this.costLoadFactor = costLoadFactor;
    this.virtualNodes = virtualNodes;
    this.twoSided = twoSided;
  }

  @Override
  public void targetsChanged(IntList added, IntList removed, Members members,
      Assignment assignment) {
    // A slot that leaves the view (or comes into it) forgets the cost it was placed with: a
    // target that comes back, possibly into a reused slot, brings its current cost.
    forget(removed);
    forget(added);
    if (!members.isEmpty() && (!added.isEmpty() || !removed.isEmpty())) {
      placeWithinBounds(members, assignment);
    }
  }

  private void forget(IntList slots) {
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
   * A collector change re-places with every target's current cost: such a change moves about a
   * collector's share anyway, and after it the placement is again the pure function of the sets
   * and their current costs, so replicas that saw different cost histories agree again.
   */
  @Override
  public void collectorsChanged(CollectorSetChange change, Assignment assignment) {
    if (stale) {
      refresh(change.after(), assignment);
      reportOversize();
    } else {
      placeWithinBounds(change.after(), assignment);
    }
  }

  /**
   * Places with the costs of the last placement; if some collector then strays from its bound
   * by more than the slack at current costs ({@link #overAtCurrentCosts}), refreshes every cost
   * and places again, so the bound holds within the slack after every write.
   */
  private void placeWithinBounds(Members members, Assignment assignment) {
    place(members, assignment);
    if (stale && overAtCurrentCosts(members, assignment)) {
      refresh(members, assignment);
    }
    reportOversize();
  }

  /**
   * The cost churn rule: a change of costs alone moves nothing while every collector carries at
   * most its cap times {@code 1 + }{@value #COST_SLACK} and, in a weighted placement, at least its
   * floor times {@code 1 - }{@value #COST_SLACK}, all at current costs (the bounds from the
   * current total). Past that, every target's cost is refreshed and the whole view is placed
   * again: the placement is then the pure function of the sets and their current costs, so
   * replicas that saw different cost histories agree again, and the bound holds whichever way the
   * costs drifted (a collector left heavy because the others' targets grew lighter is caught as
   * well as one whose own targets grew).
   */
  @Override
  public void costsChanged(IntList recosted, Members members, Assignment assignment) {
    int n = assignment.size();
    if (n == 0 || members.isEmpty() || recosted.isEmpty()) {
      return;
    }
    stale = true;
    if (overAtCurrentCosts(members, assignment)) {
      refresh(members, assignment);
      reportOversize();
    }
  }

  /** Forgets the costs of the last placement and places with the current ones. */
  private void refresh(Members members, Assignment assignment) {
    for (int i = 0; i < assignment.size(); i++) {
      forget(assignment.slotAt(i));
    }
    stale = false;
    place(members, assignment);
  }

  /**
   * Whether some collector of the view carries more than its cap times {@code 1 + }{@value
   * #COST_SLACK}, or less than its floor times {@code 1 - }{@value #COST_SLACK}, with the view's
   * current costs and bounds computed from their total; a collector the last placement could not
   * keep within its bound is measured from where it left it. Counts only the view's targets (a
   * view may be one partition, or per-node's pool).
   */
  private boolean overAtCurrentCosts(Members members, Assignment assignment) {
    int n = assignment.size();
    if (n == 0 || members.isEmpty()) {
      return false;
    }
    ring(members);
    if (current.length < byId.length) {
      current = new long[byId.length];
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
    computeCaps(members, total, n, assignment, weighted);
    long largestCap = 0;
    for (int i = 0; i < members.size(); i++) {
      largestCap = Math.max(largestCap, caps[members.get(i).id()]);
    }
    // A target costlier than every cap is placed alone wherever it fits best and keeps its
    // collector above the bound for good: it does not count, or one such target would turn
    // every drift into a re-placement. In a weighted placement the others' bounds are those of
    // the rest (as in place(), set aside until none is left).
    if (placedLoad.length < byId.length) {
      placedLoad = new long[byId.length];
      oversizeHeld = new boolean[byId.length];
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
      boundsWithoutOversize(members, total, n, oversizeTotal, oversizeCount, oversizeHeld);
      long next = largestCapOfOthers(members, oversizeHeld);
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
    for (int i = 0; i < members.size(); i++) {
      int id = members.get(i).id();
      // Measured from the bound, or, for a collector the last placement could not keep within
      // its bound then (a floor no nearby target could fill, a limit that took targets off),
      // from where it left it, scaled as its bound moved since: else every drift would
      // re-place. Only the placement's own miss counts, so a collector the other collectors'
      // drift pushes out of the band is caught either way.
      long then = placedLoad[id];
      boolean missedHigh = id < capsThen.length && then > capsThen[id];
      boolean missedLow = id < floorsThen.length && then < floorsThen[id];
      double high = missedHigh
          ? Math.max((double) caps[id], (double) then * caps[id] / capsThen[id]) : caps[id];
      double low = missedLow
          ? Math.min((double) floors[id], (double) then * floors[id] / floorsThen[id]) : floors[id];
      if (current[id] > high * (1 + COST_SLACK) || current[id] < low * (1 - COST_SLACK)) {
        return true;
      }
    }
    return false;
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
   */
  static long memberFloor(double loadFactor, long total, double capacity, double totalCapacity) {
    double x = (2 - loadFactor) * total * capacity / totalCapacity;
    return x <= 0 ? 0 : (long) Math.ceil(x - 1e-9);
  }

  // Scratch of the floor phase: by position in the view, the target's ring position; by token,
  // its first target strictly past it (both recorded by the first round's merge walk).
  private long[] position = new long[0];
  private int[] firstAfter = new int[0];
  /** By stream (a needy collector's token): the token's ring position. */
  private long[] streamPosition = new long[0];
  private int[] streamCursor = new int[0];
  private int[] streamFirst = new int[0];
  private long[] streamLimit = new long[0];
  /** By member id: its streams' range, and the scan's next slot and step. */
  private int[] streamStart = new int[0];
  private int[] streamEnd = new int[0];
  private int[] streamFill = new int[0];
  private int[] streamStep = new int[0];
  private long[] heap = new long[0];
  private boolean[] needy = new boolean[0];
  private boolean[] rich = new boolean[0];

  /**
   * The floor phase of a weighted placement (see the class comment). Each needy collector's
   * tokens are streams of the targets clockwise past them, up to its next token; a heap merges
   * them nearest first. Linear in the targets and tokens, plus at most {@code 16 n / c + 256}
   * heap steps per collector below its floor in each of the two passes.
   */
  private void fillFloors(Members members, int n) {
    int c = members.size();
    if (needy.length < byId.length) {
      needy = new boolean[byId.length];
      streamStart = new int[byId.length];
      streamEnd = new int[byId.length];
      streamFill = new int[byId.length];
      streamStep = new int[byId.length];
    }
    if (rich.length < byId.length) {
      rich = new boolean[byId.length];
    }
    int needyCount = 0;
    for (int i = 0; i < c; i++) {
      int id = members.get(i).id();
      needy[id] = loads[id] < floors[id];
      rich[id] = loads[id] >= (floors[id] + caps[id]) / 2;
      needyCount += needy[id] ? 1 : 0;
    }
    if (needyCount == 0) {
      return;
    }
    // The needy collectors' tokens, in ring order, with the first target past each: one pass
    // over the ring without a branch (a member has tokenCount(capacity) tokens on it; the other
    // members' tokens all go to one spare slot).
    int streams = 0;
    for (int i = 0; i < c; i++) {
      Member m = members.get(i);
      int id = m.id();
      streamStart[id] = streams;
      streams += needy[id] ? tokenCount(m.capacity()) : 0;
      streamEnd[id] = streams;
    }
    if (streamPosition.length < streams + 1) {
      streamPosition = new long[streams + 1];
      streamCursor = new int[streams + 1];
      streamFirst = new int[streams + 1];
      streamLimit = new long[streams + 1];
    }
    for (int i = 0; i < c; i++) {
      int id = members.get(i).id();
      streamFill[id] = needy[id] ? streamStart[id] : streams;
      streamStep[id] = needy[id] ? 1 : 0;
    }
    for (int t = 0; t < tokenCount; t++) {
      long token = tokens[t];
      int id = (int) (token & ID_MASK);
      int slot = streamFill[id];
      streamPosition[slot] = token & POSITION_MASK;
      streamFirst[slot] = firstAfter[t];
      streamFill[id] = slot + streamStep[id];
    }
    for (int i = 0; i < c; i++) {
      int id = members.get(i).id();
      if (needy[id] && streamFill[id] != streamEnd[id]) {
        throw new IllegalStateException("the ring does not hold member " + id + "'s tokens");
      }
    }
    // Each stream ends at the collector's next token (past it are its own targets).
    for (int i = 0; i < c; i++) {
      int id = members.get(i).id();
      if (!needy[id]) {
        continue;
      }
      int from = streamStart[id];
      int to = streamEnd[id];
      for (int s = from; s < to; s++) {
        int nextS = s + 1 < to ? s + 1 : from;
        long a = streamPosition[s];
        long b = streamPosition[nextS];
        streamLimit[s] = nextS == s ? -1L : b - a;
      }
    }
    // First from collectors at or above the middle of their band (a pull then rarely decides
    // whether a later collector may pull), then from any that stays at or above its floor.
    int budget = 16 * (n / c) + 256;
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < c; i++) {
        int y = members.get(i).id();
        if (needy[y] && loads[y] < floors[y]) {
          pull(y, n, budget, pass == 0);
        }
      }
    }
  }

  /**
   * Collector {@code y} takes, nearest past its tokens first, the targets that fit under its cap
   * and whose collector stays at or above its floor (and, if {@code richOnly}, was at or above
   * the middle of its band before the floor phase), until it reaches its floor or has looked at
   * {@code budget} targets.
   */
  private void pull(int y, int n, int budget, boolean richOnly) {
    int from = streamStart[y];
    int to = streamEnd[y];
    if (heap.length < to - from) {
      heap = new long[to - from];
    }
    int size = 0;
    for (int s = from; s < to; s++) {
      streamCursor[s] = streamFirst[s];
      long delta = position[streamCursor[s]] - streamPosition[s];
      if (Long.compareUnsigned(delta, streamLimit[s]) < 0) {
        size = heapPush(heap, size, (delta >>> 1) | (s - from));
      }
    }
    int pops = 0;
    while (size > 0 && loads[y] < floors[y] && pops++ < budget) {
      long top = heap[0];
      size = heapPop(heap, size);
      int s = from + (int) (top & 0xFFFF);
      int t = streamCursor[s];
      int d = chosen[t];
      long ct = cost[t];
      if (d != y && distance[t] != -1 && loads[d] - ct >= floors[d] && (!richOnly || rich[d])
          && room(y, ct)) {
        loads[d] -= ct;
        counts[d]--;
        chosen[t] = y;
        take(y, ct);
      }
      int nextT = t + 1 == n ? 0 : t + 1;
      streamCursor[s] = nextT;
      long delta = position[nextT] - streamPosition[s];
      // Past the collector's next token, or once round the ring, the stream ends.
      if (Long.compareUnsigned(delta, streamLimit[s]) < 0 && nextT != streamFirst[s]) {
        size = heapPush(heap, size, (delta >>> 1) | (s - from));
      }
    }
  }

  private static int heapPush(long[] h, int size, long key) {
    int k = size;
    while (k > 0) {
      int parent = (k - 1) >>> 1;
      if (h[parent] <= key) {
        break;
      }
      h[k] = h[parent];
      k = parent;
    }
    h[k] = key;
    return size + 1;
  }

  private static int heapPop(long[] h, int size) {
    int last = size - 1;
    long key = h[last];
    int k = 0;
    while (true) {
      int child = 2 * k + 1;
      if (child >= last) {
        break;
      }
      if (child + 1 < last && h[child + 1] < h[child]) {
        child++;
      }
      if (h[child] >= key) {
        break;
      }
      h[k] = h[child];
      k = child;
    }
    h[k] = key;
    return last;
  }

  private int tokenCount(double capacity) {
    return (int) Math.max(16, Math.min(1 << 16, Math.round(virtualNodes * capacity)));
  }

  // Identity, on purpose: a Members is immutable, and a new one means the set changed.
  @SuppressWarnings("ReferenceEquality")
  private void ring(Members members) {
    if (ringFor == members) {
      return;
    }
    int maxId = 0;
    for (int i = 0; i < members.size(); i++) {
      maxId = Math.max(maxId, members.get(i).id());
    }
    if (maxId > ID_MASK) {
      throw new IllegalStateException("member id " + maxId + " does not fit the ring");
    }
    byId = byId.length > maxId ? byId : new Member[maxId + 1];
    Arrays.fill(byId, null);
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      byId[m.id()] = m;
    }
    // Keep the tokens of members still here under the same id, name and capacity; make the
    // others'.
    // Compacted in place, in order (the write index never passes the read index).
    // Which ids keep their tokens, decided once per id, not once per token.
    boolean[] keep = new boolean[ringIds.length];
    for (int id = 0; id < keep.length; id++) {
      keep[id] = onRing(id);
    }
    int k = 0;
    for (int i = 0; i < tokenCount; i++) {
      long t = tokens[i];
      int id = (int) (t & ID_MASK);
      if (id < keep.length && keep[id]) {
        tokens[k++] = t;
      }
    }
    int fresh = 0;
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      fresh += onRing(m.id()) ? 0 : tokenCount(m.capacity());
    }
    // A ring built from nothing (a first placement) is written and sorted where it stays.
    boolean inPlace = k == 0;
    if (inPlace && tokens.length < fresh) {
      tokens = new long[Slots.withHeadroom(fresh)];
    }
    long[] added = inPlace ? tokens : new long[fresh];
    int a = 0;
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      if (!onRing(m.id())) {
        int count = tokenCount(m.capacity());
        for (int j = 0; j < count; j++) {
          long pos = HashRings.mix(m.hash() + (j + 1) * GOLDEN) & POSITION_MASK;
          // Flipped sign bit: the signed sort orders them as unsigned numbers.
          added[a++] = (pos | m.id()) ^ Long.MIN_VALUE;
        }
      }
    }
    longSort.sort(added, a);
    for (int i = 0; i < a; i++) {
      added[i] ^= Long.MIN_VALUE;
    }
    // Merged in place from the back, so a rebuild allocates only the new members' tokens (and a
    // larger buffer when the ring outgrows its own).
    if (!inPlace) {
      if (tokens.length < k + a) {
        // With headroom for a few more members, so that adding one does not copy the ring.
        tokens = Arrays.copyOf(tokens, Slots.withHeadroom(k + a));
      }
      mergeFromTheBack(tokens, k, added, a);
    }
    tokenCount = k + a;
    ringIds = new Member[byId.length];
    ringCapacity = new double[byId.length];
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      ringIds[m.id()] = m;
      ringCapacity[m.id()] = m.capacity();
    }
    ringFor = members;
  }

  /** Whether the ring's tokens for {@code id} belong to the member that has it now. */
  @SuppressWarnings("ReferenceEquality") // the same Member object: same name, so same tokens
  private boolean onRing(int id) {
    return id < ringIds.length && ringIds[id] != null && ringIds[id] == byId[id]
        && ringCapacity[id] == byId[id].capacity();
  }

  /**
   * Merges the ascending (unsigned) {@code y[0 .. yn)} into the ascending {@code x[0 .. xn)},
   * in place: {@code x} must hold {@code xn + yn}. Equal values keep {@code x}'s first.
   */
  private static void mergeFromTheBack(long[] x, int xn, long[] y, int yn) {
    int i = xn - 1;
    int j = yn - 1;
    int w = xn + yn - 1;
    while (j >= 0) {
      if (i >= 0 && Long.compareUnsigned(x[i], y[j]) > 0) {
        x[w--] = x[i--];
      } else {
        x[w--] = y[j--];
      }
    }
  }

  /** The index of the first token at or clockwise after {@code key}. */
  private int tokenIndex(long key) {
    long q = key & POSITION_MASK;
    int lo = 0;
    int hi = tokenCount;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (Long.compareUnsigned(tokens[mid] & POSITION_MASK, q) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo == tokenCount ? 0 : lo;
  }

  /**
   * Fills {@code cost[0 .. n)} with the cost each target of the view is placed with: a slot
   * keeps the cost it was last placed with while it holds the same target; a new target brings
   * its current cost. One pass in view order, reading the hashes in order and one cache line of
   * {@link #placed} per slot.
   *
   * @return the view's total placed cost
   */
  private long placedCosts(Assignment assignment, int n) {
    int maxSlot = 0;
    for (int i = 0; i < n; i++) {
      maxSlot = Math.max(maxSlot, assignment.slotAt(i));
    }
    if (placed.length <= 2 * maxSlot + 1) {
      // The engine's slots have headroom for a few percent of new targets: so does this array,
      // or the first small change after a full placement would copy it.
      int size = Math.max(Slots.withHeadroom(maxSlot + 1), placed.length);
      placed = Arrays.copyOf(placed, 2 * size);
    }
    long[] p = placed;
    long total = 0;
    boolean unit = true;
    for (int i = 0; i < n; i++) {
      int slot = assignment.slotAt(i);
      long h = assignment.hashAt(i);
      long c = p[2 * slot + 1] - 1;
      if (c < 0 || p[2 * slot] != h) {
        p[2 * slot] = h;
        c = assignment.cost(slot);
        p[2 * slot + 1] = c + 1;
      }
      cost[i] = c;
      total += c;
      unit &= c == 1;
    }
    unitCosts = unit;
    return total;
  }

  /**
   * Each member's cap ({@link #memberCap}), no higher than its per-collector cost limit, and its
   * per-collector target limit net of what the member holds outside this view: the placer keeps
   * within both, so the engine's limit rule ({@link CollectorLimits}) rarely has to take back
   * what this placer put down (only the fits-best fallback of a target with room nowhere, and
   * cost held outside the view, which the cost cap does not see).
   */
  private void computeCaps(Members members, long total, int n, Assignment heldOutside,
      boolean weighted) {
    // The grid step: the mean target cost, rounded down to a power of two so that it stays put
    // while targets come and go (a step that followed every change would shift every grid).
    long mean = Math.max(1, total / Math.max(1, n));
    double granule = Long.highestOneBit(mean);
    if (caps.length < byId.length) {
      caps = new long[byId.length];
      floors = new long[byId.length];
      loads = new long[byId.length];
      countCaps = new int[byId.length];
      counts = new int[byId.length];
    }
    // One-sided (per-node's pool), a weighted placement keeps the count's load factor: the pool
    // is bounded as it always was.
    double factor = weighted && twoSided ? costLoadFactor : loadFactor;
    int c = members.size();
    for (int i = 0; i < c; i++) {
      Member m = members.get(i);
      caps[m.id()] = Math.min(m.costLimit(), memberCap(factor, total, c, m.hash(),
          m.capacity(), members.totalCapacity(), members.uniformCapacity(), granule));
      floors[m.id()] = weighted && twoSided
          ? Math.min(caps[m.id()], memberFloor(factor, total, m.capacity(),
              members.totalCapacity()))
          : 0;
      int limit = m.targetLimit();
      countCaps[m.id()] = limit == Integer.MAX_VALUE ? limit
          : Math.max(0, limit - heldOutside.heldOutside(m));
    }
  }

  /**
   * The bounds when some targets cost more than every cap: those are placed alone and cannot be
   * shared, so the other collectors' caps and floors are those of the rest of the cost on the
   * rest of the collectors (else the caps would let them carry far more than their share of what
   * can be shared, and the floors would ask for more than there is), and the floor of a collector
   * holding one is 0. Caps only shrink, so another target may now cost more than every cap:
   * the callers set aside again until none does.
   */
  private void boundsWithoutOversize(Members members, long total, int n, long oversizeTotal,
      int oversizeCount, boolean[] holds) {
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

  /** The largest cap of the members holding no target set aside; 0 when every one holds one. */
  private long largestCapOfOthers(Members members, boolean[] holds) {
    long largest = 0;
    for (int i = 0; i < members.size(); i++) {
      int id = members.get(i).id();
      if (!holds[id]) {
        largest = Math.max(largest, caps[id]);
      }
    }
    return largest;
  }

  /** Whether one more target of {@code targetCost} fits under member {@code id}'s caps. */
  private boolean room(int id, long targetCost) {
    return loads[id] + targetCost <= caps[id] && counts[id] < countCaps[id];
  }

  private void take(int id, long targetCost) {
    loads[id] += targetCost;
    counts[id]++;
  }

  private void place(Members members, Assignment assignment) {
    int n = assignment.size();
    if (n == 0) {
      lastOversize = 0;
      return;
    }
    ring(members);
    if (chosen.length < n) {
      chosen = new int[n];
      cost = new long[n];
      distance = new long[n];
      keys = new long[n];
    }
    long total = placedCosts(assignment, n);
    boolean weighted = !unitCosts || !members.uniformCapacity();
    computeCaps(members, total, n, assignment, weighted);
    int c = members.size();
    Arrays.fill(loads, 0);
    Arrays.fill(counts, 0);
    long largestCap = 0;
    for (int i = 0; i < c; i++) {
      largestCap = Math.max(largestCap, caps[members.get(i).id()]);
    }
    pending.clear();
    // A target costlier than every cap goes first, where it fits best; no other target joins it
    // on a collector it fills.
    int oversize = 0;
    if (oversizeLoad.length < byId.length) {
      oversizeLoad = new long[byId.length];
      capsThen = new long[byId.length];
      floorsThen = new long[byId.length];
    }
    Arrays.fill(oversizeLoad, 0);
    for (int i = 0; i < n; i++) {
      distance[i] = 0;
    }
    // Set aside until none is left: the others' bounds are then those of the rest, which can
    // make another target costlier than every cap.
    long limit = largestCap;
    while (true) {
      int found = 0;
      for (int i = 0; i < n; i++) {
        if (distance[i] != -1 && cost[i] > limit) {
          chosen[i] = fitsBest(members, cost[i]);
          take(chosen[i], cost[i]);
          oversizeLoad[chosen[i]] += cost[i];
          distance[i] = -1;
          found++;
        }
      }
      oversize += found;
      if (found == 0 || !(weighted && twoSided)) {
        break;
      }
      if (oversizeHeld.length < byId.length) {
        placedLoad = new long[byId.length];
        oversizeHeld = new boolean[byId.length];
      }
      long oversizeTotal = 0;
      for (int i = 0; i < c; i++) {
        int id = members.get(i).id();
        oversizeHeld[id] = oversizeLoad[id] > 0;
        oversizeTotal += oversizeLoad[id];
      }
      boundsWithoutOversize(members, total, n, oversizeTotal, oversize, oversizeHeld);
      long next = largestCapOfOthers(members, oversizeHeld);
      if (next >= limit) {
        break;
      }
      limit = next;
    }
    largestCap = limit;
    lastOversize = oversize;
    lastLargestCap = largestCap;
    proposeToOwners(assignment, n, members, weighted && twoSided && c > 1);
    int idBits = Math.max(1, 32 - Integer.numberOfLeadingZeros(byId.length - 1));
    int indexBits = Math.max(1, 32 - Integer.numberOfLeadingZeros(n - 1));
    // Round 1: the owners offered more than their cap keep the closest.
    int k = 0;
    for (int i = 0; i < n; i++) {
      if (distance[i] == -1) {
        continue;
      }
      int id = chosen[i];
      if (offered[id] > caps[id] || offeredCount[id] > countCaps[id]) {
        keys[k++] = key(id, distance[i], i, idBits, indexBits);
      } else {
        take(id, cost[i]);
      }
    }
    accept(k, idBits, indexBits);
    for (int round = 1; round <= PROBE_ROUNDS && !pending.isEmpty(); round++) {
      k = 0;
      for (int p = 0; p < pending.size(); p++) {
        int i = pending.get(p);
        long probe = HashRings.mix(assignment.hashAt(i) + round * PROBE_GAMMA);
        int t = tokenIndex(probe);
        int id = (int) (tokens[t] & ID_MASK);
        if (room(id, cost[i])) {
          keys[k++] = key(id, (tokens[t] & POSITION_MASK) - (probe & POSITION_MASK), i, idBits,
              indexBits);
        } else {
          next.add(i);
        }
      }
      pending.clear();
      accept(k, idBits, indexBits);
      for (int p = 0; p < next.size(); p++) {
        pending.add(next.get(p));
      }
      next.clear();
    }
    Arrays.sort(pending.array(), 0, pending.size());
    for (int p = 0; p < pending.size(); p++) {
      int i = pending.get(p);
      chosen[i] = clockwiseWithRoom(members, assignment.hashAt(i), cost[i]);
      take(chosen[i], cost[i]);
    }
    pending.clear();
    if (weighted && twoSided && c > 1) {
      fillFloors(members, n);
    }
    for (int i = 0; i < c; i++) {
      int id = members.get(i).id();
      capsThen[id] = caps[id];
      floorsThen[id] = floors[id];
    }
    largestCapThen = largestCap;
    for (int i = 0; i < n; i++) {
      int slot = assignment.slotAt(i);
      Member m = byId[chosen[i]];
      if (assignment.ownerOf(slot) != m) {
        assignment.place(slot, m);
      }
    }
    if (n > (1 << 16)) {
      longSort.release();
    }
  }

  /** Per member id: the cost offered in round 1, and how many targets. */
  private long[] offered = new long[0];
  private int[] offeredCount = new int[0];

  /**
   * Round 1's proposals, by one merge walk: the view is in identity-hash order (unsigned), and so
   * are the tokens. Sums the cost offered to each collector, with what it already holds. Skips
   * the targets already placed (distance -1).
   */
  private void proposeToOwners(Assignment assignment, int n, Members members,
      boolean recordArcs) {
    if (offered.length < byId.length) {
      offered = new long[byId.length];
      offeredCount = new int[byId.length];
    }
    Arrays.fill(offered, 0);
    Arrays.fill(offeredCount, 0);
    long[] ring = tokens;
    int count = tokenCount;
    if (recordArcs) {
      if (position.length < n) {
        position = new long[n];
      }
      if (firstAfter.length < count) {
        firstAfter = new int[tokens.length];
      }
    }
    int t = 0;
    for (int i = 0; i < n; i++) {
      long q = assignment.hashAt(i) & POSITION_MASK;
      if (recordArcs) {
        // For the floor phase: each token's first target strictly past it.
        position[i] = q;
        while (t < count && Long.compareUnsigned(ring[t] & POSITION_MASK, q) < 0) {
          firstAfter[t++] = i;
        }
      } else {
        while (t < count && Long.compareUnsigned(ring[t] & POSITION_MASK, q) < 0) {
          t++;
        }
      }
      if (distance[i] == -1) {
        continue;
      }
      long token = ring[t == count ? 0 : t];
      int id = (int) (token & ID_MASK);
      chosen[i] = id;
      // Never -1: the distance is below 2^64 - 2^20 (positions have their low bits clear).
      distance[i] = (token & POSITION_MASK) - q;
      offered[id] += cost[i];
      offeredCount[id]++;
    }
    if (recordArcs) {
      for (int u = t; u < count; u++) {
        firstAfter[u] = 0;
      }
    }
    // What a collector already holds (a target no cap can hold) counts as offered too.
    for (int i = 0; i < members.size(); i++) {
      int id = members.get(i).id();
      offered[id] += loads[id];
      offeredCount[id] += counts[id];
    }
  }

  /**
   * A sort key: collector id, then the top bits of the distance, then the position in the
   * view (the deterministic tie-break), packed into a non-negative long.
   */
  private static long key(int id, long distance, int i, int idBits, int indexBits) {
    int distanceBits = 63 - idBits - indexBits;
    return ((long) id << (63 - idBits)) | ((distance >>> (64 - distanceBits)) << indexBits) | i;
  }

  /**
   * Sorts {@code keys[0 .. k)} and lets each collector keep, closest first, every proposal that
   * still fits under its cap; the rejected go to {@link #pending}.
   */
  private void accept(int k, int idBits, int indexBits) {
    longSort.sort(keys, k);
    long indexMask = (1L << indexBits) - 1;
    int blockedId = -1;
    for (int j = 0; j < k; j++) {
      int id = (int) (keys[j] >>> (63 - idBits));
      int i = (int) (keys[j] & indexMask);
      // Closest first, and the first that does not fit closes the collector for this round: a
      // small change of its cap or of one target's cost then moves only the boundary, where
      // skipping to smaller, farther proposals would re-pack the whole tail.
      if (id == blockedId) {
        pending.add(i);
        continue;
      }
      if (room(id, cost[i])) {
        take(id, cost[i]);
        chosen[i] = id;
      } else {
        blockedId = id;
        pending.add(i);
      }
    }
  }

  /**
   * The first collector clockwise from {@code hash} with room for {@code targetCost}, or where it
   * fits best when none has.
   */
  private int clockwiseWithRoom(Members members, long hash, long targetCost) {
    boolean any = false;
    for (int i = 0; i < members.size() && !any; i++) {
      any = room(members.get(i).id(), targetCost);
    }
    if (!any) {
      // Past every limit: no walk of the whole ring for each target left over.
      return fitsBest(members, targetCost);
    }
    int start = tokenIndex(hash);
    for (int step = 0; step < tokenCount; step++) {
      int id = (int) (tokens[(start + step) % tokenCount] & ID_MASK);
      if (room(id, targetCost)) {
        return id;
      }
    }
    return fitsBest(members, targetCost);
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

  /**
   * The collector whose load relative to its capacity is the least once {@code targetCost} is
   * added; ties to the smaller name. For a target no cap can hold.
   */
  private int fitsBest(Members members, long targetCost) {
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
}
