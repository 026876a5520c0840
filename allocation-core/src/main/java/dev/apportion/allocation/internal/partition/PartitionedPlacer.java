package dev.apportion.allocation.internal.partition;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.Headroom;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.CollectorSetChange;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.engine.Partitioned;
import dev.apportion.allocation.internal.engine.Placer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Partitioned placement: a layer around any other {@link Placer} that keeps each target inside its
 * partition (by default its zone), as users of the OpenTelemetry operator have asked. It is
 * {@code per-node}'s zone-aware fallback, and the opt-in zone-aware (or label-aware)
 * {@code consistent-hashing}, {@code rendezvous} and {@code least-weighted}.
 *
 * <p><b>Design.</b> The collectors are grouped by their {@link PartitionKey} value; each group with
 * at least one collector is a <em>partition</em>, with its own instance of the wrapped strategy's
 * placer, which sees only the partition's collectors and targets (through a view of the
 * assignment). So whatever the wrapped strategy guarantees (bounded load, minimal movement,
 * determinism) holds within each partition. The rest go to the <em>cluster-wide group</em>, one
 * more instance over every collector: targets with no key value (unknown zone), targets whose
 * partition has no collector (counted as {@link #outsidePartition()} and logged once per episode),
 * and targets spilled over the skew limit. The skew limit caps what a partition's collectors
 * carry in all at {@code floor(maxSkew * (n + h) * members / collectors)}, for {@code n} targets
 * in this view and {@code h} held by the collectors outside it ({@link Assignment#heldOutside}:
 * per-node's node-local targets, 0 otherwise); the partition keeps that minus what its own
 * collectors hold outside the view (never below 0). The targets past it, the last in
 * identity-hash order, spill to the cluster-wide group, which then leaves out the collectors of
 * every partition that spilled (unless that leaves none).
 *
 * <p>The wrapped placers are not changed: each receives the ordinary {@code targetsChanged} and
 * {@code collectorsChanged} calls, over its partition's members (a {@link Members} object kept
 * while the partition's members stay the same) and its partition's targets. A target that changes
 * partition is unassigned and handed to its new partition as new; a partition whose members
 * changed is told so as a collector change whose orphans are its unassigned targets, naming
 * which of them arrived in the partition and which targets left it in the same call; a cost
 * change reaches the placer of the group each changed target is in ({@code costsChanged}). A
 * target the engine's per-collector limit moved to a collector of another group reads as
 * unassigned in its group's view, so a wrapped placer never sees a member that is not its own.
 *
 * <p><b>Guarantees.</b> A target with a key value is placed on a collector of its partition
 * whenever that partition has a collector and is within the skew limit. Deterministic when the
 * wrapped strategy is: partitions are visited in key order, targets in identity-hash order, and
 * the spill set is a function of the two sets; no hash map's order, input order or
 * {@code Object.hashCode} decides anything.
 *
 * <p><b>Cost.</b> Every call that changes anything makes a few passes over the view's targets and
 * one over each partition's previous list, plus the wrapped placers' costs over their partitions.
 * A change of targets looks every target's key value up (a field read, and for zones a hash-map
 * get by node); a collector change reads the value the last reconcile found for each target that
 * was in the view then, unless the key resolves differently now ({@link PartitionKey#version()}:
 * a collector that gave a node another zone, a new topology), and a member's value is kept while
 * its collector object is. When, besides, every target stays in its group (the view's targets
 * are the same, every collector that stays is in its partition, the partitions with collectors
 * are the same and none is over the skew limit) the groups' lists are kept and what each group
 * has unassigned is found among the change's orphans, O(orphans), or by one pass over the view
 * when the engine's per-collector limit may have moved targets ({@link #keepGroups}); {@code
 * per-node}'s pool,
 * whose targets come and go with its collectors, takes the full reconcile. A change of targets
 * alone (none relabeled, the collectors as they were, each added target's partition with
 * collectors, no partition over the skew limit) looks up the added targets' keys only and
 * rebuilds the groups' lists by one pass over the view's slots ({@link #changeInPlace}). An
 * unchanged re-set of the targets costs nothing here.
 *
 * <p><b>One algorithm, three ways in.</b> This class is the reconcile: it decides which group
 * every target and every collector is in, and what each group's placer must hear. The full
 * reconcile and its two shortcuts decide the same thing from the same state (each target's group
 * and key value, the last grouping of the collectors, the skew limit), and every shortcut must
 * leave exactly what the full reconcile would: split apart, each would need that whole state and
 * the invariants that tie it together. What is not the reconcile lives beside it: {@link
 * PartitionGroup} (one group: its placer, its members, its view of the targets), {@link
 * MemberPartitions} (the collectors by key value, remembered by collector object) and {@link
 * SlotGroups} (the record by slot the groups read).
 *
 * <p><b>A reader's map.</b> The {@link Placer} and {@link Partitioned} callbacks come first:
 * {@code targetsChanged} tries {@link #changeInPlace}, else reconciles; {@code collectorsChanged},
 * {@code nodesChanged}, {@code topologyChanged} and {@code heldOutsideChanged} reconcile; {@code
 * costsChanged} hands each group its recosted targets. Then {@link #reconcile} (the full one:
 * the collectors' grouping, each target's group, the skew limit's spills, the new lists, the
 * departures, arrivals and unassigned targets of each group, then each group's placer), {@link
 * #spills} (the skew limit), {@link #keepGroups} (the collector-change shortcut) and
 * {@link #report} (the log and the count of targets outside their partition).
 */
public final class PartitionedPlacer implements Placer, Partitioned {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionedPlacer.class);
  private static final int GLOBAL = 0;

  private final PartitionKey key;
  private final Supplier<Placer> factory;
  /** NaN for no limit. */
  private final double maxSkew;
  private final String strategy;

  /** Partitions by key value; visited in key order. */
  private final TreeMap<String, PartitionGroup> byKey = new TreeMap<>();
  private final PartitionGroup global;
  private PartitionGroup[] byId = new PartitionGroup[4];
  private int groups = 1;

  /** By slot: each target's group, the next, its stamp and its key value. */
  private final SlotGroups bySlot = new SlotGroups();
  /** Counts the reconciles: what a slot's stamp is compared with. */
  private int round;
  /**
   * The stamp the slots of the last reconcile's view carry: the round of the last full
   * reconcile, which {@link #keepGroups} (the same view) leaves as it is rather than stamping
   * every slot again.
   */
  private int viewStamp;
  /**
   * The reconcile that filled the slots' key values, or -1 once a target may have changed since.
   */
  private int keysRound = -1;
  private long keysVersion;
  /** The collectors by partition, with their key values remembered. */
  private final MemberPartitions memberPartitions;
  /** What the last reconcile found, for {@link #keepGroups}. */
  private int keptOut;
  private int keptSpills;
  private Set<String> keptHomeless = Set.of();
  private int[] keptMemberGroup;
  private boolean[] keptWithMembers = new boolean[0];
  /** The members and partitions' member lists the last reconcile grouped by. */
  private Members keptMembers;
  private Map<String, List<Member>> keptMemberLists = Map.of();
  /** Scratch by view index: each target's group this reconcile, and whether it has a value. */
  private int[] want = new int[0];
  private boolean[] keyed = new boolean[0];

  private int outside;
  /** Whether the view was empty at the last reconcile (then no group holds a target). */
  private boolean lastViewEmpty;
  private boolean episode;

  /**
   * A partitioned placer.
   *
   * @param key what to partition by
   * @param factory a new placer of the wrapped strategy, one per partition and one cluster-wide
   * @param maxSkew the skew limit, or NaN for none
   * @param strategy the strategy's name, for the log
   */
  public PartitionedPlacer(PartitionKey key, Supplier<Placer> factory, double maxSkew, String strategy) {
    this.key = key;
    this.memberPartitions = new MemberPartitions(key);
    this.factory = factory;
    this.maxSkew = maxSkew;
    this.strategy = strategy;
    this.global = new PartitionGroup(GLOBAL, null, bySlot, factory, strategy, LOG);
    byId[GLOBAL] = global;
  }

  @Override
  public void targetsChanged(IntList added, IntList removed, Members members,
      Assignment assignment) {
    if (members.isEmpty() || (added.isEmpty() && removed.isEmpty())) {
      keysRound = -1;
      return;
    }
    if (changeInPlace(added, removed, members, assignment)) {
      return;
    }
    keysRound = -1;
    reconcile(members, assignment, null);
  }

  /**
   * A change of targets alone that leaves every other target in its group: the last reconcile's
   * keys and groups hold (nothing invalidated them since, the members are the same object, no
   * target was relabeled, no partition is over the skew limit before or after), every owner of
   * the view is a placer's ({@link Assignment#ownersAsPlaced}), and each added target's key value
   * is that of a partition with collectors, or none. Then only the added targets' keys are looked
   * up; each group's list is rebuilt by one pass over the view's slots (no target read), and
   * each group's placer is handed its arrivals and departures, as {@link #reconcile} would hand
   * them: the last reconcile left every target of a group with an owner of that group, so the
   * arrivals are all a group has unassigned. Returns false, having changed nothing, when a
   * condition does not hold.
   */
  @SuppressWarnings("ReferenceEquality") // the same Members object: the groups' members hold
  private boolean changeInPlace(IntList added, IntList removed, Members members,
      Assignment view) {
    long version = key.version();
    if (keysRound != round || keysVersion != version || members != keptMembers
        || keptSpills != 0 || keptMemberGroup == null || !view.ownersAsPlaced()
        || view.mayHaveRelabeled() || keptWithMembers.length < groups) {
      return false;
    }
    int[] addedGroup = new int[added.size()];
    String[] addedKey = new String[added.size()];
    int[] count = new int[groups];
    for (int g = 0; g < groups; g++) {
      count[g] = byId[g].slots.size();
    }
    // The added targets' groups, by the key value's instance first (values are few: zones).
    String lastKey = null;
    int lastGroup = GLOBAL;
    int maxSlot = -1;
    for (int i = 0; i < added.size(); i++) {
      int slot = added.get(i);
      maxSlot = Math.max(maxSlot, slot);
      String k = key.of(view.target(slot));
      int gid = GLOBAL;
      if (k != null) {
        if (k == lastKey || k.equals(lastKey)) {
          gid = lastGroup;
          k = lastKey;
        } else {
          PartitionGroup partition = byKey.get(k);
          if (partition == null || !keptWithMembers[partition.id]) {
            return false; // a target outside its partition: the full reconcile logs it
          }
          gid = partition.id;
          lastKey = k;
          lastGroup = gid;
        }
      }
      PartitionGroup grp = byId[gid];
      if (grp.placer == null || grp.members.isEmpty()) {
        return false;
      }
      addedGroup[i] = gid;
      addedKey[i] = k;
      count[gid]++;
    }
    int out = keptOut;
    for (int i = 0; i < removed.size(); i++) {
      int slot = removed.get(i);
      int gid = bySlot.groupOf(slot);
      if (gid < 0) {
        return false;
      }
      count[gid]--;
      if (gid == GLOBAL && bySlot.key[slot] != null) {
        out--;
      }
    }
    if (spills(members, view, keptMemberGroup, keptMemberLists, view.size(), count,
        new long[groups], new boolean[groups])) {
      return false;
    }
    // From here on nothing fails over to the full reconcile.
    if (maxSlot >= 0) {
      bySlot.ensure(maxSlot);
    }
    for (int g = 0; g < groups; g++) {
      PartitionGroup grp = byId[g];
      grp.departed.clear();
      grp.unplaced = new IntList();
      grp.next.clear();
    }
    // Departures in the removed list's order (the view's before this change, so each group's
    // in its last list's order), then arrivals in the added list's (the view's): all a group
    // has unassigned. (A group's arrived list is read by collector changes only, which clear
    // and fill it themselves.)
    for (int i = 0; i < removed.size(); i++) {
      int slot = removed.get(i);
      byId[bySlot.group[slot]].departed.add(slot);
      bySlot.group[slot] = -1;
    }
    for (int i = 0; i < added.size(); i++) {
      int slot = added.get(i);
      byId[addedGroup[i]].unplaced.add(slot);
      bySlot.group[slot] = addedGroup[i];
      bySlot.key[slot] = addedKey[i];
      bySlot.stamp[slot] = viewStamp;
    }
    int n = view.size();
    for (int i = 0; i < n; i++) {
      int slot = view.slotAt(i);
      byId[bySlot.group[slot]].next.add(slot);
    }
    for (int g = 0; g < groups; g++) {
      byId[g].swap();
    }
    lastViewEmpty = n == 0;
    // Valid again only once every group has taken the change (not if a placer failed midway).
    keysRound = -1;
    for (PartitionGroup grp : byKey.values()) {
      grp.targetsChanged(view);
    }
    global.targetsChanged(view);
    keysRound = round;
    report(out, 0, keptHomeless);
    keptOut = out;
    if (LOG.isTraceEnabled()) {
      LOG.trace("[{}] target change placed in place: each group kept its targets", strategy);
    }
    return true;
  }

  @Override
  public void nodesChanged(IntList renoded, Members members, Assignment assignment) {
    keysRound = -1;
    if (!members.isEmpty()) {
      reconcile(members, assignment, null);
    }
  }

  /**
   * A collector change. When the view is empty and was at the last reconcile, no group holds a
   * target and none is to be placed: the groups' members are left as they were, and the next
   * reconcile (which every call that brings targets makes) hands each group the difference
   * since, as one change. per-node's pool is such a view while every node with targets has a
   * collector.
   */
  @Override
  public void collectorsChanged(CollectorSetChange change, Assignment assignment) {
    if (assignment.size() == 0 && lastViewEmpty && !change.before().isEmpty()) {
      keysRound = -1;
      if (LOG.isTraceEnabled()) {
        LOG.trace("[{}] collector change left to the next reconcile: the view is empty",
            strategy);
      }
      return;
    }
    reconcile(change.after(), assignment, change);
  }

  @Override
  public void topologyChanged(Members members, Assignment assignment) {
    keysRound = -1;
    if (!members.isEmpty()) {
      reconcile(members, assignment, null);
    }
  }

  /**
   * Hands each partition's placer (and the cluster-wide one) the changed targets it places, in
   * identity-hash order, over its own members and view: a cost change is judged within the
   * partition exactly as the wrapped strategy judges it unpartitioned. A cost change alone
   * changes no target's partition (the skew limit counts targets), so nothing is reconciled.
   */
  @Override
  public void costsChanged(IntList recosted, Members members, Assignment assignment) {
    if (members.isEmpty() || recosted.isEmpty()) {
      return;
    }
    IntList[] byGroup = new IntList[groups];
    for (int i = 0; i < recosted.size(); i++) {
      int s = recosted.get(i);
      int g = bySlot.groupOf(s);
      if (g >= 0) {
        if (byGroup[g] == null) {
          byGroup[g] = new IntList();
        }
        byGroup[g].add(s);
      }
    }
    for (PartitionGroup g : byKey.values()) {
      g.costsChanged(byGroup[g.id], assignment);
    }
    global.costsChanged(byGroup[GLOBAL], assignment);
  }

  /** The skew limit counts what the members hold outside the view: with one, place again. */
  @Override
  public void heldOutsideChanged(Members members, Assignment assignment) {
    keysRound = -1;
    if (!Double.isNaN(maxSkew) && !members.isEmpty()) {
      reconcile(members, assignment, null);
    }
  }

  @Override
  public boolean placementLabelsChanged(Target from, Target to) {
    return !from.node().equals(to.node()) || key.changed(from, to);
  }

  @Override
  public int outsidePartition() {
    return outside;
  }

  /**
   * The placed targets whose key value is not their collector's. Those of the cluster-wide group
   * are skipped: {@link #outsidePartition()} counts them already.
   */
  @Override
  public int outsideAmong(IntList placed, Assignment assignment) {
    return outside(placed, assignment, true);
  }

  /** Targets outside this view (per-node's node-local ones): judged by the same key. */
  @Override
  public int outsideAmongUnviewed(IntList placed, Assignment assignment) {
    return outside(placed, assignment, false);
  }

  private int outside(IntList placed, Assignment assignment, boolean viewed) {
    int n = 0;
    for (int i = 0; i < placed.size(); i++) {
      int s = placed.get(i);
      Member o = assignment.ownerOf(s);
      if (o == null || (viewed && bySlot.groupOf(s) == GLOBAL)) {
        continue;
      }
      String k = key.of(assignment.target(s));
      if (k != null && !k.equals(key.of(o))) {
        n++;
      }
    }
    return n;
  }

  private PartitionGroup group(String k) {
    PartitionGroup g = byKey.get(k);
    if (g == null) {
      if (groups == byId.length) {
        byId = Arrays.copyOf(byId, groups * 2);
      }
      g = new PartitionGroup(groups, k, bySlot, factory, strategy, LOG);
      byId[groups++] = g;
      byKey.put(k, g);
    }
    return g;
  }



  // By reference: the same collector object (immutable) has the same value; a value instance
  // seen before has the group found for it (an equal instance is looked up once more).
  @SuppressWarnings("ReferenceEquality")
  private void reconcile(Members members, Assignment view, CollectorSetChange change) {
    lastViewEmpty = view.size() == 0;
    int r = ++round;
    // A collector change changes no target: the slots of the last view keep the key value it
    // found unless the key resolves differently now (a node's zone). Every other call may have
    // changed targets, and a change from no collectors follows calls that did not reconcile.
    long version = key.version();
    boolean reuse = change != null && !change.before().isEmpty() && keysRound == r - 1
        && keysVersion == version;
    keysRound = -1;
    // The partitions: collectors by key value, name order within each.
    MemberPartitions.Grouping grouping = memberPartitions.group(members, k -> group(k).id);
    Map<String, List<Member>> memberLists = grouping.lists();
    int[] memberGroup = grouping.groupOf();
    int maxId = memberGroup.length - 1;
    if (reuse && keepGroups(members, view, change, memberGroup, memberLists)) {
      keysRound = r;
      keysVersion = version;
      return;
    }
    // Each target's partition, or the cluster-wide group.
    int n = view.size();
    if (want.length < n) {
      want = new int[Headroom.withHeadroom(n)];
      keyed = new boolean[want.length];
    }
    int[] want = this.want;
    boolean[] keyed = this.keyed;
    int[] count = new int[groups];
    Set<String> homeless = new TreeSet<>();
    // Sized once for the largest slot, not doubled step by step on a first placement.
    int maxSlot = -1;
    for (int i = 0; i < n; i++) {
      maxSlot = Math.max(maxSlot, view.slotAt(i));
    }
    if (maxSlot >= 0) {
      bySlot.ensure(maxSlot);
    }
    // The group of the last few values seen (values are few: zones), by reference first: the
    // values kept in keyOf are those instances, so a collector change compares references only.
    String[] seenKey = new String[8];
    int[] seenGroup = new int[8];
    int values = 0;
    for (int i = 0; i < n; i++) {
      int slot = view.slotAt(i);
      String k;
      boolean kept = reuse && bySlot.stamp[slot] == viewStamp;
      if (kept) {
        k = bySlot.key[slot];
      } else {
        k = key.of(view.target(slot));
      }
      int gid = GLOBAL;
      keyed[i] = k != null;
      if (k != null) {
        int j = 0;
        while (j < values && seenKey[j] != k) {
          j++;
        }
        if (j == values) {
          j = 0;
          while (j < values && !seenKey[j].equals(k)) {
            j++;
          }
          if (j < values) {
            k = seenKey[j];
          }
        }
        if (j < values) {
          gid = seenGroup[j];
        } else {
          if (memberLists.containsKey(k)) {
            gid = byKey.get(k).id;
          } else if (homeless.size() < 10) {
            homeless.add(k);
          }
          int at = values < seenKey.length ? values++ : i & (seenKey.length - 1);
          seenKey[at] = k;
          seenGroup[at] = gid;
        }
      }
      if (!kept) {
        bySlot.key[slot] = k;
      }
      want[i] = gid;
      count[gid]++;
    }
    // The skew limit: each partition keeps its first `limit` targets in identity-hash order.
    long[] limit = new long[groups];
    boolean[] spilled = new boolean[groups];
    boolean any = spills(members, view, memberGroup, memberLists, n, count, limit, spilled);
    int spills = 0;
    if (any) {
      int[] seen = new int[groups];
      for (int i = 0; i < n; i++) {
        int gid = want[i];
        if (gid != GLOBAL && spilled[gid] && ++seen[gid] > limit[gid]) {
          want[i] = GLOBAL;
          spills++;
        }
      }
    }
    // The cluster-wide group's members: every collector but those of partitions that spilled.
    List<Member> globalList = new ArrayList<>(members.size());
    for (Member m : members.array()) {
      int gid = memberGroup[m.id()];
      if (gid < 0 || !spilled[gid]) {
        globalList.add(m);
      }
    }
    if (globalList.isEmpty() || globalList.size() == members.size()) {
      // Every collector: the members themselves, whose change the group then takes as it is.
      globalList = members;
    }
    boolean[] inGlobal = new boolean[maxId + 1];
    for (Member m : globalList) {
      inGlobal[m.id()] = true;
    }
    // New lists; a target that changes group, or whose collector is not in its group, is
    // unassigned and placed again by its group.
    for (int g = 0; g < groups; g++) {
      byId[g].next.clear();
    }
    int out = 0;
    for (int i = 0; i < n; i++) {
      int slot = view.slotAt(i);
      int gid = want[i];
      byId[gid].next.add(slot);
      bySlot.stamp[slot] = r;
      bySlot.nextGroup[slot] = gid;
      if (gid == GLOBAL && keyed[i]) {
        out++;
      }
    }
    // Departures, from each group's previous list, before any owner changes.
    for (int g = 0; g < groups; g++) {
      PartitionGroup grp = byId[g];
      grp.departed.clear();
      IntList old = grp.slots;
      for (int i = 0; i < old.size(); i++) {
        int s = old.get(i);
        if (bySlot.stamp[s] != r || bySlot.nextGroup[s] != g) {
          grp.departed.add(s);
          if (bySlot.stamp[s] != r) {
            bySlot.group[s] = -1;
          }
        }
      }
    }
    for (int g = 0; g < groups; g++) {
      byId[g].arrived.clear();
      byId[g].unplaced = new IntList();
    }
    // Arrivals, and what each group finds unassigned (in its list's order): the targets without
    // an owner, and those unassigned here because they changed group or their owner is not in it.
    for (int i = 0; i < n; i++) {
      int slot = view.slotAt(i);
      int gid = want[i];
      PartitionGroup grp = byId[gid];
      if (bySlot.group[slot] != gid) {
        grp.arrived.add(slot);
      }
      Member o = view.ownerOf(slot);
      boolean mayHold = o != null && bySlot.group[slot] == gid && (gid == GLOBAL
          ? o.id() < inGlobal.length && inGlobal[o.id()] : inPartition(o, gid, memberGroup));
      collectUnassigned(grp, view, slot, o, mayHold);
      bySlot.group[slot] = gid;
    }
    for (int g = 0; g < groups; g++) {
      byId[g].swap();
    }
    viewStamp = r;
    applyGroups(memberLists, globalList, view, change);
    // Valid only once every group has applied the reconcile (not if a placer failed midway).
    keysRound = r;
    keysVersion = version;
    report(out, spills, homeless);
    keptOut = out;
    keptSpills = spills;
    keptHomeless = homeless;
    keptMemberGroup = memberGroup;
    keptWithMembers = withMembers(memberLists);
    keptMembers = members;
    keptMemberLists = memberLists;
  }

  /**
   * Which partitions are over the skew limit, given each group's target count: fills {@code
   * limit} and {@code spilled} by group id; returns whether any is. What the collectors hold
   * outside this view (per-node's node-local targets) counts too: a partition's collectors may
   * carry in all at most maxSkew times the cluster mean.
   */
  private boolean spills(Members members, Assignment view, int[] memberGroup,
      Map<String, List<Member>> memberLists, int n, int[] count, long[] limit,
      boolean[] spilled) {
    if (Double.isNaN(maxSkew)) {
      return false;
    }
    long held = 0;
    long[] heldBy = new long[groups];
    for (Member m : members.array()) {
      int h = view.heldOutside(m);
      held += h;
      if (memberGroup[m.id()] >= 0) {
        heldBy[memberGroup[m.id()]] += h;
      }
    }
    boolean any = false;
    for (Map.Entry<String, List<Member>> e : memberLists.entrySet()) {
      int gid = byKey.get(e.getKey()).id;
      long total = (long) Math.floor(
          maxSkew * (n + held) * e.getValue().size() / members.size() + 1e-9);
      limit[gid] = Math.max(0, total - heldBy[gid]);
      if (count[gid] > limit[gid]) {
        spilled[gid] = true;
        any = true;
      }
    }
    return any;
  }

  /**
   * {@link #keepGroups}' look at one target of the view: unassigned in its group when its
   * holder left or is outside the group. A cluster-wide target's holder is a current member
   * (every one is in that group here): the engine unassigned the departed members' targets
   * before this call.
   */
  private void collectUnassigned(Assignment view, int slot, int[] memberGroup) {
    int gid = bySlot.group[slot];
    Member o = view.ownerOf(slot);
    boolean mayHold = o != null && (gid == GLOBAL || inPartition(o, gid, memberGroup));
    collectUnassigned(byId[gid], view, slot, o, mayHold);
  }

  /** Whether {@code m} is a collector of partition {@code gid} now. */
  private static boolean inPartition(Member m, int gid, int[] memberGroup) {
    return m.id() < memberGroup.length && memberGroup[m.id()] == gid;
  }

  /**
   * Adds {@code slot} to its group's unassigned list when it has no holder, or when its holder
   * may not hold it (another group's collector, or a target that changed group): then it is
   * unassigned first.
   */
  private static void collectUnassigned(PartitionGroup grp, Assignment view, int slot,
      Member holder, boolean mayHold) {
    if (holder != null && !mayHold) {
      view.place(slot, null);
    }
    if (holder == null || !mayHold) {
      grp.unplaced.add(slot);
    }
  }

  /** The wrapped placers: partitions in key order, then the cluster-wide group. */
  private void applyGroups(Map<String, List<Member>> memberLists, List<Member> globalList,
      Assignment view, CollectorSetChange change) {
    for (Map.Entry<String, PartitionGroup> e : byKey.entrySet()) {
      List<Member> list = memberLists.get(e.getKey());
      e.getValue().apply(list == null ? List.of() : list, view, change);
    }
    global.apply(globalList, view, change);
  }

  /** By group id: whether the group is a partition with members now. */
  private boolean[] withMembers(Map<String, List<Member>> memberLists) {
    boolean[] with = new boolean[groups];
    for (String k : memberLists.keySet()) {
      with[byKey.get(k).id] = true;
    }
    return with;
  }

  /**
   * A collector change that leaves every target in its group: the view's targets are the same
   * (the engine's own view in a collector change), each keeps its key value ({@code reuse}),
   * every collector that stays is in the partition it was in, the partitions with collectors are
   * the same, and no partition is over the skew limit, before or now. Then the groups' lists
   * stand as they are, and what each group has unassigned (the departed collectors' targets, and
   * any target whose holder is outside its group) is found among the change's orphans when the
   * view's owners change only as placed ({@link Assignment#ownersAsPlaced}), else by one pass
   * over the view; the wrapped placers are handed the change as by a full reconcile. Returns
   * false, having changed nothing, when a condition does not hold.
   */
  private boolean keepGroups(Members members, Assignment view, CollectorSetChange change,
      int[] memberGroup, Map<String, List<Member>> memberLists) {
    if (!change.viewChangeKnown() || !change.arrivals().isEmpty()
        || !change.departures().isEmpty() || keptSpills != 0 || keptMemberGroup == null) {
      return false;
    }
    boolean[] with = withMembers(memberLists);
    for (int g = 0; g < Math.max(with.length, keptWithMembers.length); g++) {
      if ((g < with.length && with[g]) != (g < keptWithMembers.length && keptWithMembers[g])) {
        return false;
      }
    }
    boolean[] added = new boolean[memberGroup.length];
    for (Member m : change.added()) {
      if (m.id() < added.length) {
        added[m.id()] = true;
      }
    }
    for (Member m : members.array()) {
      int id = m.id();
      if (!added[id] && (id >= keptMemberGroup.length || keptMemberGroup[id] != memberGroup[id])) {
        return false;
      }
    }
    int n = view.size();
    int[] count = new int[groups];
    for (int g = 0; g < groups; g++) {
      count[g] = byId[g].slots.size();
    }
    if (spills(members, view, memberGroup, memberLists, n, count, new long[groups],
        new boolean[groups])) {
      return false;
    }
    for (int g = 0; g < groups; g++) {
      byId[g].arrived.clear();
      byId[g].departed.clear();
      byId[g].unplaced = new IntList();
    }
    if (view.ownersAsPlaced()) {
      // The last reconcile left every target with an owner of its group, and only the placers
      // and this change's orphans have changed owners since: what lost its owner is among the
      // orphans (in the view's order, so each group's in its list's order). The slots keep the
      // stamp of the last full reconcile, which is this view's.
      IntList orphans = change.orphans();
      for (int i = 0; i < orphans.size(); i++) {
        collectUnassigned(view, orphans.get(i), memberGroup);
      }
      if (LOG.isTraceEnabled()) {
        LOG.trace("[{}] unassigned targets of a collector change found among its orphans",
            strategy);
      }
    } else {
      for (int i = 0; i < n; i++) {
        collectUnassigned(view, view.slotAt(i), memberGroup);
      }
    }
    applyGroups(memberLists, members, view, change);
    report(keptOut, 0, keptHomeless);
    keptMemberGroup = memberGroup;
    keptMembers = members;
    keptMemberLists = memberLists;
    if (LOG.isTraceEnabled()) {
      LOG.trace("[{}] collector change kept the groups", strategy);
    }
    return true;
  }

  private void report(int out, int spills, Set<String> homeless) {
    outside = out;
    if (out > 0 && !episode) {
      episode = true;
      LOG.warn("[{}] {} target(s) are placed outside their {} partition: {} because their "
          + "partition has no collector (for example {}), {} spilled over the skew limit. With "
          + "zones these are cross-zone scrapes. Counted by Allocation.outsidePartition() and "
          + "AllocatorMetrics' targets.outside.partition gauge; logged again when an episode "
          + "starts after this one ends.", strategy, out, key.name(), out - spills, homeless,
          spills);
    } else if (out == 0 && episode) {
      episode = false;
      LOG.info("[{}] every target with a {} is in its partition again", strategy, key.name());
    }
  }


}
