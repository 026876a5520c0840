package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.Headroom;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.ring.HashRings;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The engine's mutable record of every known target, as dense primitive data, and the journal of
 * what the current operation did to it. Writer-thread only; readers never see it (the
 * {@link Publisher} turns the journal into a new immutable {@link Snapshot}).
 *
 * <p><b>Design.</b> Each known target owns an int <em>slot</em>; everything about it is an array
 * indexed by slot: the instance (latest labels), its identity hash, its labels hash, its owner
 * (a {@link Member#id()}, or {@link #NONE}) and its job id. A {@link SlotTable} maps identity
 * hashes to slots; freed slots are reused, so the arrays stay as large as the largest target set
 * seen. {@link #order} lists the live slots in {@link TargetOrder}, which every placement and
 * every output follows.
 *
 * <p><b>Cost.</b> Each slot's {@link Target#cost()} is kept in a dense {@code long[]}, and each
 * member's total ({@link Member#cost()}) is kept up to date as targets are placed, dropped or
 * change cost. Each slot also keeps its labels hash xor a mix of the cost ({@link #aux}; the mix
 * of the default cost 1 is 0), so an unchanged re-set compares two numbers per target, its
 * identity hash and that word; a target whose cost alone changed is told from
 * a relabel by comparing its labels hash with the known instance's, and is journaled as
 * <em>recosted</em>, not touched: its owner does not change, so the publisher only republishes
 * the members' cost totals.
 *
 * <p>Telling a known target from a new one compares numbers. First in turn: the slots of the
 * targets the last {@code setTargets} was given are kept in the order given, and each target of
 * the next call is compared with the one expected at its place (the same instance, or the same
 * hash, labels hash and cost): a refresh that lists its targets in the order it listed them last
 * time reads memory in order, with no table probe, whatever it inserted, removed or replaced
 * (each costs one lookup, after which the comparison in turn resumes). Otherwise by the table: a
 * target whose identity hash finds
 * a slot with the same labels hash is that slot's target, unchanged ({@link Target#labelsHash()}
 * covers job, address and every label, so two targets that differ anywhere differ there with
 * probability 1 - 2^-64). Only when the labels hash differs are identities compared, to tell a
 * relabel from two distinct targets whose identity hashes collide; colliding targets get a slot
 * each and are both placed.
 *
 * <p><b>The journal.</b> During one operation every slot whose owner changes is recorded once
 * with its owner before the operation; targets added, removed and relabeled are listed too.
 * Removed slots keep their instance until {@link #endOperation}, so the publisher can report
 * them; their slots are freed there.
 */
public final class Slots implements Assignment {
  /** Owner of an unassigned target. */
  static final int NONE = -1;
  /** Previous owner recorded for a target new in this operation. */
  static final int NEW = -2;
  /** Owner of a target removed in this operation. */
  static final int REMOVED = -3;

  private final long keyMask;
  /** See {@link #ownersAsPlaced()}: fixed when the engine is built. */
  private final boolean ownersAsPlaced;
  private final SlotTable table = new SlotTable(this::keyOf);
  private final SlotOrder sorter = new SlotOrder();

  private Target[] targets = new Target[16];
  private long[] hashes = new long[16];
  private int[] owners = new int[16];
  private int[] jobs = new int[16];
  /**
   * By slot: the target's cost; null while every target known has the default cost (as most
   * embedders' are), which saves 8 bytes a target. Allocated, at the size of the other arrays,
   * when the first target with another cost arrives, and kept from then on.
   */
  private long[] costs;
  /**
   * By slot: the labels hash and cost word ({@link #aux}), which the comparison in turn reads in
   * order and a table lookup reads for each slot its key finds.
   */
  private long[] auxes = new long[16];
  /**
   * By slot: what the current operation did to it, as {@code epoch << FLAG_BITS | flags}; a mark of
   * another epoch means nothing. One array instead of one per flag.
   */
  private int[] marks = new int[16];
  /** The owner before the current operation of each slot journaled in it. */
  private final PriorOwners previousOwners = new PriorOwners();
  private static final int RECOSTED = 1;
  private static final int TOUCHED = 2;
  private static final int RELABELED = 4;
  /**
   * Given in the current call: a second mention is a duplicate; a known slot never seen is
   * removed.
   */
  private static final int SEEN = 8;
  /** Listed in {@link #unseen} in the current call. */
  private static final int UNSEEN = 16;
  private static final int FLAG_BITS = 5;
  private static final int EPOCH_MAX = (1 << 26) - 1;
  private int highWater;
  private final IntList free = new IntList();

  private final Map<String, Integer> jobIds = new HashMap<>();
  private final List<String> jobNames = new ArrayList<>();
  /** {@link #jobRanks()}, for the first {@link #rankedJobs} jobs. */
  private int[] jobRanks = new int[0];
  private int rankedJobs;

  private Member[] membersById = new Member[16];

  private final IntList order = new IntList();
  /**
   * The hash of each slot of {@link #order}, in the same order: a pass over the order (a
   * placement, the merge of new slots into it) reads hashes sequentially, not one slot at a time
   * from {@link #hashes}.
   */
  private long[] orderHashes = new long[16];

  private int epoch = 1;
  /**
   * The slots of the targets the last {@code setTargets} was given, in the order given
   * ({@link #lastGivenCount} of them), and those of the current call as it proceeds: the next
   * call's targets are first compared with the target given at the same place in this one, in
   * turn, which reads memory in order instead of probing the table at random.
   */
  private int[] lastGiven = new int[0];
  private int lastGivenCount;
  private int[] given = new int[0];
  private int givenCount;
  /** Where in {@link #lastGiven} the next target given is expected. */
  private int cursor;
  /** Whether targets are compared in turn at all. */
  private final boolean inTurn;
  /** By slot: its place in the last call's input (or, once given in this call, in this one's). */
  private int[] positions = new int[16];
  /** The known slots not given in the current call, in {@link TargetOrder}: the removed ones. */
  private final IntList unseen = new IntList();
  /** Known slots (not added in this call) marked seen in this call. */
  private int seenKnown;
  // The journal of the current operation.
  private final IntList touched = new IntList();
  private final IntList added = new IntList();
  private final IntList removed = new IntList();
  private final IntList relabeled = new IntList();
  private final List<Target> relabeledFrom = new ArrayList<>();
  private final IntList recosted = new IntList();

  /** The key mask of an allocator's slots: a target's whole identity hash keys the table. */
  static final long ALL_BITS = -1L;

  /**
   * Empty slots.
   *
   * @param keyMask the bits of a target's identity hash that key the table: {@link #ALL_BITS}
   *     in an allocator; a narrow mask makes distinct targets share keys, which the table
   *     resolves by comparing targets
   * @param compareInTurn whether each target given is first compared with the one given at its
   *     place in the last call, before the table is probed (on in an allocator; either way gives
   *     the same answers)
   * @param ownersAsPlaced see {@link #ownersAsPlaced()}
   */
  Slots(long keyMask, boolean compareInTurn, boolean ownersAsPlaced) {
    this.keyMask = keyMask;
    this.inTurn = compareInTurn;
    this.ownersAsPlaced = ownersAsPlaced;
  }

  /** True when no per-collector limit is set: only placers and orphans change owners. */
  @Override
  public boolean ownersAsPlaced() {
    return ownersAsPlaced;
  }

  /** Whether this operation relabeled a slot so far ({@link #relabeled()}). */
  @Override
  public boolean mayHaveRelabeled() {
    return !relabeled.isEmpty();
  }

  // ---- reading ----

  /** How many targets are known. */
  int known() {
    return order.size();
  }

  /** Live slots in {@link TargetOrder}. Must not be modified. */
  IntList order() {
    return order;
  }

  @Override
  public int size() {
    return order.size();
  }

  @Override
  public int slotAt(int i) {
    return order.get(i);
  }

  /**
   * Slots below the high-water mark: the known ones, and freed ones, which own nothing
   * ({@link #endOperation} leaves a freed slot's owner {@link #REMOVED}, and a slot taken again
   * starts with {@link #NONE}).
   */
  @Override
  public int slotLimit() {
    return highWater;
  }

  @Override
  public long hashAt(int i) {
    return orderHashes[i];
  }

  @Override
  public Target target(int slot) {
    return targets[slot];
  }

  @Override
  public long hash(int slot) {
    return hashes[slot];
  }

  /** The table's key of a slot: its identity hash under {@link #keyMask}. */
  private long keyOf(int slot) {
    return hashes[slot] & keyMask;
  }

  @Override
  public int job(int slot) {
    return jobs[slot];
  }

  @Override
  public long cost(int slot) {
    return costOf(slot);
  }

  private long costOf(int slot) {
    long[] c = costs;
    return c == null ? Target.DEFAULT_COST : c[slot];
  }

  /**
   * The word that tells a known target unchanged: its labels hash, xor a mix of its cost when that
   * is not the default (so with default costs the word is the labels hash, as before costs).
   */
  static long aux(long labelsHash, long cost) {
    return cost == Target.DEFAULT_COST ? labelsHash
        : labelsHash ^ HashRings.mix(cost ^ COST_SALT);
  }

  private static final long COST_SALT = 0x632BE59BD9B4E019L;

  /** How many job ids have been given (ids are 0 to this, exclusive). */
  int jobCount() {
    return jobNames.size();
  }

  /** The job's name. */
  String jobName(int job) {
    return jobNames.get(job);
  }

  /**
   * By job id: the job's rank among every job known so far in name order ({@link
   * String#compareTo}), so that jobs known by id are put in name order by comparing ints, not
   * strings. Recomputed (O(j log j) for j jobs) on the first call after a new job was named; jobs
   * are never forgotten, so between new jobs it is the same array. Read-only for callers.
   */
  int[] jobRanks() {
    int n = jobNames.size();
    if (rankedJobs != n) {
      Integer[] byName = new Integer[n];
      for (int j = 0; j < n; j++) {
        byName[j] = j;
      }
      Arrays.sort(byName, (x, y) -> jobNames.get(x).compareTo(jobNames.get(y)));
      int[] ranks = new int[n];
      for (int r = 0; r < n; r++) {
        ranks[byName[r]] = r;
      }
      jobRanks = ranks;
      rankedJobs = n;
    }
    return jobRanks;
  }

  /** Owner id, {@link #NONE} or {@link #REMOVED}. */
  int ownerId(int slot) {
    return owners[slot];
  }

  /** The member with an id, live or departed in this operation. */
  Member member(int id) {
    return membersById[id];
  }

  @Override
  public Member ownerOf(int slot) {
    int o = owners[slot];
    return o < 0 ? null : membersById[o];
  }

  @Override
  public int holderId(int slot) {
    int o = owners[slot];
    return o < 0 ? -1 : o;
  }

  public long[] hashes() {
    return hashes;
  }

  public Target[] targets() {
    return targets;
  }

  public SlotOrder sorter() {
    return sorter;
  }

  // ---- members ----

  /** Registers a member under its id. */
  void register(Member m) {
    if (m.id() >= membersById.length) {
      membersById = Arrays.copyOf(membersById, Math.max(m.id() + 1, membersById.length * 2));
    }
    membersById[m.id()] = m;
  }

  // ---- the operation ----

  /**
   * Makes room for {@code n} targets, so a large first call does not grow step by step. The room
   * is {@link Headroom#withHeadroom} {@code n}: a later call that replaces a few percent of the
   * targets (up to 6%, or at least 1.5% where a sixteenth more would take another MiB) adds its new ones
   * before the dropped ones free their slots, and must not copy every per-slot array and the table
   * to make room for them.
   */
  void reserve(int n) {
    if (targets.length < n) {
      resize(Headroom.withHeadroom(n));
    }
    table.reserve(Headroom.withHeadroom(n));
    // A call that brings many new targets journals each: size the journal once.
    int adds = n - known();
    if (adds > 0) {
      touched.ensureCapacity(adds);
      added.ensureCapacity(adds);
    }
  }

  /** The capacity of the per-slot arrays: every slot is below it. */
  int capacity() {
    return targets.length;
  }

  private boolean has(int slot, int flag) {
    int m = marks[slot];
    return (m >>> FLAG_BITS) == epoch && (m & flag) != 0;
  }

  private void mark(int slot, int flag) {
    int m = marks[slot];
    marks[slot] = (m >>> FLAG_BITS) == epoch ? m | flag : epoch << FLAG_BITS | flag;
  }

  /** Starts an operation: a new epoch for {@link #markSeen} and the journal. */
  void beginOperation() {
    if (++epoch == EPOCH_MAX) {
      Arrays.fill(marks, 0);
      epoch = 1;
    }
    seenKnown = 0;
  }

  /** Sum of touched cells, so the JIT keeps the loads of {@link #touch}: written, never read. */
  @SuppressWarnings("UnusedVariable")
  private long touchSink;

  /**
   * Loads the table cell of each of {@code targets[from .. to)}, so that a later {@link #find}
   * of each hits the cache: independent loads whose misses the processor overlaps.
   */
  void touch(List<Target> targets, int from, int to) {
    long sum = 0;
    for (int i = from; i < to; i++) {
      sum += table.peek(targets.get(i).hash() & keyMask);
    }
    touchSink += sum;
  }

  /**
   * Loads each of {@code targets[from .. to)}'s hash, so that a later {@link
   * #takeUnchangedInTurn} of each finds the target in the cache: independent loads, as in
   * {@link #touch}.
   */
  void touchTargets(List<Target> targets, int from, int to) {
    long sum = 0;
    for (int i = from; i < to; i++) {
      sum += targets.get(i).hash();
    }
    touchSink += sum;
  }

  /** What {@link #find} found: the target unchanged. */
  private static final int FOUND_UNCHANGED = 0;
  /** What {@link #find} found: the target with its labels, another cost. */
  private static final int FOUND_RECOSTED = 1;
  /** What {@link #find} found: the target with other labels. */
  private static final int FOUND_RELABELED = 2;

  /**
   * Takes one given target that {@link #takeUnchangedInTurn} did not: a known one is marked
   * given in this call and, when it changed, recosted or relabeled; an unknown one gets a new
   * slot.
   *
   * @param t the target
   * @return 1 when it repeats a target given before in this call (a duplicate), else 0
   */
  int take(Target t) {
    long found = find(t);
    if (found < 0) {
      add(t);
      return 0;
    }
    int s = (int) found;
    int duplicate = markSeen(s) ? 0 : 1;
    int what = (int) (found >>> 32);
    if (what == FOUND_RECOSTED) {
      recost(s, t);
    } else if (what == FOUND_RELABELED) {
      relabel(s, t);
    }
    return duplicate;
  }

  /**
   * The slot of a known target equal to {@code t} (same identity) in the low 32 bits, and in the
   * high ones whether it is {@link #FOUND_UNCHANGED}, {@link #FOUND_RECOSTED} or
   * {@link #FOUND_RELABELED}; or -1.
   * Compares the labels hash first; identities only when it differs.
   */
  private long find(Target t) {
    long key = t.hash() & keyMask;
    int cell = table.find(key);
    if (cell < 0) {
      return -1;
    }
    long labelsHash = t.labelsHash();
    long aux = aux(labelsHash, t.cost());
    long relabel = -1;
    while (cell >= 0) {
      int s = table.slotAt(cell);
      if (auxes[s] == aux) {
        // The labels hash covers job, address and every label: the same target, same labels
        // (and the same cost).
        return (long) FOUND_UNCHANGED << 32 | s;
      }
      if (relabel < 0) {
        Target known = targets[s];
        boolean sameLabels = known.labelsHash() == labelsHash && known.hash() == t.hash();
        if (sameLabels || known.equals(t)) {
          relabel = (long) (sameLabels ? FOUND_RECOSTED : FOUND_RELABELED) << 32 | s;
        }
      }
      cell = table.findNext(key, cell);
    }
    return relabel;
  }

  /**
   * Marks known slot {@code s} as given in the current call; returns false when it already was
   * (a duplicate).
   */
  private boolean markSeen(int s) {
    recordGiven(s, true);
    if (has(s, SEEN)) {
      return false;
    }
    mark(s, SEEN);
    seenKnown++;
    return true;
  }

  /**
   * Starts taking the targets of a {@code setTargets} call, {@code n} of them: the comparison in
   * turn ({@link #takeUnchangedInTurn}) starts at the last call's first target.
   */
  void beginInput(int n) {
    if (given.length < n) {
      // Both buffers at once: the call after the first would otherwise size the second.
      given = new int[Headroom.withHeadroom(n)];
      if (lastGiven.length < n) {
        lastGiven = Arrays.copyOf(lastGiven, given.length);
      }
    }
    givenCount = 0;
    cursor = 0;
  }

  /**
   * Takes {@code t} when it is, unchanged, the target the last call was given at the place
   * expected next (the same instance, or an equal one with the same labels and cost): marks its
   * slot seen and returns true, having read no table. Otherwise returns false and changes
   * nothing; the caller then takes {@code t} through {@link #find}. A refresh that lists the same
   * targets in the same order, whatever it inserted, removed or changed among them, compares
   * most of them this way: the last call's slots, their hashes and their instances are read in
   * order. The same slot given twice is left to {@link #find}, which tells the duplicate.
   */
  @SuppressWarnings("ReferenceEquality") // the same instance first, then an equal one
  boolean takeUnchangedInTurn(Target t) {
    if (cursor >= lastGivenCount || !inTurn) {
      return false;
    }
    int s = lastGiven[cursor];
    Target known = targets[s];
    if (known != t && (known == null || hashes[s] != t.hash()
        || auxes[s] != aux(t.labelsHash(), t.cost()))) {
      return false;
    }
    if (has(s, SEEN)) {
      return false;
    }
    mark(s, SEEN);
    seenKnown++;
    cursor++;
    appendGiven(s);
    return true;
  }

  /**
   * Records the slot of the next target given, taken by {@link #find} or {@link #add}, and moves
   * the comparison in turn past it: a known target was last given at {@link #positions}, so the
   * next target is expected after it (an insertion, a deletion or a move costs one lookup); a new
   * one is taken to replace the target expected (a replacement in place costs none).
   */
  private void recordGiven(int s, boolean known) {
    if (known && positions[s] < lastGivenCount && lastGiven[positions[s]] == s) {
      cursor = positions[s] + 1;
    } else {
      cursor++;
    }
    appendGiven(s);
  }

  /** Appends slot {@code s} to the current call's input and records its place there. */
  private void appendGiven(int s) {
    positions[s] = givenCount;
    if (givenCount == given.length) {
      // A collection that yields more than its size() said (changed while read).
      given = Arrays.copyOf(given, Headroom.withHeadroom(givenCount + 1));
    }
    given[givenCount++] = s;
  }

  /**
   * Ends the input of a {@code setTargets} call: lists the known slots it did not give (every
   * known slot was given in the last call, so a pass over that input, in slot order much as it was
   * filled, finds them without walking the order), and makes the input the last call's, for the
   * next.
   */
  void endInput() {
    unseen.clear();
    int missing = order.size() - seenKnown;
    if (missing > 0) {
      // In ranges, a call each (Passes).
      for (int i = 0; i < lastGivenCount && unseen.size() < missing; i += UNSEEN_RANGE) {
        collectUnseen(i, Math.min(lastGivenCount, i + UNSEEN_RANGE), missing);
      }
      if (unseen.size() != missing) {
        // Not every known slot was in the last input (never so in practice): walk the order.
        unseen.clear();
        int[] o = order.array();
        for (int i = 0; i < order.size(); i++) {
          if (!has(o[i], SEEN)) {
            unseen.add(o[i]);
          }
        }
      }
      sorter.sort(unseen.array(), unseen.size(), hashes, targets);
    }
    int[] g = lastGiven;
    lastGiven = given;
    lastGivenCount = givenCount;
    given = g;
    givenCount = 0;
  }

  /** The last input's slots read by one call of {@link #collectUnseen}. */
  private static final int UNSEEN_RANGE = 256;

  /** Lists the slots of {@code lastGiven[from .. to)} not given in this call, up to missing. */
  private void collectUnseen(int from, int to, int missing) {
    int[] last = lastGiven;
    for (int i = from; i < to && unseen.size() < missing; i++) {
      int s = last[i];
      if (!has(s, SEEN) && !has(s, UNSEEN)) {
        mark(s, UNSEEN);
        unseen.add(s);
      }
    }
  }

  /** A new target: a slot, unassigned, given in this call, journaled as new. */
  private int add(Target t) {
    int slot;
    if (!free.isEmpty()) {
      slot = free.get(free.size() - 1);
      free.truncate(free.size() - 1);
    } else {
      slot = highWater++;
      if (slot == targets.length) {
        grow();
      }
    }
    targets[slot] = t;
    hashes[slot] = t.hash();
    owners[slot] = NONE;
    jobs[slot] = jobId(t.job());
    storeCost(slot, t.cost());
    auxes[slot] = aux(t.labelsHash(), t.cost());
    table.insert(t.hash() & keyMask, slot);
    mark(slot, SEEN);
    journal(slot, NEW);
    added.add(slot);
    recordGiven(slot, false);
    return slot;
  }

  /** The id of a job some known target has (or had). */
  int jobId(String job) {
    Integer id = jobIds.get(job);
    if (id == null) {
      id = jobNames.size();
      jobIds.put(job, id);
      jobNames.add(job);
    }
    return id;
  }

  /** Carries a known target's new labels; journals the first relabel of the operation. */
  private void relabel(int slot, Target t) {
    if (!has(slot, RELABELED)) {
      mark(slot, RELABELED);
      relabeled.add(slot);
      relabeledFrom.add(targets[slot]);
    }
    journal(slot, owners[slot]);
    targets[slot] = t;
    setCost(slot, t.cost());
    auxes[slot] = aux(t.labelsHash(), t.cost());
  }

  /**
   * Carries a known target's new cost, its labels unchanged ({@link #find} found it):
   * keeps the new instance and updates its owner's total. Not journaled as touched: the owner
   * does not change, so nothing of the published lists does.
   */
  private void recost(int slot, Target t) {
    targets[slot] = t;
    setCost(slot, t.cost());
    auxes[slot] = aux(t.labelsHash(), t.cost());
  }

  /** Stores a slot's cost, allocating the costs when it is the first that is not the default. */
  private void storeCost(int slot, long cost) {
    if (costs == null) {
      if (cost == Target.DEFAULT_COST) {
        return;
      }
      long[] c = new long[targets.length];
      Arrays.fill(c, Target.DEFAULT_COST);
      costs = c;
    }
    costs[slot] = cost;
  }

  private void setCost(int slot, long cost) {
    long old = costOf(slot);
    if (old == cost) {
      return;
    }
    storeCost(slot, cost);
    int o = owners[slot];
    if (o >= 0) {
      membersById[o].recost(cost - old);
    }
    if (!has(slot, RECOSTED)) {
      mark(slot, RECOSTED);
      recosted.add(slot);
    }
  }

  /**
   * Drops every live slot not marked seen in this operation: unassigns it, takes it out of the
   * order and journals it as removed (in order). New slots are merged into the order.
   */
  void dropUnseenAndOrderAdded() {
    int n = order.size();
    seenKnown = 0;
    if (unseen.isEmpty() && added.isEmpty()) {
      return;
    }
    if (n == 0) {
      orderAddedFromNothing();
      return;
    }
    sorter.sort(added.array(), added.size(), hashes, targets);
    // In place, so a small change allocates nothing and moves the order's arrays in bulk: each
    // unseen slot is found by a binary search of the order's hashes, the runs between them are
    // moved forward; then each added slot's place is found the same way, from the back, and the
    // runs after it are moved back.
    int[] o = order.array();
    long[] oh = orderHashes;
    int[] gone = unseen.array();
    int w = 0;
    int r = 0;
    for (int g = 0; g < unseen.size(); g++) {
      int s = gone[g];
      int p = positionInOrder(s, r, n);
      int run = p - r;
      if (w != r) {
        System.arraycopy(o, r, o, w, run);
        System.arraycopy(oh, r, oh, w, run);
      }
      w += run;
      r = p + 1;
      int owner = owners[s];
      journal(s, owner);
      if (owner >= 0) {
        membersById[owner].remove(jobs[s], costOf(s));
      }
      owners[s] = REMOVED;
      removed.add(s);
    }
    if (w != r) {
      System.arraycopy(o, r, o, w, n - r);
      System.arraycopy(oh, r, oh, w, n - r);
    }
    w += n - r;
    int[] ad = added.array();
    int a = added.size();
    int total = w + a;
    order.truncate(w);
    if (total > o.length) {
      order.ensureCapacity(Headroom.withHeadroom(total));
    }
    o = order.array();
    if (oh.length < o.length) {
      orderHashes = Arrays.copyOf(oh, o.length);
      oh = orderHashes;
    }
    int end = w; // o[0 .. end) still to place; the rest is final
    for (int x = total; a > 0; a--) {
      int add = ad[a - 1];
      int p = insertionPoint(add, end);
      int run = end - p;
      x -= run;
      System.arraycopy(o, p, o, x, run);
      System.arraycopy(oh, p, oh, x, run);
      x--;
      o[x] = add;
      oh[x] = hashes[add];
      end = p;
    }
    order.setSize(total);
    unseen.reset();
  }

  /**
   * The order of a first placement (nothing known before): the added slots are sorted straight
   * into the order's arrays ({@link SlotOrder#sortInto}, no scratch but its counts, where sorting
   * keys would take two arrays of longs the size of the input); {@link #added} then takes the
   * order.
   */
  private void orderAddedFromNothing() {
    int a = added.size();
    if (order.array().length < a) {
      order.ensureCapacity(Headroom.withHeadroom(a));
    }
    int[] o = order.array();
    if (orderHashes.length < o.length) {
      orderHashes = new long[o.length];
    }
    long[] oh = orderHashes;
    int[] ad = added.array();
    if (SlotOrder.sortInto(ad, a, hashes, targets, o, oh)) {
      System.arraycopy(o, 0, ad, 0, a);
    } else {
      // Hashes that crowd one bucket (made to collide): sort by keys, then copy.
      sorter.sort(ad, a, hashes, targets);
      System.arraycopy(ad, 0, o, 0, a);
      for (int i = 0; i < a; i++) {
        oh[i] = hashes[ad[i]];
      }
    }
    order.setSize(a);
    unseen.reset();
  }

  /** Where slot {@code s} is in the order, searched in {@code [from, to)}, where it must be. */
  private int positionInOrder(int s, int from, int to) {
    long h = hashes[s];
    long[] oh = orderHashes;
    int lo = from;
    int hi = to;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (Long.compareUnsigned(oh[mid], h) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    int[] o = order.array();
    for (int i = lo; i < to && oh[i] == h; i++) {
      if (o[i] == s) {
        return i;
      }
    }
    throw new IllegalStateException("slot " + s + " is not in the order");
  }

  /** The first place in {@code order[0 .. end)} holding a slot after {@code s} in the order. */
  private int insertionPoint(int s, int end) {
    long h = hashes[s];
    long[] oh = orderHashes;
    int[] o = order.array();
    int lo = 0;
    int hi = end;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      int c = Long.compareUnsigned(oh[mid], h);
      if (c < 0 || (c == 0 && SlotOrder.compare(o[mid], s, hashes, targets) <= 0)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /**
   * The slot holding this very instance, or -1: one table probe run, no string comparison.
   *
   * @param t a target instance, as the last snapshot holds it
   * @return its slot, or -1 when no slot holds that instance
   */
  @SuppressWarnings("ReferenceEquality") // the instance, on purpose: not an equal target
  int slotOfInstance(Target t) {
    long key = t.hash() & keyMask;
    for (int cell = table.find(key); cell >= 0; cell = table.findNext(key, cell)) {
      int s = table.slotAt(cell);
      if (targets[s] == t) {
        return s;
      }
    }
    return -1;
  }

  /**
   * Unassigns the given slots, which the departed members held, and adds them to {@code out} in
   * order: the cost of the orphans alone, where {@link #orphansOf} walks every slot.
   *
   * @param held the slots, in any order; sorted in place
   * @param n how many
   * @param departedById which member ids departed
   * @param out where the slots go, in {@link TargetOrder}
   * @return false, having changed nothing, when some slot is not held by a departed member (the
   *     caller then walks every slot)
   */
  boolean orphansAmong(int[] held, int n, boolean[] departedById, IntList out) {
    for (int i = 0; i < n; i++) {
      int owner = owners[held[i]];
      if (owner < 0 || owner >= departedById.length || !departedById[owner]) {
        return false;
      }
    }
    sorter.sort(held, n, hashes, targets);
    for (int i = 0; i < n; i++) {
      place(held[i], null);
      out.add(held[i]);
    }
    return true;
  }

  /** Unassigns every target of the given (departed) members; returns their slots, in order. */
  void orphansOf(boolean[] departedById, IntList out) {
    int n = order.size();
    int[] o = order.array();
    for (int i = 0; i < n; i++) {
      int s = o[i];
      int owner = owners[s];
      if (owner >= 0 && owner < departedById.length && departedById[owner]) {
        place(s, null);
        out.add(s);
      }
    }
  }

  @Override
  public void place(int slot, Member member) {
    int next = member == null ? NONE : member.id();
    int o = owners[slot];
    if (o == next) {
      return;
    }
    journal(slot, o);
    if (o >= 0) {
      membersById[o].remove(jobs[slot], costOf(slot));
    }
    owners[slot] = next;
    if (member != null) {
      member.add(jobs[slot], costOf(slot));
    }
  }

  private void journal(int slot, int previousOwner) {
    if (!has(slot, TOUCHED)) {
      mark(slot, TOUCHED);
      touched.add(slot);
      previousOwners.put(slot, previousOwner, targets.length);
    }
  }

  // ---- the journal, for the publisher ----

  /** Slots touched in this operation, in the order first touched. */
  IntList touched() {
    return touched;
  }

  /**
   * The owner before this operation of a touched slot ({@link #NEW} for a new target,
   * {@link #NONE} for an unassigned one); meaningless for a slot not touched.
   */
  int previousOwner(int slot) {
    return previousOwners.get(slot);
  }

  /** Slots added in this operation, in {@link TargetOrder} once the order was updated. */
  IntList added() {
    return added;
  }

  /** Slots removed in this operation, in {@link TargetOrder}. */
  IntList removed() {
    return removed;
  }

  /** Slots relabeled in this operation (in the order first relabeled). */
  IntList relabeled() {
    return relabeled;
  }

  /** The instance each {@link #relabeled()} slot had before this operation. */
  List<Target> relabeledFrom() {
    return relabeledFrom;
  }

  /**
   * Forgets the relabels of this operation that ended where they began (a duplicate given later
   * in the same call restored the first labels), so {@link #relabeled()} lists only real ones.
   */
  void settleRelabels() {
    int w = 0;
    for (int i = 0; i < relabeled.size(); i++) {
      int s = relabeled.get(i);
      Target from = relabeledFrom.get(i);
      if (from.labelsHash() == targets[s].labelsHash()) {
        marks[s] &= ~RELABELED;
        // Keep the instance the snapshot already holds, unless the cost changed meanwhile (the
        // latest instance has the same labels then, and the latest cost).
        if (from.cost() == costOf(s)) {
          targets[s] = from;
        }
        continue;
      }
      relabeled.set(w, s);
      relabeledFrom.set(w++, from);
    }
    relabeled.truncate(w);
    relabeledFrom.subList(w, relabeledFrom.size()).clear();
  }

  /**
   * Slots whose cost changed in this operation and that were known before it (in the order
   * first changed); a slot may also be relabeled or touched.
   */
  IntList recosted() {
    return recosted;
  }

  /** Whether the slot's labels changed in this operation (after {@link #settleRelabels}). */
  boolean isRelabeled(int slot) {
    return has(slot, RELABELED);
  }

  boolean isTouched(int slot) {
    return has(slot, TOUCHED);
  }

  /** Frees the removed slots and forgets the journal. */
  void endOperation() {
    for (int i = 0; i < removed.size(); i++) {
      int s = removed.get(i);
      table.remove(hashes[s] & keyMask, s);
      targets[s] = null;
      free.add(s);
    }
    touched.reset();
    previousOwners.clear();
    added.reset();
    removed.reset();
    relabeled.reset();
    relabeledFrom.clear();
    recosted.reset();
  }

  private void grow() {
    resize(targets.length * 2);
  }

  private void resize(int n) {
    targets = Arrays.copyOf(targets, n);
    hashes = Arrays.copyOf(hashes, n);
    owners = Arrays.copyOf(owners, n);
    jobs = Arrays.copyOf(jobs, n);
    if (costs != null) {
      costs = Arrays.copyOf(costs, n);
    }
    auxes = Arrays.copyOf(auxes, n);
    marks = Arrays.copyOf(marks, n);
    previousOwners.grow(n);
    positions = Arrays.copyOf(positions, n);
  }
}
