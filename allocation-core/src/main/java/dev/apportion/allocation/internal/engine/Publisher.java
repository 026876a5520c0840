package dev.apportion.allocation.internal.engine;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSortedSet;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.collections.Passes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * Turns the {@link Journal} of one operation into the next immutable {@link Snapshot}, and, when
 * someone listens, into the list of {@link Move}s. Writer-thread only. It keeps, by member id,
 * the entry it last built for each member, so that a collector change rebuilds only what
 * changed; the writer hands it the members and their name index, and never reads the snapshot
 * back.
 *
 * <p><b>Design.</b> The touched slots are visited once, in {@link TargetOrder}: each yields its
 * owner before and after, which gives the move, the change to the target table, and an addition
 * to and a removal from per-collector, per-job deltas (both in order, because the visit is).
 * Only the lists those deltas name are rebuilt, each by one merge of the old list with its delta;
 * every other list, every other collector's entry and every untouched table shard is shared with
 * the previous snapshot. The unassigned set is rebuilt only when some target entered or left it.
 * Each collector's change to one job's list is a {@link JobListDelta}.
 *
 * <p>When a quarter of the known targets or more were touched (a first placement, a change of
 * most owners), the table and every list are built from the state instead ({@link
 * FullEntries}, {@link TargetTable#of}); they then hold every target's current instance. On the
 * delta path an untouched target keeps the instance last published: a target whose cost alone
 * changed (recosted, not touched) is listed with its earlier instance, equal to the new one
 * ({@link Target#equals} ignores the cost), until it is next touched or the snapshot is rebuilt.
 *
 * <p><b>Cost.</b> O(k log k) to order {@code k} touched targets (or one pass over the order when
 * most were touched), plus the sizes of the lists rebuilt, plus O(collectors) to assemble the
 * entry map when any entry changed. Nothing when nothing was touched.
 */
final class Publisher {
  /** What one operation published. */
  record Result(Snapshot after, List<Move> moves, List<Target> relabeled, int reassigned) {}

  private static final Target[] NO_TARGETS = {};
  private static final String[] NO_OWNERS = {};

  /** The touched slots in order; then the scratch of {@link FullEntries#build}. */
  private final IntList visit = new IntList();
  private final FullEntries full = new FullEntries();
  /** Deltas by member id, then job id; only touched members have an inner array. */
  private JobListDelta[][] deltas = new JobListDelta[16][];
  private final IntList deltaMembers = new IntList();
  /** Scratch of {@link #rebuild}: jobs' sort keys (rank, then id). */
  private long[] jobKeys = new long[16];
  private final Visit pass = new Visit();
  /**
   * By member id: the entry this publisher last built for the member {@link #entryOf} names
   * there (ids are reused, so an entry counts only for the member it was built for).
   */
  private JobLists[] entryById = new JobLists[16];
  private Member[] entryOf = new Member[16];

  /**
   * Publishes the current operation.
   *
   * @param slots the state, its journal not yet ended
   * @param members the members after the operation
   * @param names the members by name, as the writer keeps them
   * @param before the snapshot before
   * @param collectorsChanged whether the member set (or a member's node) changed
   * @param wantMoves whether to build the moves and the relabeled list (someone listens)
   * @param outsidePartition the placer's count of targets outside their partition
   * @return the new snapshot (the old one when nothing changed) and what moved
   */
  Result publish(Slots slots, Members members, NameIndex names, Snapshot before,
      boolean collectorsChanged, boolean wantMoves, int outsidePartition) {
    Journal journal = slots.journal();
    IntList touched = journal.touched();
    if (touched.isEmpty() && !collectorsChanged) {
      Snapshot same = before.outsidePartition() == outsidePartition ? before
          : before.withOutsidePartition(outsidePartition);
      if (journal.recosted().isEmpty()) {
        return new Result(same, List.of(), List.of(), 0);
      }
      // Only costs changed: the lists stand, the per-collector totals do not.
      return new Result(same.withCosts(costs(members)), List.of(), List.of(), 0);
    }
    // Most targets touched (a first placement, a change of most owners): the table and every
    // list are built anew from the state, at their sizes, instead of through deltas.
    boolean full = touched.size() * 4L >= slots.known();
    int k;
    int[] v;
    if (full && !wantMoves) {
      // The moves are not built, so the order of the visit does not matter.
      k = touched.size();
      v = touched.array();
    } else {
      orderTouched(slots);
      k = visit.size();
      v = visit.array();
    }
    List<Move> moves = wantMoves ? new ArrayList<>() : List.of();
    List<Target> relabeledInOrder = wantMoves && !journal.relabeled().isEmpty()
        ? new ArrayList<>(journal.relabeled().size()) : List.of();
    Target[] tableTargets;
    String[] tableOwners;
    int w;
    int reassigned;
    boolean unassignedChanged;
    TargetTable table;
    NameIndex indexByName = before.indexByName;
    JobLists[] entries = before.entries;
    ImmutableSortedSet<Target> unassigned = before.unassigned;
    // Whatever happens, the publisher keeps nothing of this operation for the next: the visit's
    // arrays, the deltas (a next publish would apply a failed one's), the visit order.
    try {
      pass.start(slots, members, full, wantMoves, moves, relabeledInOrder, k);
      for (int i = 0; i < k; i++) {
        pass.slot(v[i]);
      }
      tableTargets = pass.tableTargets;
      tableOwners = pass.tableOwners;
      w = pass.tableCount;
      reassigned = pass.reassigned;
      unassignedChanged = pass.unassignedChanged;
      table = full ? TargetTable.of(slots) : before.table.apply(tableTargets, tableOwners, w);
      if (collectorsChanged) {
        indexByName = names;
      }
      if (full) {
        entries = this.full.build(members, slots, visit);
        for (int i = 0; i < entries.length; i++) {
          entries(members.get(i), entries[i]);
        }
      } else if (collectorsChanged) {
        entries = entries(members, slots);
      } else if (!deltaMembers.isEmpty()) {
        entries = entries.clone();
        for (int i = 0; i < deltaMembers.size(); i++) {
          Member m = slots.member(deltaMembers.get(i));
          if (isCurrent(members, m)) {
            entries[m.index()] = rebuild(entries[m.index()], deltas[m.id()], slots);
            entries(m, entries[m.index()]);
          }
        }
      }
      if (collectorsChanged) {
        forgetDeparted(members);
      }
      if (unassignedChanged) {
        unassigned = unassigned(slots);
      }
    } finally {
      pass.end();
      clearDeltas();
      visit.reset();
      this.full.trim();
    }
    return new Result(new Snapshot(indexByName, entries, table, unassigned,
        costs(members), outsidePartition),
        wantMoves ? Collections.unmodifiableList(moves) : moves,
        wantMoves ? Collections.unmodifiableList(relabeledInOrder) : relabeledInOrder,
        reassigned);
  }

  /**
   * The pass over one operation's touched slots, one call a slot: each yields its move, its entry
   * in the target table's change and its collectors' deltas. A method called once a slot
   * ({@link Passes}), compiled with the profile of the changes that use it rather than with
   * {@link #publish}'s.
   */
  private final class Visit {
    private Slots slots;
    private Members members;
    private boolean full;
    private boolean wantMoves;
    private List<Move> moves;
    private List<Target> relabeledInOrder;
    Target[] tableTargets;
    String[] tableOwners;
    int tableCount;
    int reassigned;
    boolean unassignedChanged;

    void start(Slots slots, Members members, boolean full, boolean wantMoves, List<Move> moves,
        List<Target> relabeledInOrder, int k) {
      this.slots = slots;
      this.members = members;
      this.full = full;
      this.wantMoves = wantMoves;
      this.moves = moves;
      this.relabeledInOrder = relabeledInOrder;
      this.tableTargets = full ? NO_TARGETS : new Target[k];
      this.tableOwners = full ? NO_OWNERS : new String[k];
      this.tableCount = 0;
      this.reassigned = 0;
      this.unassignedChanged = false;
    }

    /** Forgets the operation's state, so that the publisher retains none of it. */
    void end() {
      slots = null;
      members = null;
      moves = null;
      relabeledInOrder = null;
      tableTargets = null;
      tableOwners = null;
    }

    void slot(int s) {
      int from = slots.journal().previousOwner(s);
      int to = slots.ownerId(s);
      boolean removed = to == Slots.REMOVED;
      boolean relabeled = !removed && slots.journal().isRelabeled(s);
      Target instance = slots.target(s);
      if (relabeled && wantMoves) {
        relabeledInOrder.add(instance);
      }
      int fromId = from < 0 ? Slots.NONE : from;
      int toId = to < 0 ? Slots.NONE : to;
      if (fromId != toId) {
        Member fromMember = fromId >= 0 ? slots.member(fromId) : null;
        Member toMember = toId >= 0 ? slots.member(toId) : null;
        if (wantMoves) {
          moves.add(new Move(instance, fromMember == null ? null : fromMember.name(),
              toMember == null ? null : toMember.name()));
        }
        if (!full && fromMember != null && isCurrent(members, fromMember)) {
          delta(fromId, slots.job(s)).remove(instance);
        }
        if (!full && toMember != null) {
          delta(toId, slots.job(s)).add(instance);
        }
        if (fromId >= 0 && !removed) {
          reassigned++;
        }
      } else if (!full && toId >= 0 && relabeled) {
        JobListDelta d = delta(toId, slots.job(s));
        d.remove(instance);
        d.add(instance);
      }
      if (removed) {
        if (from != Journal.NEW) {
          unassignedChanged |= from == Slots.NONE;
          if (!full) {
            tableTargets[tableCount] = instance;
            tableOwners[tableCount++] = TargetTable.REMOVE;
          }
        }
        return;
      }
      // A target entered or left the unassigned set, or one in it has new labels.
      unassignedChanged |= to < 0 || from == Slots.NONE;
      if (!full && (fromId != toId || relabeled || from == Journal.NEW)) {
        tableTargets[tableCount] = instance;
        tableOwners[tableCount++] = toId >= 0 ? slots.member(toId).name() : null;
      }
    }
  }

  /** The members' cost totals, in index order: O(c). */
  private static long[] costs(Members members) {
    Member[] ms = members.array();
    long[] costs = new long[ms.length];
    for (int i = 0; i < ms.length; i++) {
      costs[i] = ms[i].cost();
    }
    return costs;
  }

  private static boolean isCurrent(Members members, Member m) {
    return m.index() < members.size() && members.get(m.index()) == m;
  }


  /**
   * Fills {@link #visit} with the touched slots in {@link TargetOrder}. When most targets were
   * touched (a full placement), walking the order is cheaper than sorting.
   */
  private void orderTouched(Slots slots) {
    Journal journal = slots.journal();
    IntList touched = journal.touched();
    int k = touched.size();
    visit.clear();
    visit.ensureCapacity(k);
    if (k * 4L < slots.known()) {
      System.arraycopy(touched.array(), 0, visit.array(), 0, k);
      visit.truncate(k);
      slots.sorter().sort(visit.array(), k, slots.hashes(), slots.targets());
      return;
    }
    IntList order = slots.order();
    IntList removed = journal.removed();
    int r = 0;
    long[] hashes = slots.hashes();
    Target[] targets = slots.targets();
    for (int i = 0; i < order.size(); i++) {
      int s = order.get(i);
      while (r < removed.size()
          && SlotOrder.compare(removed.get(r), s, hashes, targets) < 0) {
        visit.add(removed.get(r++));
      }
      if (journal.isTouched(s)) {
        visit.add(s);
      }
    }
    while (r < removed.size()) {
      visit.add(removed.get(r++));
    }
  }

  private JobListDelta delta(int memberId, int job) {
    if (memberId >= deltas.length) {
      deltas = Arrays.copyOf(deltas, Math.max(memberId + 1, deltas.length * 2));
    }
    JobListDelta[] byJob = deltas[memberId];
    if (byJob == null) {
      byJob = new JobListDelta[Math.max(job + 1, 4)];
      deltas[memberId] = byJob;
      deltaMembers.add(memberId);
    } else if (job >= byJob.length) {
      byJob = Arrays.copyOf(byJob, Math.max(job + 1, byJob.length * 2));
      deltas[memberId] = byJob;
    }
    JobListDelta d = byJob[job];
    if (d == null) {
      d = new JobListDelta();
      byJob[job] = d;
    }
    return d;
  }

  private void clearDeltas() {
    for (int i = 0; i < deltaMembers.size(); i++) {
      deltas[deltaMembers.get(i)] = null;
    }
    deltaMembers.clear();
  }

  /**
   * Every member's entry after a change of the collector set: a call of {@link #entry} a member
   * ({@link Passes}).
   */
  private JobLists[] entries(Members members, Slots slots) {
    Member[] ms = members.array();
    JobLists[] out = new JobLists[ms.length];
    for (Member m : ms) {
      out[m.index()] = entry(m, slots);
    }
    return out;
  }

  /** One member's entry after a change of the collector set; recorded as its last. */
  // The same collector object: its entry stands (a value equal but another object is compared).
  @SuppressWarnings("ReferenceEquality")
  private JobLists entry(Member m, Slots slots) {
    // The member's entry in the last snapshot, kept by id: no lookup by name.
    JobLists e = lastEntry(m);
    JobListDelta[] d = m.id() < deltas.length ? deltas[m.id()] : null;
    if (e != null && d == null && e.collector == m.collector()) {
      return e; // nothing of it changed, and it is recorded already
    }
    if (e == null) {
      e = JobLists.empty(m.collector());
    } else if (!e.collector.equals(m.collector())) {
      e = e.withCollector(m.collector());
    }
    if (d != null) {
      e = rebuild(e, d, slots);
    }
    entries(m, e);
    return e;
  }

  /** The entry last built for {@code m}, or null. */
  // The same member object: another member may have held its id before.
  @SuppressWarnings("ReferenceEquality")
  private JobLists lastEntry(Member m) {
    int id = m.id();
    return id < entryOf.length && entryOf[id] == m ? entryById[id] : null;
  }

  /** Forgets the entries of members no longer in the set, so that none is retained. */
  private void forgetDeparted(Members members) {
    for (int id = 0; id < entryOf.length; id++) {
      Member m = entryOf[id];
      if (m != null && !isCurrent(members, m)) {
        entryOf[id] = null;
        entryById[id] = null;
      }
    }
  }

  /** Records the entry built for {@code m}. */
  private void entries(Member m, JobLists e) {
    int id = m.id();
    if (id >= entryOf.length) {
      int n = Math.max(id + 1, entryOf.length * 2);
      entryOf = Arrays.copyOf(entryOf, n);
      entryById = Arrays.copyOf(entryById, n);
    }
    entryOf[id] = m;
    entryById[id] = e;
  }

  /** {@link #jobKeys}, grown (by doubling at least) to hold {@code n}. */
  private long[] jobKeys(int n) {
    if (jobKeys.length < n) {
      jobKeys = new long[Math.max(n, 2 * jobKeys.length)];
    }
    return jobKeys;
  }

  /** One member's entry with its deltas applied: only the lists of the touched jobs change. */
  @SuppressWarnings("unchecked")
  private JobLists rebuild(JobLists old, JobListDelta[] deltas, Slots slots) {
    // The touched jobs in name order, sorted by their ranks (ints), not by their names: each
    // key is a job's rank above its id, and the id then finds the delta without a name lookup.
    int[] ranks = slots.jobRanks();
    long[] keys = jobKeys(deltas.length);
    int n = 0;
    for (int job = 0; job < deltas.length; job++) {
      if (deltas[job] != null) {
        keys[n++] = (long) ranks[job] << 32 | job;
      }
    }
    Arrays.sort(keys, 0, n);
    String[] jobs = new String[n];
    ImmutableList<Target>[] lists =
        (ImmutableList<Target>[]) new ImmutableList<?>[n];
    for (int i = 0; i < n; i++) {
      int job = (int) keys[i];
      jobs[i] = slots.jobName(job);
      List<Target> previous = old.targets(jobs[i]);
      lists[i] = deltas[job].applyTo((ImmutableList<Target>) previous);
    }
    return old.with(jobs, lists, n);
  }

  private static ImmutableSortedSet<Target> unassigned(Slots slots) {
    IntList order = slots.order();
    List<Target> out = new ArrayList<>();
    for (int i = 0; i < order.size(); i++) {
      int s = order.get(i);
      if (slots.ownerId(s) == Slots.NONE) {
        out.add(slots.target(s));
      }
    }
    return ImmutableSortedSet.orderedBy(TargetOrder.HASH).addAll(out).build();
  }
}
