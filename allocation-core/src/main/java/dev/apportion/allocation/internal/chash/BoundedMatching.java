package dev.apportion.allocation.internal.chash;

import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.collections.LongSort;
import dev.apportion.allocation.internal.collections.Passes;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.ring.HashRings;
import java.util.Arrays;

/**
 * The matching rounds of {@link ConsistentHashingPlacer}: a deferred-acceptance matching (Gale
 * and Shapley) of the view's targets to the ring's collectors, within their {@link LoadBounds},
 * in rounds:
 * <ol>
 *   <li>a target costlier than every cap is set aside first and placed alone where it fits best
 *       ({@link LoadBounds#fitsBest}); in a two-sided bound the others' bounds are then those of
 *       the rest ({@link LoadBounds#withoutOversize}), until no target is left costlier than
 *       every cap;
 *   <li>every other target proposes to the collector owning its hash on the ring; a collector
 *       offered more than its cap keeps the targets <em>closest to its tokens</em> (the shortest
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
 * <p>Round 1 is one merge walk of the targets (already in identity-hash order) against the sorted
 * tokens, and a radix sort of the proposals to over-full collectors; the probe rounds are short.
 * The result is in {@link ViewScratch#chosen}; the scratch arrays are kept between calls, sized to
 * the largest placement seen, but for the sort keys, which a placer may let go after a large
 * placement ({@link #releaseKeys}).
 */
final class BoundedMatching {
  /** Probe rounds before the clockwise fallback. */
  static final int PROBE_ROUNDS = 32;
  /** Odd constant for the probe sequence (not the token sequence's). */
  private static final long PROBE_GAMMA = 0xD1B54A32D192ED03L;

  private static final long[] NO_KEYS = {};
  /**
   * Above this many tokens a target, {@link #proposeToOwners} finds each target's token by a
   * search instead of walking the ring (the walk costs a token, the search about two a doubling).
   */
  static final int SEARCH_ABOVE_TOKENS_PER_TARGET = 16;

  private final TokenRing ring;
  private final LoadBounds bounds;
  private final ViewScratch scratch;
  private final LongSort longSort;

  /** By position in the view: the sort keys of a round's proposals ({@link #key}). */
  private long[] keys = NO_KEYS;
  /** The positions rejected in this round, and those without room in the next. */
  private final IntList pending = new IntList();
  private final IntList next = new IntList();
  /** Per member id: the cost offered in round 1, and how many targets. */
  private long[] offered = new long[0];
  private int[] offeredCount = new int[0];
  /** Per member id: the cost of the targets set aside on it, and whether it holds one. */
  private long[] oversizeLoad = new long[0];
  private boolean[] oversizeHeld = new boolean[0];

  /**
   * The last match's round 1: the positions its owners rejected, and each one's owner (for
   * {@link IncrementalMatching}, which starts the next change from it).
   */
  private final IntList firstRoundRejected = new IntList();
  private final IntList firstRoundOwner = new IntList();

  /** The id and index bits of the keys of the match under way, between its two halves. */
  private int idBits;
  private int indexBits;

  /** The last match's targets costlier than every cap, and its largest cap. */
  private int oversize;
  private long largestCap;

  /**
   * A matching over shared parts of the placer.
   *
   * @param ring the ring, updated to the members before each {@link #match}
   * @param bounds the bounds, computed and with loads cleared before each {@link #match}
   * @param scratch the placement, with every target's cost before each {@link #match}
   * @param longSort the sorter for the proposals
   */
  BoundedMatching(TokenRing ring, LoadBounds bounds, ViewScratch scratch, LongSort longSort) {
    this.ring = ring;
    this.bounds = bounds;
    this.scratch = scratch;
    this.longSort = longSort;
  }

