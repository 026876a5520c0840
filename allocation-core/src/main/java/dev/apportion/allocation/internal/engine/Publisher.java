package dev.apportion.allocation.internal.engine;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSortedSet;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.collections.Passes;
import java.util.AbstractCollection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

/**
 * Turns the journal of one operation ({@link Slots}) into the next immutable {@link Snapshot},
 * and, when someone listens, into the list of {@link Move}s. Writer-thread only.
 *
 * <p><b>Design.</b> The touched slots are visited once, in {@link TargetOrder}: each yields its
 * owner before and after, which gives the move, the change to the target table, and an addition
 * to and a removal from per-collector, per-job deltas (both in order, because the visit is).
 * Only the lists those deltas name are rebuilt, each by one merge of the old list with its delta;
 * every other list, every other collector's entry and every untouched table shard is shared with
 * the previous snapshot. The unassigned set is rebuilt only when some target entered or left it.
 *
 * <p>When a quarter of the known targets or more were touched (a first placement, a change of
 * most owners), the table and every list are built from the state instead ({@link
 * #allEntries}, {@link TargetTable#of}); they then hold every target's current instance. On the
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

  /** One collector's change to one job's list: removals and additions, each in order. */
  private static final class Delta {
    private static final Target[] NONE = {};
    Target[] adds = new Target[2];
    int addCount;
    Target[] removes = NONE;
    int removeCount;

    void add(Target t) {
      if (addCount == adds.length) {
        adds = Arrays.copyOf(adds, addCount * 2);
      }
      adds[addCount++] = t;
    }

    void remove(Target t) {
      if (removeCount == removes.length) {
        removes = Arrays.copyOf(removes, Math.max(2, removeCount * 2));
      }
      removes[removeCount++] = t;
    }
  }

  private static final Target[] NO_TARGETS = {};
  private static final String[] NO_OWNERS = {};

  /** The touched slots in order; then the scratch of {@link #allEntries}. */
  private final IntList visit = new IntList();
  /** Scratch of {@link #allEntries}, by job id: targets counted, then next place. */
  private int[] jobCount = new int[16];
  /** Scratch of {@link #allEntries}: one member's targets, grouped by job. */
  private Target[] byJob = new Target[16];
  private final ListSource source = new ListSource();
  /** Deltas by member id, then job id; only touched members have an inner array. */
  private Delta[][] deltas = new Delta[16][];
  private final IntList deltaMembers = new IntList();
  /**
   * Scratch of {@link #rebuild} and {@link #allEntries} (neither calls the other): jobs' sort keys
   * (rank, then id).
   */
  private long[] jobKeys = new long[16];
  private final Visit pass = new Visit();

  /**
   * Publishes the current operation.
   *
   * @param slots the state, its journal not yet ended
   * @param members the members after the operation
   * @param before the snapshot before
   * @param collectorsChanged whether the member set (or a member's node) changed
   * @param wantMoves whether to build the moves and the relabeled list (someone listens)
   * @param outsidePartition the placer's count of targets outside their partition
   * @return the new snapshot (the old one when nothing changed) and what moved
   */
  Result publish(Slots slots, Members members, Snapshot before, boolean collectorsChanged,
      boolean wantMoves, int outsidePartition) {
    IntList touched = slots.touched();
    if (touched.isEmpty() && !collectorsChanged) {
      Snapshot same = before.outsidePartition() == outsidePartition ? before
          : before.withOutsidePartition(outsidePartition);
      if (slots.recosted().isEmpty()) {
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
    List<Target> relabeledInOrder = wantMoves && !slots.relabeled().isEmpty()
        ? new ArrayList<>(slots.relabeled().size()) : List.of();
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
        indexByName = NameIndex.of(members);
      }
      if (full) {
        entries = allEntries(members, slots);
      } else if (collectorsChanged) {
        entries = entries(members, slots);
      } else if (!deltaMembers.isEmpty()) {
        entries = entries.clone();
        for (int i = 0; i < deltaMembers.size(); i++) {
          Member m = slots.member(deltaMembers.get(i));
          if (isCurrent(members, m)) {
            entries[m.index()] = rebuild(entries[m.index()], deltas[m.id()], slots);
            m.published(entries[m.index()]);
          }
        }
      }
      if (unassignedChanged) {
        unassigned = unassigned(slots);
      }
    } finally {
      pass.end();
      clearDeltas();
      visit.reset();
      if (byJob.length > 1024) {
        byJob = new Target[16];
      }
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
      int from = slots.previousOwner(s);
      int to = slots.ownerId(s);
      boolean removed = to == Slots.REMOVED;
      boolean relabeled = !removed && slots.isRelabeled(s);
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
        Delta d = delta(toId, slots.job(s));
        d.remove(instance);
        d.add(instance);
      }
      if (removed) {
        if (from != Slots.NEW) {
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
      if (!full && (fromId != toId || relabeled || from == Slots.NEW)) {
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
    IntList touched = slots.touched();
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
    IntList removed = slots.removed();
    int r = 0;
    long[] hashes = slots.hashes();
    Target[] targets = slots.targets();
    for (int i = 0; i < order.size(); i++) {
      int s = order.get(i);
      while (r < removed.size()
          && SlotOrder.compare(removed.get(r), s, hashes, targets) < 0) {
        visit.add(removed.get(r++));
      }
      if (slots.isTouched(s)) {
        visit.add(s);
      }
    }
    while (r < removed.size()) {
      visit.add(removed.get(r++));
    }
  }

  private Delta delta(int memberId, int job) {
    if (memberId >= deltas.length) {
      deltas = Arrays.copyOf(deltas, Math.max(memberId + 1, deltas.length * 2));
    }
    Delta[] byJob = deltas[memberId];
    if (byJob == null) {
      byJob = new Delta[Math.max(job + 1, 4)];
      deltas[memberId] = byJob;
      deltaMembers.add(memberId);
    } else if (job >= byJob.length) {
      byJob = Arrays.copyOf(byJob, Math.max(job + 1, byJob.length * 2));
      deltas[memberId] = byJob;
    }
    Delta d = byJob[job];
    if (d == null) {
      d = new Delta();
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
   * Every member's entry built from the state alone, when most targets were touched: the known
   * targets (already in {@link TargetOrder}) are grouped by owner, then each owner's by job, and
   * each list is copied once at its size. No delta, no merge, nothing read from the previous
   * snapshot. O(n + sum of each member's jobs log jobs).
   */
  @SuppressWarnings("unchecked")
  private JobLists[] allEntries(Members members, Slots slots) {
    int m = members.size();
    int[] ids = members.ids();
    int[] indexById = new int[Math.max(0, members.maxId()) + 1];
    Arrays.fill(indexById, -1);
    for (int i = 0; i < m; i++) {
      indexById[ids[i]] = i;
    }
    // Group the known slots by owner, each group in TargetOrder (a stable counting sort).
    IntList order = slots.order();
    int n = order.size();
    int[] start = new int[m + 1];
    for (int i = 0; i < n; i++) {
      int id = slots.ownerId(order.get(i));
      if (id >= 0) {
        start[indexById[id] + 1]++;
      }
    }
    int maxLoad = 0;
    for (int i = 0; i < m; i++) {
      maxLoad = Math.max(maxLoad, start[i + 1]);
      start[i + 1] += start[i];
    }
    // The visit is over: its array takes the grouping.
    visit.clear();
    visit.ensureCapacity(start[m]);
    int[] g = visit.array();
    int[] next = Arrays.copyOf(start, m);
    for (int i = 0; i < n; i++) {
      int s = order.get(i);
      int id = slots.ownerId(s);
      if (id >= 0) {
        g[next[indexById[id]]++] = s;
      }
    }
    // Job ids ranked by name: each entry lists its jobs in name order.
    int jobs = slots.jobCount();
    int[] rank = slots.jobRanks();
    if (jobCount.length < jobs) {
      jobCount = new int[Math.max(jobs, jobCount.length * 2)];
    }
    if (byJob.length < maxLoad) {
      byJob = new Target[Math.max(maxLoad, byJob.length * 2)];
    }
    int[] count = jobCount;
    // Zero whatever an earlier call left should it have thrown midway (a job count's slot is
    // zeroed as its list is built).
    Arrays.fill(count, 0, jobs, 0);
    Target[] grouping = byJob;
    // A member has at most min(jobs, maxLoad) distinct jobs: sized once (Passes).
    long[] present = jobKeys(Math.min(jobs, maxLoad));
    JobLists[] out = new JobLists[m];
    for (int i = 0; i < m; i++) {
      Member member = members.get(i);
      int from = start[i];
      int to = start[i + 1];
      if (from == to) {
        out[i] = JobLists.empty(member.collector());
        member.published(out[i]);
        continue;
      }
      // The member's jobs, as rank << 32 | job id, so that a sort of longs orders them by name.
      int distinct = 0;
      for (int p = from; p < to; p++) {
        int job = slots.job(g[p]);
        if (count[job]++ == 0) {
          present[distinct++] = (long) rank[job] << 32 | job;
        }
      }
      Arrays.sort(present, 0, distinct);
      // Each job's first place in the member's run, then its targets scattered there in order.
      int place = 0;
      for (int d = 0; d < distinct; d++) {
        int job = (int) present[d];
        int c = count[job];
        count[job] = place;
        place += c;
      }
      for (int p = from; p < to; p++) {
        int s = g[p];
        grouping[count[slots.job(s)]++] = slots.target(s);
      }
      String[] names = new String[distinct];
      ImmutableList<Target>[] lists = (ImmutableList<Target>[]) new ImmutableList<?>[distinct];
      int first = 0;
      for (int d = 0; d < distinct; d++) {
        int job = (int) present[d];
        int end = count[job];
        names[d] = slots.jobName(job);
        lists[d] = source.copy(grouping, first, end);
        first = end;
        count[job] = 0;
      }
      Arrays.fill(grouping, 0, to - from, null);
      out[i] = JobLists.of(member.collector(), names, lists, to - from);
      member.published(out[i]);
    }
    return out;
  }

  /**
   * A reusable view of an array range that {@link ImmutableList#copyOf(java.util.Collection)}
   * copies with one {@code toArray()}, which the list then wraps: one array at the list's size and
   * the list itself, nothing else allocated.
   */
  private static final class ListSource extends AbstractCollection<Target> {
    private Target[] array = NO_TARGETS;
    private int from;
    private int to;

    ImmutableList<Target> copy(Target[] a, int start, int end) {
      array = a;
      from = start;
      to = end;
      try {
        return ImmutableList.copyOf(this);
      } finally {
        array = NO_TARGETS;
      }
    }

    @Override
    public Object[] toArray() {
      return Arrays.copyOfRange(array, from, to, Object[].class);
    }

    @Override
    public Iterator<Target> iterator() {
      return Arrays.asList(array).subList(from, to).iterator();
    }

    @Override
    public int size() {
      return to - from;
    }
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

  /** One member's entry after a change of the collector set; recorded on the member. */
  // The same collector object: its entry stands (a value equal but another object is compared).
  @SuppressWarnings("ReferenceEquality")
  private JobLists entry(Member m, Slots slots) {
    // The member's entry in the last snapshot, kept on the member: no lookup by name.
    JobLists e = m.published();
    Delta[] d = m.id() < deltas.length ? deltas[m.id()] : null;
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
    m.published(e);
    return e;
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
  private JobLists rebuild(JobLists old, Delta[] deltas, Slots slots) {
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
      lists[i] = merge((ImmutableList<Target>) previous, deltas[job]);
    }
    return old.with(jobs, lists, n);
  }

  /**
   * The old list without the delta's removals, with its additions, all in order. Each removal
   * and addition finds its place by a binary search from the previous one's; the runs of the old
   * list between them are copied as references, never read, so a list of {@code m} targets with
   * {@code d} changes costs about {@code d log m} reads of targets, not {@code m}. Built through a
   * builder of the exact size, which Guava then wraps instead of copying.
   */
  private static ImmutableList<Target> merge(ImmutableList<Target> old, Delta d) {
    Target[] adds = d.adds;
    int addCount = d.addCount;
    Target[] removes = d.removes;
    int removeCount = d.removeCount;
    // Every removal is in the old list: it names a target this collector held for this job.
    ImmutableList.Builder<Target> next =
        ImmutableList.builderWithExpectedSize(Math.max(0, old.size() - removeCount) + addCount);
    int a = 0;
    int r = 0;
    int o = 0;
    int size = old.size();
    while (a < addCount || r < removeCount) {
      // The next change in order: a removal before an addition of the same target (a relabel
      // removes the old instance and adds the new one).
      boolean removal = r < removeCount
          && (a == addCount || TargetOrder.compare(removes[r], adds[a]) <= 0);
      Target t = removal ? removes[r] : adds[a];
      int at = search(old, t, o, size);
      int stop = at >= 0 ? at : -at - 1;
      if (stop > o) {
        next.addAll(old.subList(o, stop));
      }
      o = stop;
      if (removal) {
        if (at < 0) {
          throw new IllegalStateException("a removal names a target the list does not hold");
        }
        o++;
        r++;
      } else {
        next.add(t);
        a++;
      }
    }
    if (o < size) {
      next.addAll(old.subList(o, size));
    }
    return next.build();
  }

  /**
   * The index of {@code t} in {@code list[from .. to)}, or {@code -(insertion point) - 1}, by
   * {@link TargetOrder}.
   */
  private static int search(List<Target> list, Target t, int from, int to) {
    int lo = from;
    int hi = to - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      int c = TargetOrder.compare(list.get(mid), t);
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return -lo - 1;
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
