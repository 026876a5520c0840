package dev.apportion.allocation.internal.partition;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.Headroom;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.CollectorLimits;
import dev.apportion.allocation.internal.engine.CollectorSetChange;
import dev.apportion.allocation.internal.engine.Continuing;
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
 * partition (by default its zone), as asked in open-telemetry/opentelemetry-operator#3759 and
 * #5156. It is {@code per-node}'s zone-aware fallback, and the opt-in zone-aware (or label-aware)
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
  private final TreeMap<String, Group> byKey = new TreeMap<>();
  private final Group global;
  private Group[] byId = new Group[4];
  private int groups = 1;

  // By slot.
  private int[] groupOf = new int[16];
  private int[] nextGroupOf = new int[16];
  private int[] stamp = new int[16];
  private int round;
  /**
   * The stamp the slots of the last reconcile's view carry: the round of the last full
   * reconcile, which {@link #keepGroups} (the same view) leaves as it is rather than stamping
   * every slot again.
   */
  private int viewStamp;
  /**
   * By slot: the key value the last reconcile found, valid for the slots in its view while no
   * target has changed since ({@link #keysRound}) and the key resolves as it did
   * ({@link #keysVersion}).
   */
  private String[] keyOf = new String[16];
  /** The reconcile that filled {@link #keyOf}, or -1 once a target may have changed since. */
  private int keysRound = -1;
  private long keysVersion;
  /** By member id: the key value of the collector {@link #memberKeyFrom} names. */
  private String[] memberKeyOf = new String[0];
  private Collector[] memberKeyFrom = new Collector[0];
  private long memberKeysVersion;
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
    this.factory = factory;
    this.maxSkew = maxSkew;
    this.strategy = strategy;
    this.global = new Group(GLOBAL, null);
    byId[GLOBAL] = global;
    Arrays.fill(groupOf, -1);
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
          Group partition = byKey.get(k);
          if (partition == null || !keptWithMembers[partition.id]) {
            return false; // a target outside its partition: the full reconcile logs it
          }
          gid = partition.id;
          lastKey = k;
          lastGroup = gid;
        }
      }
      Group grp = byId[gid];
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
      int gid = slot < groupOf.length ? groupOf[slot] : -1;
      if (gid < 0) {
        return false;
      }
      count[gid]--;
      if (gid == GLOBAL && keyOf[slot] != null) {
        out--;
      }
    }
    if (spills(members, view, keptMemberGroup, keptMemberLists, view.size(), count,
        new long[groups], new boolean[groups])) {
      return false;
    }
    // From here on nothing fails over to the full reconcile.
    if (maxSlot >= 0) {
      ensure(maxSlot);
    }
    for (int g = 0; g < groups; g++) {
      Group grp = byId[g];
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
      byId[groupOf[slot]].departed.add(slot);
      groupOf[slot] = -1;
    }
    for (int i = 0; i < added.size(); i++) {
      int slot = added.get(i);
      byId[addedGroup[i]].unplaced.add(slot);
      groupOf[slot] = addedGroup[i];
      keyOf[slot] = addedKey[i];
      stamp[slot] = viewStamp;
    }
    int n = view.size();
    for (int i = 0; i < n; i++) {
      int slot = view.slotAt(i);
      byId[groupOf[slot]].next.add(slot);
    }
    for (int g = 0; g < groups; g++) {
      byId[g].swap();
    }
    lastViewEmpty = n == 0;
    // Valid again only once every group has taken the change (not if a placer failed midway).
    keysRound = -1;
    for (Group grp : byKey.values()) {
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
      int g = s < groupOf.length ? groupOf[s] : -1;
      if (g >= 0) {
        if (byGroup[g] == null) {
          byGroup[g] = new IntList();
        }
        byGroup[g].add(s);
      }
    }
    for (Group g : byKey.values()) {
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
      if (o == null || (viewed && s < groupOf.length && groupOf[s] == GLOBAL)) {
        continue;
      }
      String k = key.of(assignment.target(s));
      if (k != null && !k.equals(key.of(o))) {
        n++;
      }
    }
    return n;
  }

  @SuppressWarnings("unchecked")
  private static List<Member>[] newLists(int n) {
    return (List<Member>[]) new List<?>[n];
  }

  private Group group(String k) {
    Group g = byKey.get(k);
    if (g == null) {
      if (groups == byId.length) {
        byId = Arrays.copyOf(byId, groups * 2);
      }
      g = new Group(groups, k);
      byId[groups++] = g;
      byKey.put(k, g);
    }
    return g;
  }

  private void ensure(int slot) {
    if (slot >= groupOf.length) {
      // With the engine's headroom: a later small change must not copy the arrays again.
      int n = Math.max(Headroom.withHeadroom(slot + 1), groupOf.length * 2);
      int old = groupOf.length;
      groupOf = Arrays.copyOf(groupOf, n);
      Arrays.fill(groupOf, old, n, -1);
      nextGroupOf = Arrays.copyOf(nextGroupOf, n);
      stamp = Arrays.copyOf(stamp, n);
      keyOf = Arrays.copyOf(keyOf, n);
    }
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
    if (memberKeysVersion != version) {
      Arrays.fill(memberKeyFrom, null);
      memberKeysVersion = version;
    }
    // The partitions: collectors by key value, name order within each.
    Map<String, List<Member>> memberLists = new TreeMap<>();
    int maxId = Math.max(0, members.maxId());
    int[] memberGroup = new int[maxId + 1];
    Arrays.fill(memberGroup, -1);
    if (memberKeyOf.length <= maxId) {
      memberKeyOf = Arrays.copyOf(memberKeyOf, Math.max(maxId + 1, memberKeyOf.length * 2));
      memberKeyFrom = Arrays.copyOf(memberKeyFrom, memberKeyOf.length);
    }
    // The list and group of the last few values seen, by reference (values are few: zones; a
    // member's kept value is the same instance from call to call), before the sorted map.
    String[] seenValue = new String[8];
    List<Member>[] seenList = newLists(seenValue.length);
    int[] seenGroupId = new int[seenValue.length];
    int valuesSeen = 0;
    for (Member m : members.array()) {
      // A member's value is its collector's, or its node's zone: kept while both are.
      String k;
      int id = m.id();
      if (memberKeyFrom[id] == m.collector() && memberKeysVersion == version) {
        k = memberKeyOf[id];
      } else {
        k = key.of(m);
        memberKeyOf[id] = k;
        memberKeyFrom[id] = m.collector();
      }
      if (k != null) {
        int j = 0;
        while (j < valuesSeen && seenValue[j] != k) {
          j++;
        }
        if (j < valuesSeen) {
          seenList[j].add(m);
          memberGroup[id] = seenGroupId[j];
          continue;
        }
        List<Member> list = memberLists.computeIfAbsent(k, x -> new ArrayList<>());
        list.add(m);
        int gid = group(k).id;
        memberGroup[id] = gid;
        if (valuesSeen < seenValue.length) {
          seenValue[valuesSeen] = k;
          seenList[valuesSeen] = list;
          seenGroupId[valuesSeen++] = gid;
        }
      }
    }
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
      ensure(maxSlot);
    }
    // The group of the last few values seen (values are few: zones), by reference first: the
    // values kept in keyOf are those instances, so a collector change compares references only.
    String[] seenKey = new String[8];
    int[] seenGroup = new int[8];
    int values = 0;
    for (int i = 0; i < n; i++) {
      int slot = view.slotAt(i);
      String k;
      boolean kept = reuse && stamp[slot] == viewStamp;
      if (kept) {
        k = keyOf[slot];
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
        keyOf[slot] = k;
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
      stamp[slot] = r;
      nextGroupOf[slot] = gid;
      if (gid == GLOBAL && keyed[i]) {
        out++;
      }
    }
    // Departures, from each group's previous list, before any owner changes.
    for (int g = 0; g < groups; g++) {
      Group grp = byId[g];
      grp.departed.clear();
      IntList old = grp.slots;
      for (int i = 0; i < old.size(); i++) {
        int s = old.get(i);
        if (stamp[s] != r || nextGroupOf[s] != g) {
          grp.departed.add(s);
          if (stamp[s] != r) {
            groupOf[s] = -1;
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
      Group grp = byId[gid];
      if (groupOf[slot] != gid) {
        grp.arrived.add(slot);
      }
      Member o = view.ownerOf(slot);
      boolean mayHold = o != null && groupOf[slot] == gid && (gid == GLOBAL
          ? o.id() < inGlobal.length && inGlobal[o.id()] : inPartition(o, gid, memberGroup));
      collectUnassigned(grp, view, slot, o, mayHold);
      groupOf[slot] = gid;
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
    int gid = groupOf[slot];
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
  private static void collectUnassigned(Group grp, Assignment view, int slot, Member holder,
      boolean mayHold) {
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
    for (Map.Entry<String, Group> e : byKey.entrySet()) {
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

  /**
   * Whether {@code b} is the group's member set {@code a}, capacities included: a member keeps
   * its object when only its capacity changes, and {@code a} holds the capacities it was made
   * with (without this a capacity change inside a partition never reached its placer).
   */
  private static boolean same(Members a, List<Member> b) {
    if (a.size() != b.size()) {
      return false;
    }
    double[] capacities = a.capacities();
    for (int i = 0; i < b.size(); i++) {
      if (a.get(i) != b.get(i) || capacities[i] != b.get(i).capacity()) {
        return false;
      }
    }
    return true;
  }

  /** One partition (or the cluster-wide group): its placer, members and view of the targets. */
  private final class Group implements Assignment {
    final int id;
    final String key;
    Placer placer;
    Members members = Members.EMPTY;
    /** By member id: whether in {@link #members}. */
    boolean[] isMember = new boolean[0];
    IntList slots = new IntList();
    IntList next = new IntList();
    final IntList departed = new IntList();
    /** The slots new to this group in this reconcile, in identity-hash order; unassigned. */
    final IntList arrived = new IntList();
    /**
     * The slots of this group unassigned when the reconcile handed it over, in its list's order:
     * what it had no owner for, what arrived and what lost an owner outside the group.
     */
    IntList unplaced = new IntList();
    Assignment parent;

    Group(int id, String key) {
      this.id = id;
      this.key = key;
    }

    void costsChanged(IntList recosted, Assignment view) {
      if (recosted != null && placer != null && !members.isEmpty()) {
        parent = view;
        placer.costsChanged(recosted, members, this);
      }
    }

    /** {@link #changeInPlace}'s hand-over: this group's arrivals and departures, if any. */
    void targetsChanged(Assignment view) {
      if (placer != null && !members.isEmpty() && (!unplaced.isEmpty() || !departed.isEmpty())) {
        parent = view;
        placer.targetsChanged(unplaced, departed, members, this);
      }
    }

    void swap() {
      IntList t = slots;
      slots = next;
      next = t;
    }

    // Identity, on purpose: a Members is immutable, and the engine's own pair says its change.
    @SuppressWarnings("ReferenceEquality")
    void apply(List<Member> list, Assignment view, CollectorSetChange change) {
      parent = view;
      if (list.isEmpty()) {
        placer = null;
        members(Members.EMPTY);
        return;
      }
      if (placer == null) {
        placer = factory.get();
        members(Members.EMPTY);
      }
      if (same(members, list)) {
        if (!unplaced.isEmpty() || !departed.isEmpty()) {
          if (unplaced.size() != arrived.size()) {
            // Unassigned targets that did not just arrive (none while the members stay, as
            // far as this class knows): the wrapped placer is handed them as new, so it must
            // not count them on top of its own state.
            if (placer instanceof Continuing c) {
              c.viewChangedUnsaid();
            }
          }
          placer.targetsChanged(unplaced, departed, members, this);
        }
        return;
      }
      Members before = members;
      Members after = list instanceof Members given ? given
          : new Members(list.toArray(new Member[0]));
      if (change != null && before == change.before() && after == change.after()) {
        // The group has every collector, before and now: the change is the engine's own, and
        // says what came, went and changed without comparing the two sets name by name.
        if (LOG.isTraceEnabled()) {
          LOG.trace("[{}] a group with every collector took the engine's change as it is",
              strategy);
        }
        members(after);
        placer.collectorsChanged(new CollectorSetChange(before, after, change.added(),
            change.removed(), change.renoded(), change.reweighted(), unplaced, arrived,
            departed), this);
        return;
      }
      Member[] beforeById = byId(before);
      Member[] afterById = byId(after);
      List<Member> added = new ArrayList<>();
      for (Member m : after.array()) {
        if (!contains(beforeById, m)) {
          added.add(m);
        }
      }
      List<Member> removed = new ArrayList<>();
      for (Member m : before.array()) {
        if (!contains(afterById, m)) {
          removed.add(m);
        }
      }
      List<Member> renoded = new ArrayList<>();
      List<Member> reweighted = new ArrayList<>();
      if (change != null) {
        for (Member m : change.renoded()) {
          if (contains(afterById, m)) {
            renoded.add(m);
          }
        }
        for (Member m : change.reweighted()) {
          if (contains(afterById, m)) {
            reweighted.add(m);
          }
        }
      }
      members(after);
      placer.collectorsChanged(new CollectorSetChange(before, after, added, removed, renoded,
          reweighted, unplaced, arrived, departed), this);
    }

    private void members(Members ms) {
      members = ms;
      isMember = new boolean[ms.maxId() + 1];
      for (int id : ms.ids()) {
        isMember[id] = true;
      }
    }

    /**
     * The members of a set by id (ids are unique among the members of one set): membership by
     * identity without comparing names, O(1) a member.
     */
    private Member[] byId(Members ms) {
      Member[] out = new Member[ms.maxId() + 1];
      for (Member m : ms.array()) {
        out[m.id()] = m;
      }
      return out;
    }

    /** Whether this very member is in the set {@code byId} lists. */
    @SuppressWarnings("ReferenceEquality") // the same member, not one of the same name
    private boolean contains(Member[] byId, Member m) {
      int id = m.id();
      return id < byId.length && byId[id] == m;
    }

    /**
     * The owner, when it is one of this group's members. A target the per-collector limit
     * ({@link CollectorLimits}) moved to a collector of another partition reads as unassigned
     * here until the next reconcile takes it back: the wrapped placer never sees a foreign member.
     */
    @Override
    public Member ownerOf(int slot) {
      if (groupOf[slot] != id) {
        return null;
      }
      Member o = parent.ownerOf(slot);
      return o != null && o.id() < isMember.length && isMember[o.id()] ? o : null;
    }

    @Override
    public void place(int slot, Member member) {
      if (groupOf[slot] != id) {
        throw new IllegalStateException("partition " + (key == null ? "(cluster-wide)" : key)
            + " placing a target of another partition: " + parent.target(slot));
      }
      parent.place(slot, member);
    }

    @Override
    public Target target(int slot) {
      return parent.target(slot);
    }

    @Override
    public long hash(int slot) {
      return parent.hash(slot);
    }

    @Override
    public long cost(int slot) {
      return parent.cost(slot);
    }

    @Override
    public int job(int slot) {
      return parent.job(slot);
    }

    @Override
    public int size() {
      return slots.size();
    }

    @Override
    public int slotAt(int i) {
      return slots.get(i);
    }
  }
}