  /**
   * Matches the view's targets to the members: fills {@link ViewScratch#chosen} (and, for the
   * floor phase when {@code recordArcs}, {@link ViewScratch#position} and
   * {@link ViewScratch#firstAfter}), and leaves each member's load and count in the bounds.
   *
   * @param members the members, not empty
   * @param assignment the view, not empty
   * @param total the view's total cost
   * @param twoSidedBound whether the bound has floors (the caps then shrink when targets are set
   *     aside)
   * @param recordArcs whether to record the arcs for the floor phase
   */
  void match(Members members, Assignment assignment, long total, boolean twoSidedBound,
      boolean recordArcs) {
    matchRoundOne(members, assignment, total, twoSidedBound, recordArcs);
    finishMatch(members, assignment);
  }

  /**
   * The first half of {@link #match} (same parameters): round 1, in which every target proposes
   * to the owner of its hash and an owner offered more than its cap keeps the closest. Returns
   * what it decided for the owners over their caps: their proposals' sorted keys, {@link
   * #roundOneKeys()}{@code [0 .. k)}, grouped by owner (the id is a key's top {@link
   * #roundOneIdBits()} bits), valid until {@link #finishMatch}, which must follow.
   *
   * @return {@code k}
   */
  int matchRoundOne(Members members, Assignment assignment, long total, boolean twoSidedBound,
      boolean recordArcs) {
    int n = assignment.size();
    if (keys.length < n) {
      keys = new long[n];
    }
    pending.clear();
    // A target costlier than every cap goes first, where it fits best; no other target joins it
    // on a collector it fills.
    oversize = setAside(members, n, total, twoSidedBound);
    proposeToOwners(assignment, n, members, recordArcs);
    idBits = idBits(ring.idSpan());
    indexBits = indexBits(n);
    // Round 1: the owners offered more than their cap keep the closest.
    int k = 0;
    for (int from = 0; from < n; from += Passes.CHUNK) {
      k = roundOne(from, Passes.end(from, n), k, idBits, indexBits);
    }
    accept(k, idBits, indexBits);
    return k;
  }

  /**
   * The sorted keys of {@link #matchRoundOne}, valid until {@link #finishMatch}.
   *
   * @return the array; its first {@code k} values
   */
  long[] roundOneKeys() {
    return keys;
  }

  /**
   * The bits of a {@link #roundOneKeys} key that hold its owner's id.
   *
   * @return the count
   */
  int roundOneIdBits() {
    return idBits;
  }

  /**
   * The second half of {@link #match}: the probe rounds for the targets round 1 rejected, then
   * the clockwise walk for the few left.
   *
   * @param members the members of {@link #matchRoundOne}
   * @param assignment the view of {@link #matchRoundOne}
   */
  void finishMatch(Members members, Assignment assignment) {
    int[] chosen = scratch.chosen;
    firstRoundRejected.clear();
    firstRoundOwner.clear();
    for (int p = 0; p < pending.size(); p++) {
      // A rejected target's chosen is still its owner: accept() writes only the accepted.
      firstRoundRejected.add(pending.get(p));
      firstRoundOwner.add(chosen[pending.get(p)]);
    }
    probeRounds(members, assignment, idBits, indexBits);
  }

  /**
   * Round 1 over positions {@code [from, to)} ({@link Passes}): a target offered to an owner
   * within its caps is taken, one offered to an owner over them gets a sort key at {@code k};
   * returns the next key's place.
   */
  private int roundOne(int from, int to, int k, int idBits, int indexBits) {
    long[] cost = scratch.cost;
    long[] distance = scratch.distance;
    int[] chosen = scratch.chosen;
    for (int i = from; i < to; i++) {
      if (distance[i] == -1) {
        continue;
      }
      int id = chosen[i];
      if (offered[id] > bounds.cap(id) || offeredCount[id] > bounds.countCap(id)) {
        keys[k++] = key(id, distance[i], i, idBits, indexBits);
      } else {
        bounds.take(id, cost[i]);
      }
    }
    return k;
  }

  /**
   * Lets go of the sort keys' array, scratch between operations, which a full placement sizes to
   * its view (8 bytes a target): a later change allocates what its own rounds need, and the
   * next full placement its view's size again.
   */
  void releaseKeys() {
    keys = NO_KEYS;
  }

