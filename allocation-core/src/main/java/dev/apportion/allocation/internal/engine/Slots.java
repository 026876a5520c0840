package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.Headroom;
import dev.apportion.allocation.internal.collections.IntList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The engine's mutable record of every known target, as dense primitive data: the writer's
 * store, and the {@link Assignment} the placers place in. Writer-thread only; readers never see
 * it (the {@link Publisher} turns the operation's {@link Journal} into a new immutable
 * {@link Snapshot}).
 *
 * <p><b>Design.</b> Each known target owns an int <em>slot</em>; everything about it is an array
 * indexed by slot: the instance (latest labels), its identity hash, its owner (a {@link
 * Member#id()}, or {@link #NONE}), its job id and its cost. A {@link SlotTable} maps identity
 * hashes to slots; freed slots are reused, so the arrays stay as large as the largest target set
 * seen. A {@link LiveOrder} lists the live slots in {@link TargetOrder}. Every change of an owner
 * goes through {@link #place}, which journals it, keeps the members' counts and cost totals and
 * the {@link Holdings} (what each member holds) up to date.
 *
 * <p>The store does not decide what a call changed: {@link TargetIntake} compares a call's input
 * with it and adds, relabels, recosts and drops through the methods here.
 *
 * <p><b>Cost.</b> Each slot's {@link Target#cost()} is kept in a dense {@code long[]} (only once
 * some target has a cost other than the default), and each member's total ({@link Member#cost()})
 * is kept up to date as targets are placed, dropped or change cost.
 */
public final class Slots implements Assignment {
  /** Owner of an unassigned target. */
  static final int NONE = -1;
  /** Owner of a target removed in this operation. */
  static final int REMOVED = -3;
  /** The key mask of an allocator's slots: a target's whole identity hash keys the table. */
  static final long ALL_BITS = -1L;

  private final long keyMask;
  /** See {@link #ownersAsPlaced()}: fixed when the engine is built. */
  private final boolean ownersAsPlaced;
  private final SlotTable table = new SlotTable(this::keyOf);
  private final SlotOrder sorter = new SlotOrder();
  private final Journal journal = new Journal();
  private final LiveOrder order = new LiveOrder();
  private final Holdings holdings = new Holdings();

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
  private int highWater;
  private final IntList free = new IntList();

  private final Map<String, Integer> jobIds = new HashMap<>();
  private final List<String> jobNames = new ArrayList<>();
  /** {@link #jobRanks()}, for the first {@link #rankedJobs} jobs. */
  private int[] jobRanks = new int[0];
  private int rankedJobs;

  private Member[] membersById = new Member[16];

  /**
   * Empty slots.
   *
   * @param keyMask the bits of a target's identity hash that key the table: {@link #ALL_BITS}
   *     in an allocator; a narrow mask makes distinct targets share keys, which the table
   *     resolves by comparing targets
   * @param ownersAsPlaced see {@link #ownersAsPlaced()}
   */
  Slots(long keyMask, boolean ownersAsPlaced) {
    this.keyMask = keyMask;
    this.ownersAsPlaced = ownersAsPlaced;
  }

  /** True when no per-collector limit is set: only placers and orphans change owners. */
  @Override
  public boolean ownersAsPlaced() {
    return ownersAsPlaced;
  }

  /** Whether this operation relabeled a slot so far. */
  @Override
  public boolean mayHaveRelabeled() {
    return !journal.relabeled().isEmpty();
  }

  // ---- reading ----

  /** The journal of the current operation. */
  Journal journal() {
    return journal;
  }

  /** The table from identity hash to slot. */
  SlotTable table() {
    return table;
  }

  /** How many targets are known. */
  int known() {
    return order.size();
  }

  /** Live slots in {@link TargetOrder}. Must not be modified. */
  IntList order() {
    return order.slots();
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
    return order.hashAt(i);
  }

  @Override
  public Target target(int slot) {
    return targets[slot];
  }

  @Override
  public long hash(int slot) {
    return hashes[slot];
  }

  /** The table's key of an identity hash: the hash under the key mask. */
  long key(long hash) {
    return hash & keyMask;
  }

  private long keyOf(int slot) {
    return hashes[slot] & keyMask;
  }

  /** The table cell of an identity hash, loaded: see {@link SlotTable#peek}. */
  long peek(long hash) {
    return table.peek(hash & keyMask);
  }

  @Override
  public int job(int slot) {
    return jobs[slot];
  }

  @Override
  public long cost(int slot) {
    long[] c = costs;
    return c == null ? Target.DEFAULT_COST : c[slot];
  }

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

  /** Sorts a list of slots into {@link TargetOrder}, in place. */
  void sort(IntList list) {
    sorter.sort(list.array(), list.size(), hashes, targets);
  }

  /** The capacity of the per-slot arrays: every slot is below it. */
  int capacity() {
    return targets.length;
  }

  // ---- members ----

  /** Registers a new member under its id: it holds nothing yet. */
  void register(Member m) {
    if (m.id() >= membersById.length) {
      membersById = Arrays.copyOf(membersById, Math.max(m.id() + 1, membersById.length * 2));
    }
    membersById[m.id()] = m;
    holdings.register(m.id());
  }

  // ---- the operation ----

  /** Starts an operation: a new epoch for the journal's marks. */
  void beginOperation() {
    journal.begin();
  }

  /**
   * Makes room for {@code n} targets, so a large first call does not grow step by step. The room
   * is {@link Headroom#withHeadroom} {@code n}: a later call that replaces a few percent of the
   * targets (up to 6%, or at least 1.5% where a sixteenth more would take another MiB) adds its
   * new ones before the dropped ones free their slots, and must not copy every per-slot array and
   * the table to make room for them.
   */
  void reserve(int n) {
    if (targets.length < n) {
      resize(Headroom.withHeadroom(n));
    }
    table.reserve(Headroom.withHeadroom(n));
    // A call that brings many new targets journals each: size the journal once.
    int adds = n - known();
    if (adds > 0) {
      journal.reserveAdds(adds);
    }
  }

  /**
   * A new target: a slot, unassigned, journaled as new; not yet in the order ({@link
   * #dropAndOrder} merges it in).
   *
   * @return its slot
   */
  int add(Target t) {
    int slot;
    if (!free.isEmpty()) {
      slot = free.get(free.size() - 1);
      free.truncate(free.size() - 1);
    } else {
      slot = highWater++;
      if (slot == targets.length) {
        resize(targets.length * 2);
      }
    }
    targets[slot] = t;
    hashes[slot] = t.hash();
    owners[slot] = NONE;
    jobs[slot] = jobId(t.job());
    storeCost(slot, t.cost());
    table.insert(t.hash() & keyMask, slot);
    journal.touch(slot, Journal.NEW, targets.length);
    journal.added(slot);
    return slot;
  }

  /** The id of a job some known target has (or had). */
  private int jobId(String job) {
    Integer id = jobIds.get(job);
    if (id == null) {
      id = jobNames.size();
      jobIds.put(job, id);
      jobNames.add(job);
    }
    return id;
  }

  /** Carries a known target's new labels (and cost); journals it as relabeled and touched. */
  void relabel(int slot, Target t) {
    journal.relabeled(slot, targets[slot]);
    journal.touch(slot, owners[slot], targets.length);
    targets[slot] = t;
    setCost(slot, t.cost());
  }

  /**
   * Carries a known target's new cost, its labels unchanged: keeps the new instance and updates
   * its owner's total. Not journaled as touched: the owner does not change, so nothing of the
   * published lists does.
   */
  void recost(int slot, Target t) {
    targets[slot] = t;
    setCost(slot, t.cost());
  }

  /** Puts back an instance with the slot's labels and cost (a relabel undone in the call). */
  void keepInstance(int slot, Target t) {
    targets[slot] = t;
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
    long old = cost(slot);
    if (old == cost) {
      return;
    }
    storeCost(slot, cost);
    int o = owners[slot];
    if (o >= 0) {
      membersById[o].recost(cost - old);
    }
    journal.recosted(slot);
  }

  /**
   * Drops the {@code gone} slots (unassigns them and journals them as removed, in order) and
   * merges the {@code added} ones into the order.
   *
   * @param gone live slots not given in this call, in {@link TargetOrder}
   * @param added this operation's new slots; left in {@link TargetOrder}
   */
  void dropAndOrder(IntList gone, IntList added) {
    if (gone.isEmpty() && added.isEmpty()) {
      return;
    }
    for (int i = 0; i < gone.size(); i++) {
      int s = gone.get(i);
      int owner = owners[s];
      journal.touch(s, owner, targets.length);
      if (owner >= 0) {
        membersById[owner].remove(jobs[s], cost(s));
        holdings.unlink(s, owner);
      }
      owners[s] = REMOVED;
      journal.removed(s);
    }
    order.removeAndMerge(gone, added, hashes, targets, sorter);
  }

  /**
   * Unassigns every target the departed members hold and adds their slots to {@code out}, in
   * {@link TargetOrder}: found through the {@link Holdings}, at the cost of the orphans.
   *
   * @param departed members that left; each holds exactly {@link Member#load()} slots
   * @param out where the slots go
   */
  void unassignHeldBy(List<Member> departed, IntList out) {
    int from = out.size();
    for (Member m : departed) {
      if (holdings.collect(m.id(), out) != m.load()) {
        throw new IllegalStateException("member " + m.name() + " holds " + m.load()
            + " targets but its holdings list another count");
      }
    }
    int n = out.size() - from;
    int[] held = out.array();
    if (from == 0) {
      sorter.sort(held, n, hashes, targets);
    } else {
      int[] part = Arrays.copyOfRange(held, from, from + n);
      sorter.sort(part, n, hashes, targets);
      System.arraycopy(part, 0, held, from, n);
    }
    for (int i = from; i < from + n; i++) {
      place(held[i], null);
    }
  }

  @Override
  public void place(int slot, Member member) {
    int next = member == null ? NONE : member.id();
    int o = owners[slot];
    if (o == next) {
      return;
    }
    journal.touch(slot, o, targets.length);
    if (o >= 0) {
      membersById[o].remove(jobs[slot], cost(slot));
      holdings.unlink(slot, o);
    }
    owners[slot] = next;
    if (member != null) {
      member.add(jobs[slot], cost(slot));
      holdings.link(slot, next);
    }
  }

  /** Frees the removed slots and forgets the journal. */
  void endOperation() {
    IntList removed = journal.removed();
    for (int i = 0; i < removed.size(); i++) {
      int s = removed.get(i);
      table.remove(hashes[s] & keyMask, s);
      targets[s] = null;
      free.add(s);
    }
    journal.clear();
  }

  private void resize(int n) {
    targets = Arrays.copyOf(targets, n);
    hashes = Arrays.copyOf(hashes, n);
    owners = Arrays.copyOf(owners, n);
    jobs = Arrays.copyOf(jobs, n);
    if (costs != null) {
      costs = Arrays.copyOf(costs, n);
    }
    journal.grow(n);
    holdings.grow(n);
  }
}
