package dev.apportion.allocation.internal.chash;

import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.CollectorSetChange;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.engine.Placer;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code consistent-hashing}'s matching for a change, started from the last one, with exactly
 * the result of {@link BoundedMatching#match} from scratch (a testkit property checks it against
 * fresh allocators: {@code FreshAllocatorEquivalenceTest}).
 *
 * <p><b>Why it can.</b> Round 1 of the matching is local: a target proposes to the owner of its
 * hash on the ring, and a collector offered more than its cap keeps the {@code cap} closest
 * (by the same sort key). So a collector's round 1 changes only when the targets on its arcs
 * change, its arcs change (a collector joins or leaves next to it) or its cap changes; and then
 * only if it is over-full before or after. The state kept is small: per collector, how many
 * targets propose to it and the cap it had; per over-full collector, the targets it rejected and
 * the sorted round-1 keys of the targets on its arcs (from the placement from scratch, or from
 * its last re-run), carried over later changes. A change updates the counts of the collectors
 * concerned, re-runs round 1 for the over-full ones among them (from their kept keys, or with
 * their targets found by binary search on the view, arc by arc, when none are kept), and then runs
 * the probe rounds and the clockwise fallback of {@link BoundedMatching} unchanged over all of
 * round 1's rejected targets (a few percent of the view). Only the targets whose round-1 status or
 * owner changed, and the rejected ones, are written to the assignment.
 *
 * <p><b>When.</b> A count placement: every cost 1, equal capacities, no per-collector limit, no
 * target set aside, no cost change pending; a change of targets, or collectors added, removed or
 * both (one replaced by another; none re-weighted), with the sort keys' widths unchanged. The
 * view may be the engine's, a partition's (the partitioned layer's) or per-node's pool: a
 * change of targets names the
 * targets that came and left (the caller's contract for {@code targetsChanged}; a partition that
 * cannot say so calls {@link Placer#viewChangedUnsaid}), and a partition's collector change,
 * which can change its targets in the same call, names them too, counted like a change of
 * targets. Anything else (costs, capacities, limits, a view change not said) is placed from
 * scratch, which records the state again.
 *
 * <p><b>Cost.</b> O(changed targets x log n) to find owners, plus for each over-full collector
 * concerned O(tokens x log n + its targets), plus the probe rounds over round 1's rejected
 * targets; no pass over the view. An over-full collector whose arcs kept their targets since it
 * was last re-run (a collector change elsewhere, which moves its cap only) takes its sorted keys
 * from that run: O(its targets); one whose arcs a collector change grew or shrank has the keys
 * of the targets that came or went inserted or removed: O(its targets) each. A change of the
 * view's targets carries every kept list over it ({@link #carryKept}): O(kept keys x log
 * changed targets), or one pass over the old positions when that is less.
 *
 * <p><b>One algorithm.</b> Its invariant: after every call that returns true, the counts, caps
 * and rejected lists here are round 1 of a match from scratch of the current members and view,
 * and the assignment holds that match's result. Each entry point (a change of targets, a
 * collector change) updates the counts and marks the collectors concerned, and one shared
 * ending ({@link #finish}) re-runs their round 1 and the probe rounds; the entry points only
 * differ in which collectors they mark, so they stay together with the ending that relies on
 * them. Kept beside it: the kept keys and how they follow a change ({@link KeptArcKeys}), and
 * the searches of the view by hash ({@link ViewSearch}).
 *
 * <p><b>A reader's map.</b> State and {@link #recordFull} (a match from scratch recorded as the
 * base to continue from); {@link #targetsChanged} (offer the targets that came, withdraw those
 * that left); {@link #collectorsChanged} (the arcs that changed owner, and what the view gained
 * and lost in the same call); {@link #finish} (each over-full collector's round 1 again, from
 * its kept keys or its arcs, then the probe rounds over every rejected target, and the writes);
 * then the arc helpers that find a collector's targets on the view ({@link #arcsOf}, {@link
 * #ownersInView}, {@link #arcsFromView}) and the per-member bookkeeping.
 */
public final class IncrementalMatching {
  private static final Logger LOG = LoggerFactory.getLogger(IncrementalMatching.class);
  /**
   * Targets a collector, at least, for a collector change that also changes the view's targets
   * to continue the last matching.
   */
  static final int DENSE = 8;
  private final TokenRing ring;
  private final LoadBounds bounds;
  private final BoundedMatching matching;
  private final ViewScratch scratch;

  /** Whether the state below is round 1 of the placement now in the assignment. */
  private boolean valid;
  /** The members it was computed for (identity). */
  private Members validFor;
  private int idBits;
  private int indexBits;
  /**
   * Of the change being placed: over-full collectors whose round 1 was re-run from their kept
   * keys. Reported at trace level when the change is placed.
   */
  private int arcsKept;
  /** By member id: how many targets propose to it in round 1, and its cap then. */
  private int[] offered = new int[0];
  private long[] capsThen = new long[0];
  /** By member id: the slots it rejected in round 1 (empty unless it was over-full). */
  private IntList[] rejectedBy = new IntList[0];
  /** By member id: the sorted round-1 keys of the targets on its arcs, when kept. */
  private final KeptArcKeys kept = new KeptArcKeys();

  // Scratch of one change.
  private boolean[] dirty = new boolean[0];
  private final IntList dirtyIds = new IntList();
  /** Slots to write on their round-1 owner (unless rejected), with that owner. */
  private final IntList touched = new IntList();
  private final IntList touchedOwner = new IntList();
  private final IntList positions = new IntList();
  private final IntList arcPositions = new IntList();
  private long[] keys = new long[64];
  /**
   * By entry of {@link #arcPositions}: round 1's sort-key distance, or, for a new collector's
   * arcs, the collector that owned the arc before; {@link #keysCount} entries.
   */
  private long[] arcOwners = new long[64];
  private int keysCount;
  /**
   * The view's targets on the over-full collectors' arcs, found by one pass over the view
   * ({@link #ownersInView}): their positions and tokens, and by member id where they start in
   * {@link #viewOrder} (which lists them by member, in view order).
   */
  private final IntList viewPositions = new IntList();
  private final IntList viewTokens = new IntList();
  private int[] viewStart = new int[0];
  private int[] viewOrder = new int[0];
  /** The slots that left the view in this change, and those that came into it. */
  private final SlotSet removedSlots = new SlotSet();
  private final SlotSet arrivalSlots = new SlotSet();

  IncrementalMatching(TokenRing ring, LoadBounds bounds, BoundedMatching matching,
      ViewScratch scratch) {
    this.ring = ring;
    this.bounds = bounds;
    this.matching = matching;
    this.scratch = scratch;
  }

  /** Forgets the state: the next change is placed from scratch. */
  void invalidate() {
    valid = false;
    validFor = null;
    kept.forgetAll();
  }

  /**
   * Keeps round 1's sorted keys of a match from scratch, {@code keys[0 .. k)}: the proposals to
   * the members offered more than their cap, grouped by member (the id is the key's top bits).
   * Kept invalid until {@link #recordFull} says the match is one this class continues.
   */
  void round1(long[] keys, int k, int idBitsOfKeys) {
    kept.round1(keys, k, idBitsOfKeys);
  }

  /**
   * Carries the kept keys over a change of the view's targets ({@link KeptArcKeys#carry}).
   *
   * @param came the slots new to the view (in it now)
   * @param gone the slots that left it (their hashes still readable)
   * @param assignment the view after the change
   * @param n its size
   */
  private void carryKept(IntList came, IntList gone, Assignment assignment, int n) {
    long carried = kept.carry(came, gone, assignment, n, indexBits);
    if (carried >= 0 && LOG.isTraceEnabled()) {
      LOG.trace("{} kept keys carried over a change of targets", carried);
    }
  }

  /**
   * Whether a placement of {@code members} on {@code assignment} is one this class can continue:
   * equal capacities and no per-collector limit. Any view qualifies (the engine's, a partition's,
   * per-node's pool): a change of targets names what came and left by contract, and a collector
   * change through a view whose arrivals and departures are not said is placed from scratch
   * ({@link CollectorSetChange#viewChangeKnown}).
   */
  static boolean eligible(Members members, Assignment assignment) {
    if (!members.uniformCapacity()) {
      return false;
    }
    for (Member m : members.array()) {
      if (m.targetLimit() != Integer.MAX_VALUE || m.costLimit() != Long.MAX_VALUE) {
        return false;
      }
    }
    return true;
  }

  /**
   * Records round 1 of the {@link BoundedMatching#match} just made, when it was a count
   * placement this class can continue; otherwise forgets the state.
   *
   * @param members the members placed on
   * @param assignment the view
   * @param countPlacement whether every cost was 1, the capacities equal, none set aside
   */
  void recordFull(Members members, Assignment assignment, boolean countPlacement) {
    if (!countPlacement || !eligible(members, assignment)) {
      invalidate();
      return;
    }
    int span = ring.idSpan();
    ensureIds(span);
    Arrays.fill(offered, 0);
    for (IntList l : rejectedBy) {
      if (l != null) {
        l.clear();
      }
    }
    matching.copyOfferedCounts(members.ids(), offered);
    bounds.copyBounds(members.ids(), capsThen, null);
    IntList rejected = matching.firstRoundRejected();
    IntList owner = matching.firstRoundOwner();
    for (int p = 0; p < rejected.size(); p++) {
      rejected(owner.get(p)).add(assignment.slotAt(rejected.get(p)));
    }
    idBits = BoundedMatching.idBits(span);
    indexBits = BoundedMatching.indexBits(assignment.size());
    validFor = members;
    valid = true;
    // The over-full members' keys the match just gave (round1): valid from now on.
    kept.keepRound1(offered);
    // Grouped now, beside a placement that has just read the whole ring: the next change of
    // targets all over it finds the grouping there instead of paying for it. Not for a view
    // with few targets for its ring (a pool of a few hundred on a ring of thousands of tokens),
    // whose changes re-run few collectors and find their arcs by search.
    if (assignment.size() >= ring.size() / 16) {
      ring.indexByMember();
    }
  }

  /**
   * Places a change of targets from the last matching.
   *
   * @param added the new slots (unassigned, in the view)
   * @param removed the dropped slots (gone from the view; their hashes still readable)
   * @param members the members, the same as the last placement's
   * @param assignment the view
   * @return false, having written nothing, when the change must be placed from scratch
   */
  // Identity, on purpose: a Members is immutable, and a new one means the set changed.
  @SuppressWarnings("ReferenceEquality")
  boolean targetsChanged(IntList added, IntList removed, Members members,
      Assignment assignment) {
    int n = assignment.size();
    if (!valid || members != validFor || n == 0
        || BoundedMatching.idBits(ring.idSpan()) != idBits) {
      return false;
    }
    if (!unitCosts(added, assignment)) {
      return false;
    }
    carryKept(added, removed, assignment, n);
    begin(removed);
    withdraw(removed, assignment);
    offer(added, assignment);
    return finish(members, assignment, n);
  }

  /**
   * Places a change of collectors from the last matching: collectors only added or only
   * removed, with the targets that came into the view or left it in the same call (a partition's
   * view, whose collectors and targets a collector change can change together). Updates the
   * ring.
   *
   * @param change the change; its orphans are unassigned; its arrivals and departures known
   * @param assignment the view
   * @return false when the change must be placed from scratch (the ring may be updated)
   */
  // Identity, on purpose: a Members is immutable, and a new one means the set changed.
  @SuppressWarnings("ReferenceEquality")
  boolean collectorsChanged(CollectorSetChange change, Assignment assignment) {
    int n = assignment.size();
    Members after = change.after();
    boolean anyRemoved = !change.removed().isEmpty();
    boolean anyAdded = !change.added().isEmpty();
    if (!valid || change.before() != validFor || n == 0 || !change.reweighted().isEmpty()
        || !(anyAdded || anyRemoved) || !change.viewChangeKnown()
        // Removed and added with none staying: no ring between the two to continue on.
        || (anyRemoved && change.added().size() >= after.size())
        || !eligible(after, assignment)) {
      return false;
    }
    IntList arrivals = change.arrivals();
    IntList departures = change.departures();
    if ((!arrivals.isEmpty() || !departures.isEmpty()) && n < DENSE * after.size()) {
      // Targets came or left with the collectors (per-node's pool: a node's targets arrive when
      // its collector leaves): with few targets a collector, round 1 is re-run for most of them,
      // and the placement from scratch costs less (per-node, 3,000 pool targets on 1,000
      // collectors: 3.4 ms against 4.1 to remove one).
      return false;
    }
    if (!unitCosts(arrivals, assignment)) {
      return false;
    }
    carryKept(arrivals, departures, assignment, n);
    begin(departures);
    // The targets that left: round 1 offered them to their owner on the ring before it changes.
    withdraw(departures, assignment);
    arrivalSlots.set(arrivals);
    if (anyRemoved) {
      // Their targets, found on the ring before it changes, then given their new owners. When
      // collectors came too (one replaced by another: a rolling update), first on the ring of
      // the members that stayed, then as below for the new ones' arcs: the counts, kept keys and
      // owners pass through the same steps as a removal and an addition in two calls would.
      arcPositions.clear();
      for (Member x : change.removed()) {
        arcsOf(x, assignment, n, arcPositions, null, false);
      }
      ring.update(anyAdded ? without(after, change.added()) : after);
      if (BoundedMatching.idBits(ring.idSpan()) != idBits) {
        return false;
      }
      for (Member x : change.removed()) {
        offered[x.id()] = 0;
        rejected(x.id()).clear();
        kept.forget(x.id());
      }
      for (int p = 0; p < arcPositions.size(); p++) {
        int i = arcPositions.get(p);
        int s = assignment.slotAt(i);
        if (isArrival(s)) {
          continue; // counted below, with the other arrivals
        }
        long h = assignment.hashAt(i);
        int t = ring.tokenIndex(h);
        int id = ring.idAt(t);
        if (kept.keys(id, offered[id]) != null) {
          // Its arc grew over the removed token's and kept every target it had: its kept keys
          // take this one's, at the same distance to its token as a search of its arcs finds.
          kept.insert(id, BoundedMatching.key(id,
              ring.positionAt(t) - (h & TokenRing.POSITION_MASK), i, idBits, indexBits));
        } else {
          kept.forget(id);
        }
        offered[id]++;
        markDirty(id);
        touched.add(s);
        touchedOwner.add(id);
      }
    }
    if (anyAdded) {
      ring.update(after);
      int span = ring.idSpan();
      if (BoundedMatching.idBits(span) != idBits) {
        return false;
      }
      ensureIds(span);
      boolean[] isAdded = new boolean[span];
      for (Member y : change.added()) {
        isAdded[y.id()] = true;
        offered[y.id()] = 0;
        capsThen[y.id()] = -1;
        rejected(y.id()).clear();
        markDirty(y.id());
        kept.forget(y.id());
      }
      // Each new token takes the start of the arc of the next token that is not new: that
      // token's collector loses those targets (an arrival was never offered to it).
      for (Member y : change.added()) {
        arcPositions.clear();
        keysCount = 0;
        arcsOf(y, assignment, n, arcPositions, isAdded, false);
        for (int p = 0; p < arcPositions.size(); p++) {
          int i = arcPositions.get(p);
          int s = assignment.slotAt(i);
          if (isArrival(s)) {
            continue;
          }
          int was = (int) arcOwners[p];
          if (kept.keys(was, offered[was]) != null) {
            // Its other targets stay on its arcs at their distances: its kept keys lose this one.
            kept.remove(was, i, indexBits);
          } else {
            kept.forget(was);
          }
          offered[was]--;
          markDirty(was);
          offered[y.id()]++;
          touched.add(s);
          touchedOwner.add(y.id());
        }
      }
    }
    // The targets that came: offered to their owner on the new ring.
    offer(arrivals, assignment);
    return finish(after, assignment, n);
  }

  /** {@code members} less {@code gone}, in the same order. */
  private static Members without(Members members, List<Member> gone) {
    Member[] all = members.array();
    boolean[] isGone = new boolean[Math.max(0, members.maxId()) + 1];
    for (Member m : gone) {
      isGone[m.id()] = true;
    }
    Member[] kept = new Member[all.length - gone.size()];
    int k = 0;
    for (Member m : all) {
      if (!isGone[m.id()]) {
        kept[k++] = m;
      }
    }
    return new Members(kept);
  }

  private static boolean unitCosts(IntList slots, Assignment assignment) {
    for (int i = 0; i < slots.size(); i++) {
      if (assignment.cost(slots.get(i)) != 1) {
        return false;
      }
    }
    return true;
  }

  /** Offers targets new to the view to their owner on the current ring, to be written there. */
  private void offer(IntList came, Assignment assignment) {
    int n = assignment.size();
    for (int i = 0; i < came.size(); i++) {
      int s = came.get(i);
      long h = assignment.hash(s);
      int t = ring.tokenIndex(h);
      int id = ring.idAt(t);
      if (kept.keys(id, offered[id]) != null) {
        // Its kept keys, carried over the change, take the new target's.
        kept.insert(id, BoundedMatching.key(id, ring.positionAt(t) - (h & TokenRing.POSITION_MASK),
            ViewSearch.positionOf(assignment, s, n), idBits, indexBits));
      } else {
        kept.forget(id);
      }
      offered[id]++;
      markDirty(id);
      touched.add(s);
      touchedOwner.add(id);
    }
  }

  /** Takes targets that left the view off the count of their owner on the current ring. */
  private void withdraw(IntList gone, Assignment assignment) {
    for (int i = 0; i < gone.size(); i++) {
      int id = ring.idAt(ring.tokenIndex(assignment.hash(gone.get(i))));
      offered[id]--;
      markDirty(id);
    }
  }

  private void begin(IntList removed) {
    keysCount = 0;
    arrivalSlots.set(null);
    touched.clear();
    touchedOwner.clear();
    for (int d = 0; d < dirtyIds.size(); d++) {
      dirty[dirtyIds.get(d)] = false;
    }
    dirtyIds.clear();
    removedSlots.set(removed);
  }

  private boolean isRemoved(int slot) {
    return removedSlots.contains(slot);
  }

  private boolean isArrival(int slot) {
    return arrivalSlots.contains(slot);
  }

  /** A set of slots as a sorted array: membership by binary search, reused across changes. */
  private static final class SlotSet {
    private int[] sorted = new int[16];
    private int count;

    /** Holds {@code slots} (none when null) from now on. */
    void set(IntList slots) {
      count = slots == null ? 0 : slots.size();
      if (sorted.length < count) {
        sorted = new int[Math.max(count, 2 * sorted.length)];
      }
      for (int i = 0; i < count; i++) {
        sorted[i] = slots.get(i);
      }
      Arrays.sort(sorted, 0, count);
    }

    boolean contains(int slot) {
      return count > 0 && Arrays.binarySearch(sorted, 0, count, slot) >= 0;
    }
  }

  /**
   * Re-runs round 1 for the collectors concerned, then the probe rounds over every target round
   * 1 rejected, and writes what changed.
   */
  private boolean finish(Members members, Assignment assignment, int n) {
    int span = ring.idSpan();
    ensureIds(span);
    bounds.compute(members, n, n, assignment, false, span);
    for (int id : members.ids()) {
      if (bounds.cap(id) != capsThen[id]) {
        markDirty(id);
      }
    }
    if (BoundedMatching.indexBits(n) != indexBits) {
      // The sort keys' widths changed: the over-full collectors left alone could now break ties
      // another way.
      invalidate();
      return false;
    }
    // The over-full collectors' arcs hold about their caps' worth of targets but span all their
    // tokens. When the view has fewer targets than those tokens (a sparse view: a pool or a
    // cluster-wide group of a few thousand targets on a ring of 512 tokens a collector, or caps
    // that changed for every collector), one pass over the view that finds each target's token
    // costs less than a search of the view for each token.
    long overFullCount = 0;
    for (int d = 0; d < dirtyIds.size(); d++) {
      int id = dirtyIds.get(d);
      if (ring.member(id) != null && offered[id] > bounds.cap(id)) {
        overFullCount++;
      }
    }
    boolean byTarget = n < overFullCount * (ring.size() / Math.max(1, members.size()));
    if (byTarget) {
      boolean[] overFull = new boolean[span];
      for (int d = 0; d < dirtyIds.size(); d++) {
        int id = dirtyIds.get(d);
        overFull[id] = ring.member(id) != null && offered[id] > bounds.cap(id);
      }
      ownersInView(assignment, n, overFull, span);
    }
    // Else, many over-full collectors to re-run (a change of targets all over the ring): list
    // their tokens from the ring grouped by member, built once per ring in two passes over it; a
    // few (a collector change, even one that changed every cap): find each token by a search,
    // which costs less than grouping a ring just rebuilt.
    boolean grouped = !byTarget
        && (ring.indexedByMember() || 4L * overFullCount > members.size());
    for (int d = 0; d < dirtyIds.size(); d++) {
      int id = dirtyIds.get(d);
      dirty[id] = false;
      Member m = ring.member(id);
      if (m == null) {
        continue;
      }
      IntList old = rejected(id);
      for (int p = 0; p < old.size(); p++) {
        int s = old.get(p);
        // A target a new collector's arc took is written with its new owner already.
        if (!isRemoved(s) && ring.idAt(ring.tokenIndex(assignment.hash(s))) == id) {
          touched.add(s);
          touchedOwner.add(id);
        }
      }
      old.clear();
      long cap = bounds.cap(id);
      if (offered[id] <= cap) {
        continue;
      }
      // Over-full: keep the cap closest, by round 1's sort key.
      long[] sorted = kept.keys(id, offered[id]);
      int count;
      if (sorted != null) {
        count = kept.count(id);
        arcsKept++;
      } else {
        arcPositions.clear();
        keysCount = 0;
        if (byTarget) {
          arcsFromView(id, assignment);
        } else {
          arcsOf(m, assignment, n, arcPositions, null, grouped);
        }
        if (arcPositions.size() != offered[id]) {
          // Cannot happen while the state is right; if it does, the full placement is.
          if (LOG.isTraceEnabled()) {
            LOG.trace("change abandoned: the matching kept for collector {} disagrees with its "
                + "targets; placing in full", id);
          }
          invalidate();
          return false;
        }
        for (int p = 0; p < keysCount; p++) {
          keys[p] = BoundedMatching.key(id, arcOwners[p], arcPositions.get(p), idBits,
              indexBits);
        }
        Arrays.sort(keys, 0, keysCount);
        sorted = kept.keep(id, keys, 0, keysCount);
        count = keysCount;
      }
      long indexMask = (1L << indexBits) - 1;
      for (int p = (int) cap; p < count; p++) {
        old.add(assignment.slotAt((int) (sorted[p] & indexMask)));
      }
    }
    dirtyIds.clear();
    // Round 1's loads, then the probe rounds over every target it rejected.
    bounds.clearLoads();
    for (int id : members.ids()) {
      int load = (int) Math.min(offered[id], bounds.cap(id));
      bounds.setLoad(id, load, load);
    }
    scratch.ensure(n);
    positions.clear();
    for (int id : members.ids()) {
      IntList r = rejected(id);
      for (int p = 0; p < r.size(); p++) {
        int pos = ViewSearch.positionOf(assignment, r.get(p), n);
        positions.add(pos);
        scratch.cost[pos] = 1;
      }
    }
    matching.probeFrom(positions, members, assignment, idBits, indexBits);
    for (int p = 0; p < touched.size(); p++) {
      assignment.place(touched.get(p), ring.member(touchedOwner.get(p)));
    }
    for (int p = 0; p < positions.size(); p++) {
      int pos = positions.get(p);
      assignment.place(assignment.slotAt(pos), ring.member(scratch.chosen[pos]));
    }
    bounds.copyBounds(members.ids(), capsThen, null);
    validFor = members;
    if (LOG.isTraceEnabled()) {
      LOG.trace("change continued from the last matching: {} over-full collectors' keys kept, "
          + "{} kept keys edited", arcsKept, kept.edited());
    }
    arcsKept = 0;
    kept.resetEdited();
    return true;
  }

  /**
   * Adds to {@code out} the positions of the view's targets on member {@code m}'s arcs of the
   * current ring, and records for each, in {@link #arcOwners}, its distance to the arc's token
   * or, when {@code isAdded} is given, the collector that owned the arc before the tokens of
   * {@code isAdded}'s members were added (the next token clockwise that is not one of theirs).
   * {@code grouped}: the member's tokens are taken from the ring's grouping by member
   * ({@link TokenRing#indexByMember}), in ring order, instead of a search for each (the arcs are
   * the same; their order differs, which the callers that pass it sort away).
   */
  private void arcsOf(Member m, Assignment assignment, int n, IntList out, boolean[] isAdded,
      boolean grouped) {
    int id = m.id();
    if (grouped) {
      // The member's tokens, grouped once per ring, in ring order: no search for each.
      ring.indexByMember();
      for (int k = ring.groupFrom(id); k < ring.groupTo(id); k++) {
        int t = ring.groupedToken(k);
        long pos = ring.positionAt(t);
        if (t > 0 && ring.positionAt(t - 1) == pos) {
          // Another collector's token at the same position comes first: this one owns nothing.
          continue;
        }
        arc(t, pos, -1, assignment, n, out);
      }
      return;
    }
    int size = ring.size();
    int tokens = ring.tokensFor(m.capacity());
    for (int j = 0; j < tokens; j++) {
      long pos = TokenRing.tokenPosition(m, j);
      int t = ring.tokenIndex(pos);
      if (ring.positionAt(t) != pos || ring.idAt(t) != id) {
        // Another collector's token at the same position comes first: this one owns nothing.
        continue;
      }
      int was = -1;
      if (isAdded != null) {
        int u = t;
        do {
          u = u + 1 == size ? 0 : u + 1;
        } while (isAdded[ring.idAt(u)] && u != t);
        was = ring.idAt(u);
      }
      arc(t, pos, was, assignment, n, out);
    }
  }

  /**
   * One pass over the view: the targets whose token (the first at or after their hash, as round
   * 1 offers them) belongs to an over-full collector, grouped by that collector in view order.
   */
  private void ownersInView(Assignment assignment, int n, boolean[] overFull, int span) {
    viewPositions.reset();
    viewTokens.reset();
    if (viewStart.length < span + 1) {
      viewStart = new int[span + 1];
    } else {
      Arrays.fill(viewStart, 0, span + 1, 0);
    }
    for (int i = 0; i < n; i++) {
      int t = ring.tokenIndex(assignment.hashAt(i));
      int id = ring.idAt(t);
      if (overFull[id]) {
        viewPositions.add(i);
        viewTokens.add(t);
        viewStart[id + 1]++;
      }
    }
    for (int id = 0; id < span; id++) {
      viewStart[id + 1] += viewStart[id];
    }
    int found = viewPositions.size();
    if (viewOrder.length < found) {
      viewOrder = new int[Math.max(found, 2 * viewOrder.length)];
    }
    int[] fill = Arrays.copyOf(viewStart, span);
    for (int e = 0; e < found; e++) {
      viewOrder[fill[ring.idAt(viewTokens.get(e))]++] = e;
    }
  }

  /**
   * Member {@code id}'s arcs' targets from {@link #ownersInView}, with the distances
   * {@link #arcsOf} records: the same set, in view order instead of ring order (which the caller
   * sorts away).
   */
  private void arcsFromView(int id, Assignment assignment) {
    for (int k = viewStart[id]; k < viewStart[id + 1]; k++) {
      int e = viewOrder[k];
      int i = viewPositions.get(e);
      if (keysCount == arcOwners.length) {
        arcOwners = Arrays.copyOf(arcOwners, 2 * keysCount);
        keys = Arrays.copyOf(keys, 2 * keysCount);
      }
      arcOwners[keysCount++] =
          ring.positionAt(viewTokens.get(e)) - (assignment.hashAt(i) & TokenRing.POSITION_MASK);
      arcPositions.add(i);
    }
  }

  /**
   * The targets of token {@code t}'s arc, at {@code pos}: from the previous token's position
   * (exclusive) to its own (inclusive), wrapping past the top of the ring.
   */
  private void arc(int t, long pos, int was, Assignment assignment, int n, IntList out) {
    long pred = ring.positionAt(t == 0 ? ring.size() - 1 : t - 1);
    long hi = pos | TokenRing.ID_MASK;
    long lo = pred | TokenRing.ID_MASK;
    if (Long.compareUnsigned(lo, hi) < 0) {
      addRange(assignment, n, lo, hi, pos, was, out);
    } else {
      // The arc wraps past the top of the ring: (pred, max] and [0, pos].
      addRange(assignment, n, lo, -1L, pos, was, out);
      if (n > 0 && Long.compareUnsigned(assignment.hashAt(0), hi) <= 0) {
        addFrom(assignment, 0, ViewSearch.upperBound(assignment, n, hi), pos, was, out);
      }
    }
  }

  /**
   * The targets with hashes in {@code (lo, hi]}: one search for the upper end, then a walk back
   * to the lower (an arc holds about {@code n / tokens} targets, under one).
   */
  private void addRange(Assignment assignment, int n, long lo, long hi, long pos, int was,
      IntList out) {
    int to = ViewSearch.upperBound(assignment, n, hi);
    int from = to;
    while (from > 0 && Long.compareUnsigned(assignment.hashAt(from - 1), lo) > 0) {
      from--;
    }
    addFrom(assignment, from, to, pos, was, out);
  }

  private void addFrom(Assignment assignment, int from, int to, long pos, int was,
      IntList out) {
    for (int i = from; i < to; i++) {
      if (keysCount == arcOwners.length) {
        arcOwners = Arrays.copyOf(arcOwners, 2 * keysCount);
        keys = Arrays.copyOf(keys, 2 * keysCount);
      }
      arcOwners[keysCount++] = was >= 0 ? was
          : pos - (assignment.hashAt(i) & TokenRing.POSITION_MASK);
      out.add(i);
    }
  }

  private void markDirty(int id) {
    if (!dirty[id]) {
      dirty[id] = true;
      dirtyIds.add(id);
    }
  }

  private IntList rejected(int id) {
    IntList l = rejectedBy[id];
    if (l == null) {
      l = new IntList();
      rejectedBy[id] = l;
    }
    return l;
  }

  private void ensureIds(int span) {
    if (offered.length < span) {
      int size = Math.max(span, 2 * offered.length);
      offered = Arrays.copyOf(offered, size);
      capsThen = Arrays.copyOf(capsThen, size);
      rejectedBy = Arrays.copyOf(rejectedBy, size);
      dirty = Arrays.copyOf(dirty, size);
    }
  }
}