  /**
   * The probe rounds and the clockwise fallback for {@code positions} (round 1's rejected, in
   * any order), the members' loads and counts being those round 1 left: exactly the rest of
   * {@link #match}, for a round 1 computed elsewhere ({@link IncrementalMatching}). Fills
   * {@link ViewScratch#chosen} at those positions; their {@link ViewScratch#cost} must be set.
   *
   * @param positions the positions in the view, each once
   * @param members the members
   * @param assignment the view
   * @param idBits bits of a member id in the sort keys
   * @param indexBits bits of a position in the sort keys
   */
  void probeFrom(IntList positions, Members members, Assignment assignment, int idBits,
      int indexBits) {
    if (keys.length < positions.size()) {
      // Doubling: after the keys were let go, changes a little larger each time do not each
      // allocate again.
      keys = new long[Math.max(positions.size(), 2 * keys.length)];
    }
    pending.clear();
    for (int p = 0; p < positions.size(); p++) {
      pending.add(positions.get(p));
    }
    probeRounds(members, assignment, idBits, indexBits);
  }

  private void probeRounds(Members members, Assignment assignment, int idBits, int indexBits) {
    long[] cost = scratch.cost;
    int[] chosen = scratch.chosen;
    int k;
    for (int round = 1; round <= PROBE_ROUNDS && !pending.isEmpty(); round++) {
      k = 0;
      for (int p = 0; p < pending.size(); p++) {
        int i = pending.get(p);
        long probe = HashRings.mix(assignment.hashAt(i) + round * PROBE_GAMMA);
        int t = ring.tokenIndex(probe);
        int id = ring.idAt(t);
        if (bounds.room(id, cost[i])) {
          keys[k++] = key(id, ring.positionAt(t) - (probe & TokenRing.POSITION_MASK), i, idBits,
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
      bounds.take(chosen[i], cost[i]);
    }
    pending.clear();
  }

  /**
   * Places every target costlier than every cap where it fits best, marks it with distance -1,
   * and, in a two-sided bound, shrinks the others' bounds to the rest ({@link
   * LoadBounds#withoutOversize}) until no target is left costlier than every cap. Sets
   * {@link #largestCap()}.
   *
   * @return how many targets were set aside
   */
  private int setAside(Members members, int n, long total, boolean twoSidedBound) {
    int count = 0;
    if (oversizeLoad.length < ring.idSpan()) {
      oversizeLoad = new long[ring.idSpan()];
    }
    Arrays.fill(oversizeLoad, 0);
    Arrays.fill(scratch.distance, 0, n, 0L);
    // Set aside until none is left: the others' bounds are then those of the rest, which can
    // make another target costlier than every cap.
    long limit = bounds.largestCap(members);
    while (true) {
      int found = 0;
      for (int from = 0; from < n; from += Passes.CHUNK) {
        found += setAside(members, from, Passes.end(from, n), limit);
      }
      count += found;
      if (found == 0 || !twoSidedBound) {
        break;
      }
      if (oversizeHeld.length < ring.idSpan()) {
        oversizeHeld = new boolean[ring.idSpan()];
      }
      long oversizeTotal = 0;
      for (int id : members.ids()) {
        oversizeHeld[id] = oversizeLoad[id] > 0;
        oversizeTotal += oversizeLoad[id];
      }
      bounds.withoutOversize(members, total, n, oversizeTotal, count, oversizeHeld);
      long nextLimit = bounds.largestCapOfOthers(members, oversizeHeld);
      if (nextLimit >= limit) {
        break;
      }
      limit = nextLimit;
    }
    largestCap = limit;
    return count;
  }

  /**
   * Sets aside the targets of positions {@code [from, to)} ({@link Passes}) that cost more than
   * {@code limit} and are not set aside yet: each where it fits best. Returns how many.
   */
  private int setAside(Members members, int from, int to, long limit) {
    long[] cost = scratch.cost;
    long[] distance = scratch.distance;
    int[] chosen = scratch.chosen;
    int found = 0;
    for (int i = from; i < to; i++) {
      if (distance[i] != -1 && cost[i] > limit) {
        chosen[i] = bounds.fitsBest(members, cost[i]);
        bounds.take(chosen[i], cost[i]);
        oversizeLoad[chosen[i]] += cost[i];
        distance[i] = -1;
        found++;
      }
    }
    return found;
  }

  /**
   * Round 1's proposals, by one merge walk: the view is in identity-hash order (unsigned), and so
   * are the tokens. Sums the cost offered to each collector, with what it already holds. Skips
   * the targets already placed (distance -1).
   */
  private void proposeToOwners(Assignment assignment, int n, Members members,
      boolean recordArcs) {
    if (offered.length < ring.idSpan()) {
      offered = new long[ring.idSpan()];
      offeredCount = new int[ring.idSpan()];
    }
    Arrays.fill(offered, 0);
    Arrays.fill(offeredCount, 0);
    int count = ring.size();
    if (recordArcs) {
      scratch.ensureArcs(n, count, ring.bufferLength());
    }
    // Few targets on a large ring (a pool, a change's probe): each finds its token by a search,
    // not by a walk over every token between it and the last.
    boolean search = count > (long) SEARCH_ABOVE_TOKENS_PER_TARGET * n;
    int t = 0;
    for (int from = 0; from < n; from += Passes.CHUNK) {
      t = propose(assignment, from, Passes.end(from, n), t, count, search, recordArcs);
    }
    if (recordArcs) {
      Arrays.fill(scratch.firstAfter, t, count, 0);
    }
    // What a collector already holds (a target no cap can hold) counts as offered too.
    bounds.addHeld(members.ids(), offered, offeredCount);
  }

  /**
   * {@link #proposeToOwners}' walk over positions {@code [from, to)} ({@link Passes}), from token
   * {@code t} on; returns the token it reached.
   */
  private int propose(Assignment assignment, int from, int to, int t, int count, boolean search,
      boolean recordArcs) {
    long[] cost = scratch.cost;
    long[] distance = scratch.distance;
    int[] chosen = scratch.chosen;
    long[] position = scratch.position;
    int[] firstAfter = scratch.firstAfter;
    for (int i = from; i < to; i++) {
      long q = assignment.hashAt(i) & TokenRing.POSITION_MASK;
      if (search) {
        int next = firstNotBelow(t, count, q);
        if (recordArcs) {
          position[i] = q;
          Arrays.fill(firstAfter, t, next, i);
        }
        t = next;
      } else if (recordArcs) {
        // For the floor phase: each token's first target strictly past it.
        position[i] = q;
        while (t < count && Long.compareUnsigned(ring.positionAt(t), q) < 0) {
          firstAfter[t++] = i;
        }
      } else {
        while (t < count && Long.compareUnsigned(ring.positionAt(t), q) < 0) {
          t++;
        }
      }
      if (distance[i] == -1) {
        continue;
      }
      int owner = t == count ? 0 : t;
      int id = ring.idAt(owner);
      chosen[i] = id;
      // Never -1: the distance is below 2^64 - 2^20 (positions have their low bits clear).
      distance[i] = ring.positionAt(owner) - q;
      offered[id] += cost[i];
      offeredCount[id]++;
    }
    return t;
  }

  /**
   * The first token index from {@code t} on (up to {@code count}) whose position is not below
   * {@code q}, unsigned: what the walk of {@link #proposeToOwners} reaches, found by galloping
   * from {@code t} and a binary search, in about {@code 2 log2} of the tokens skipped.
   */
  int firstNotBelow(int t, int count, long q) {
    if (t >= count || Long.compareUnsigned(ring.positionAt(t), q) >= 0) {
      return t;
    }
    // Invariant: the token at lo is below q; the one at hi (when hi < count) is not.
    int lo = t;
    int step = 1;
    int hi = count - lo > step ? lo + step : count;
    while (hi < count && Long.compareUnsigned(ring.positionAt(hi), q) < 0) {
      lo = hi;
      step = step < 1 << 29 ? step << 1 : step;
      hi = count - lo > step ? lo + step : count;
    }
    while (hi - lo > 1) {
      int mid = (lo + hi) >>> 1;
      if (Long.compareUnsigned(ring.positionAt(mid), q) < 0) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return hi;
  }

  /**
   * A sort key: collector id, then the top bits of the distance, then the position in the
   * view (the deterministic tie-break), packed into a non-negative long.
   *
   * @param id the collector's id, below {@code 2^idBits}
   * @param distance the clockwise distance from the target to the collector's token
   * @param i the target's position in the view, below {@code 2^indexBits}
   * @param idBits bits for the id
   * @param indexBits bits for the position
   * @return the key
   */
  static long key(int id, long distance, int i, int idBits, int indexBits) {
    int distanceBits = 63 - idBits - indexBits;
    return ((long) id << (63 - idBits)) | ((distance >>> (64 - distanceBits)) << indexBits) | i;
  }

  /**
   * Sorts {@code keys[0 .. k)} and lets each collector keep, closest first, every proposal that
   * still fits under its cap; the rejected go to {@link #pending}.
   */
  private void accept(int k, int idBits, int indexBits) {
    long[] cost = scratch.cost;
    int[] chosen = scratch.chosen;
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
      if (bounds.room(id, cost[i])) {
        bounds.take(id, cost[i]);
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
      any = bounds.room(members.get(i).id(), targetCost);
    }
    if (!any) {
      // Past every limit: no walk of the whole ring for each target left over.
      return bounds.fitsBest(members, targetCost);
    }
    int start = ring.tokenIndex(hash);
    for (int step = 0; step < ring.size(); step++) {
      int id = ring.idAt((start + step) % ring.size());
      if (bounds.room(id, targetCost)) {
        return id;
      }
    }
    return bounds.fitsBest(members, targetCost);
  }

  /**
   * The sort keys' bits for a member id, for a ring of {@code idSpan} ids.
   *
   * @param idSpan one more than the largest id
   * @return the bits
   */
  static int idBits(int idSpan) {
    return Math.max(1, 32 - Integer.numberOfLeadingZeros(idSpan - 1));
  }

  /**
   * The sort keys' bits for a position in a view of {@code n} targets.
   *
   * @param n the view's size
   * @return the bits
   */
  static int indexBits(int n) {
    return Math.max(1, 32 - Integer.numberOfLeadingZeros(n - 1));
  }

  /**
   * Round 1 of the last {@link #match}: the positions its owners rejected.
   *
   * @return the positions, in no particular order; not to be modified
   */
  IntList firstRoundRejected() {
    return firstRoundRejected;
  }

  /**
   * Round 1 of the last {@link #match}: the owner of each of {@link #firstRoundRejected}.
   *
   * @return member ids, in the same order; not to be modified
   */
  IntList firstRoundOwner() {
    return firstRoundOwner;
  }

  /**
   * How many targets proposed to member {@code id} in the last {@link #match}'s round 1 (with
   * what it held before it: none unless targets were set aside).
   *
   * @param id a member id
   * @return the count
   */
  int offeredCount(int id) {
    return id < offeredCount.length ? offeredCount[id] : 0;
  }

  /**
   * Copies {@link #offeredCount(int)} of the members {@code ids} into {@code into}, by id: one
   * call a pass, not a call a member ({@link Passes}).
   *
   * @param ids member ids
   * @param into by id, written at {@code ids}
   */
  void copyOfferedCounts(int[] ids, int[] into) {
    for (int id : ids) {
      into[id] = id < offeredCount.length ? offeredCount[id] : 0;
    }
  }

  /**
   * How many targets the last {@link #match} found costlier than every cap (set aside).
   *
   * @return the count
   */
  int oversize() {
    return oversize;
  }

  /**
   * The last {@link #match}'s largest cap, once the targets set aside were taken out: the limit
   * above which a target was set aside.
   *
   * @return the cap
   */
  long largestCap() {
    return largestCap;
  }
}
