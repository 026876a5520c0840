package dev.apportion.allocation.internal.pernode;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.Headroom;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.CollectorSetChange;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.engine.Partitioned;
import dev.apportion.allocation.internal.engine.Placer;
import dev.apportion.allocation.internal.engine.SlotOrder;
import dev.apportion.allocation.internal.engine.Slots;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code per-node}: every target goes to the collector on its own node, so no scrape crosses a
 * node (or a zone). Built for DaemonSet collectors, one per node.
 *
 * <p><b>Design.</b> An index from node to its targets, and from node to its <em>winner</em>: the
 * collector on that node with the smallest name (two collectors share a node during a surge
 * rollout; the smaller name wins whatever the input order, so ownership never flaps). Targets
 * with no node, or whose node has no collector, form the <em>pool</em>, which a fallback strategy
 * places over all collectors through its own view of the assignment. With no fallback (an
 * explicit opt-out) the pool stays unassigned, reported in {@code unassigned()}, and a warning is
 * logged once per allocator. These rules settle the review of the CloudWatch agent operator's
 * per-node PR (aws/amazon-cloudwatch-agent-operator#398); unlike the OpenTelemetry target
 * allocator, a target whose node has no collector is never silently dropped.
 *
 * <p><b>Guarantees.</b> Node-local placement is exact: a target whose node has a collector is on
 * that node's winner. A collector change re-places only the targets of nodes whose winner
 * changed (a collector re-reported on another node changes the winners of both nodes), plus what
 * the fallback moves in the pool.
 *
 * <p><b>State.</b> By slot: the node a target is indexed under (the node's entry, which holds its
 * slots and its winner, so a target's winner is read without a search by name), its position in
 * that node's slot list (removal is a swap with the last), and whether it is in the pool. The
 * fallback's view lists the pool in identity-hash order, rebuilt by one pass over the engine's
 * order when the pool changed and the fallback asks. The fallback knows each pool target by a
 * <em>pool id</em>, not by its slot: ids are dense (a slot takes one when it joins the pool, and
 * gives it back when it leaves, for reuse from the next engine operation on: a departure's slot
 * stays readable until the operation ends), so whatever the fallback keeps by target is sized
 * by the pool, not by every slot (100 pool targets among 100k: arrays of 100-odd entries, where
 * slots would make them 100k each, 3.6 MB allocated on the first collector removal).
 *
 * <p><b>Cost.</b> A collector change: O(c) for each node of a collector that came or went, to
 * decide its winner again (O(c) for all of them when many came or went, or one changed node),
 * plus O(targets of the changed nodes), plus the fallback's cost over the pool (and one pass
 * over the order when the pool changed). Adding a target: O(1) plus the fallback's.
 */
public final class PerNodePlacer implements Placer, Partitioned {
  private static final Logger LOG = LoggerFactory.getLogger(PerNodePlacer.class);

  private final Placer fallback;
  /** The fallback when it places by partition, else null. */
  private final Partitioned partitionedFallback;
  /** The nodes that have targets: each with its slots and its winner. */
  private final Map<String, NodeTargets> byNode = new HashMap<>();
  // By slot.
  /** By slot: the node its target is indexed under, or null. */
  private NodeTargets[] nodeOf = new NodeTargets[16];
  private int[] posInNode = new int[16];
  private boolean[] inPool = new boolean[16];
  /** By slot: its pool id while {@link #inPool}; empty until a first slot joins the pool. */
  private int[] poolIdOf = new int[0];
  /** By pool id: the slot that holds it, or held it last. */
  private int[] slotOfId = new int[16];
  /** By pool id: the collector change that last marked it an orphan of the pool. */
  private int[] markOfId = new int[16];
  /** Pool ids handed out so far: those below it are taken or free. */
  private int idsIssued;
  /** Ids given back before this operation: taken before new ones are issued. */
  private final IntList freeIds = new IntList();
  /**
   * Ids given back in this engine operation (a {@code setTargets}, which may call {@link
   * #targetsChanged} then {@link #nodesChanged}, or a {@code setCollectors}): the fallback may
   * still read their slots (a departure's hash) until the operation ends, so they are reused
   * from the next one on.
   */
  private final IntList releasedIds = new IntList();
  private int markStamp;
  private int poolSize;
  private final PoolView poolView = new PoolView();
  /**
   * Node to its winner: a {@link HashMap} once the first collectors are known, edited in place
   * for the nodes of the members that come or go.
   */
  private Map<String, Member> winners = Map.of();

  /**
   * A node with targets: its slots (in no particular order), and its winner as {@link #winners}
   * says, kept here too so that a target's winner is two field reads, not a hash-map search by a
   * node name that is a new string for every target.
   */
  private static final class NodeTargets {
    final String node;
    final IntList slots = new IntList(4);
    Member winner;

    NodeTargets(String node, Member winner) {
      this.node = node;
      this.winner = winner;
    }
  }

  /** Sets {@code node}'s winner in {@link #byNode}'s entry, if it has targets. */
  private void winnerChanged(String node, Member winner) {
    NodeTargets e = byNode.get(node);
    if (e != null) {
      e.winner = winner;
    }
  }
  /**
   * Members that come or go in one change, at most, for which the winners are edited in place
   * (each edit scans the members once); more, and they are computed again.
   */
  private static final int MAX_WINNER_EDITS = 16;
  private boolean warned;

  /**
   * A per-node placer.
   *
   * @param fallback places the pool; null to leave it unassigned
   */
  public PerNodePlacer(Placer fallback) {
    this.fallback = fallback;
    this.partitionedFallback = fallback instanceof Partitioned p ? p : null;
  }

  private void ensure(int slot) {
    if (slot >= nodeOf.length) {
      // With the engine's headroom: a later small change must not copy the arrays again.
      int n = Math.max(Headroom.withHeadroom(slot + 1), nodeOf.length * 2);
      nodeOf = Arrays.copyOf(nodeOf, n);
      posInNode = Arrays.copyOf(posInNode, n);
      inPool = Arrays.copyOf(inPool, n);
      if (poolIdOf.length > 0) {
        poolIdOf = Arrays.copyOf(poolIdOf, n);
      }
    }
  }

  /**
   * Makes the ids given back in the last operation free for reuse: called as each operation
   * begins ({@link #targetsChanged}, the first call of a {@code setTargets}, and
   * {@link #collectorsChanged}); not by {@link #nodesChanged}, which follows in the same
   * operation.
   */
  private void recycleIds() {
    for (int i = 0; i < releasedIds.size(); i++) {
      freeIds.add(releasedIds.get(i));
    }
    releasedIds.clear();
  }

  /** Forgets every pool id: the pool is empty. */
  private void resetIds() {
    idsIssued = 0;
    freeIds.clear();
    releasedIds.clear();
  }

  private void join(int slot) {
    if (!inPool[slot]) {
      inPool[slot] = true;
      poolSize++;
      int id;
      if (!freeIds.isEmpty()) {
        id = freeIds.get(freeIds.size() - 1);
        freeIds.truncate(freeIds.size() - 1);
      } else {
        id = idsIssued++;
        if (id == slotOfId.length) {
          slotOfId = Arrays.copyOf(slotOfId, id * 2);
          markOfId = Arrays.copyOf(markOfId, id * 2);
        }
      }
      if (poolIdOf.length == 0) {
        poolIdOf = new int[nodeOf.length];
      }
      poolIdOf[slot] = id;
      slotOfId[id] = slot;
      poolView.joined(slot);
    }
  }

  /** Takes {@code slot} out of the pool; returns its pool id, or -1 when it was not in it. */
  private int leave(int slot) {
    if (inPool[slot]) {
      inPool[slot] = false;
      poolSize--;
      int id = poolIdOf[slot];
      releasedIds.add(id);
      return id;
    }
    return -1;
  }

  /** The pool id of {@code slot}, which is in the pool. */
  private int idOf(int slot) {
    return poolIdOf[slot];
  }

  @Override
  public void targetsChanged(IntList added, IntList removed, Members members,
      Assignment assignment) {
    poolView.parent = assignment;
    recycleIds();
    IntList leftPool = new IntList();
    for (int i = 0; i < removed.size(); i++) {
      int s = removed.get(i);
      unindex(s);
      int id = leave(s);
      if (id >= 0) {
        leftPool.add(id);
      }
    }
    // Sized once for the largest new slot, not doubled step by step on a first placement.
    int maxSlot = -1;
    for (int i = 0; i < added.size(); i++) {
      maxSlot = Math.max(maxSlot, added.get(i));
    }
    if (maxSlot >= 0) {
      ensure(maxSlot);
    }
    if (added.size() == maxSlot + 1) {
      // Every slot from 0 (the slots are distinct): a first placement, or one after every
      // target left. Indexed in slot order, the order the targets came in, so they are read
      // about as they lie in memory. The order of a node's slot list decides nothing.
      for (int s = 0; s <= maxSlot; s++) {
        index(s, assignment.target(s));
      }
    } else {
      for (int i = 0; i < added.size(); i++) {
        int s = added.get(i);
        index(s, assignment.target(s));
      }
    }
    if (!leftPool.isEmpty()) {
      poolView.invalidate();
    }
    if (members.isEmpty()) {
      return;
    }
    IntList joinedPool = new IntList();
    // Node-local targets came or went: what the fallback's skew limit counts changed.
    boolean localChanged = removed.size() > leftPool.size();
    for (int i = 0; i < added.size(); i++) {
      int s = added.get(i);
      Member w = winner(s);
      if (w != null) {
        assignment.place(s, w);
        localChanged = true;
      } else {
        join(s);
        joinedPool.add(idOf(s));
      }
    }
    if (!joinedPool.isEmpty()) {
      poolView.invalidate();
    }
    if (fallback != null) {
      if (!joinedPool.isEmpty() || !leftPool.isEmpty()) {
        fallback.targetsChanged(joinedPool, leftPool, members, poolView);
      } else if (localChanged && partitionedFallback != null) {
        partitionedFallback.heldOutsideChanged(members, poolView);
      }
    } else {
      warnUnplaced(joinedPool.size());
    }
  }

  @Override
  public void nodesChanged(IntList renoded, Members members, Assignment assignment) {
    poolView.parent = assignment;
    for (int i = 0; i < renoded.size(); i++) {
      int s = renoded.get(i);
      unindex(s);
      index(s, assignment.target(s));
    }
    if (members.isEmpty()) {
      return;
    }
    IntList joinedPool = new IntList();
    IntList leftPool = new IntList();
    IntList stayedInPool = new IntList();
    boolean localChanged = false;
    for (int i = 0; i < renoded.size(); i++) {
      int s = renoded.get(i);
      Member w = winner(s);
      if (w != null) {
        int id = leave(s);
        if (id >= 0) {
          leftPool.add(id);
        } else {
          localChanged = true;
        }
        assignment.place(s, w);
      } else if (!inPool[s]) {
        join(s);
        assignment.place(s, null);
        joinedPool.add(idOf(s));
      } else {
        stayedInPool.add(idOf(s));
      }
    }
    if (joinedPool.isEmpty() && leftPool.isEmpty()) {
      if (fallback != null && !stayedInPool.isEmpty()) {
        // Still in the pool, but the fallback may place by the labels that changed (the zone).
        fallback.nodesChanged(stayedInPool, members, poolView);
      } else if (partitionedFallback != null && localChanged) {
        // A node-local target moved to another node: the collectors' node-local loads changed.
        partitionedFallback.heldOutsideChanged(members, poolView);
      }
      return;
    }
    poolView.invalidate();
    if (fallback != null) {
      fallback.targetsChanged(joinedPool, leftPool, members, poolView);
    } else {
      warnUnplaced(joinedPool.size());
    }
  }

  /**
   * Node-local targets stay on their node whatever they cost; the pool's changed targets go to
   * the fallback, which judges them as it would unwrapped.
   */
  @Override
  public void costsChanged(IntList recosted, Members members, Assignment assignment) {
    if (fallback == null) {
      return;
    }
    poolView.parent = assignment;
    IntList pool = new IntList();
    for (int i = 0; i < recosted.size(); i++) {
      int s = recosted.get(i);
      if (s < inPool.length && inPool[s]) {
        pool.add(idOf(s));
      }
    }
    if (!pool.isEmpty()) {
      fallback.costsChanged(pool, members, poolView);
    }
  }

  @Override
  public boolean placementLabelsChanged(Target from, Target to) {
    return !from.node().equals(to.node())
        || (fallback != null && fallback.placementLabelsChanged(from, to));
  }

  @Override
  public void topologyChanged(Members members, Assignment assignment) {
    if (fallback != null) {
      poolView.parent = assignment;
      fallback.topologyChanged(members, poolView);
    }
  }

  /** Nothing: per-node's view is the engine's, with nothing outside it. */
  @Override
  public void heldOutsideChanged(Members members, Assignment assignment) {}

  @Override
  public int outsidePartition() {
    return partitionedFallback == null ? 0 : partitionedFallback.outsidePartition();
  }

  /**
   * The pool's targets by the fallback, through its view; node-local targets included: the
   * fallback's key tells their partition too ({@link Partitioned#outsideAmongUnviewed}).
   */
  @Override
  public int outsideAmong(IntList placed, Assignment assignment) {
    if (partitionedFallback == null) {
      return 0;
    }
    poolView.parent = assignment;
    IntList pooled = new IntList();
    IntList local = new IntList();
    for (int i = 0; i < placed.size(); i++) {
      int s = placed.get(i);
      if (s < inPool.length && inPool[s]) {
        pooled.add(idOf(s));
      } else {
        local.add(s);
      }
    }
    return partitionedFallback.outsideAmong(pooled, poolView)
        + partitionedFallback.outsideAmongUnviewed(local, assignment);
  }

  /** Never asked: per-node is not wrapped in another layer. */
  @Override
  public int outsideAmongUnviewed(IntList placed, Assignment assignment) {
    return 0;
  }

  private void index(int slot, Target t) {
    String node = t.node().orElse(null);
    if (node == null) {
      nodeOf[slot] = null;
      return;
    }
    NodeTargets e = byNode.get(node);
    if (e == null) {
      e = new NodeTargets(node, winners.get(node));
      byNode.put(node, e);
    }
    nodeOf[slot] = e;
    posInNode[slot] = e.slots.size();
    e.slots.add(slot);
  }

  private void unindex(int slot) {
    NodeTargets e = nodeOf[slot];
    if (e == null) {
      return;
    }
    IntList list = e.slots;
    int p = posInNode[slot];
    int last = list.get(list.size() - 1);
    list.set(p, last);
    posInNode[last] = p;
    list.truncate(list.size() - 1);
    if (list.isEmpty()) {
      byNode.remove(e.node);
    }
    nodeOf[slot] = null;
  }

  @Override
  public void collectorsChanged(CollectorSetChange change, Assignment assignment) {
    poolView.parent = assignment;
    recycleIds();
    TreeSet<String> changedNodes = new TreeSet<>();
    boolean few = change.added().size() + change.removed().size() <= MAX_WINNER_EDITS;
    if (!change.before().isEmpty() && change.renoded().isEmpty() && few
        && winners instanceof HashMap) {
      // Only the nodes of the members that came or went can have another winner: each is
      // decided again from the members after the change, the rest of the map stands.
      for (List<Member> ms : List.of(change.added(), change.removed())) {
        for (Member m : ms) {
          String node = m.node();
          if (node != null && !changedNodes.contains(node)) {
            Member next = firstOn(node, change.after());
            Member was = next == null ? winners.remove(node) : winners.put(node, next);
            if (was != next) {
              changedNodes.add(node);
              winnerChanged(node, next);
            }
          }
        }
      }
    } else {
      Map<String, Member> previous = winners;
      winners = winners(change.after());
      for (NodeTargets e : byNode.values()) {
        e.winner = winners.get(e.node);
      }
      if (!change.before().isEmpty()) {
        // A member changed node, or many came or went: the changed nodes are those whose
        // winner differs, on either side.
        for (Map.Entry<String, Member> e : previous.entrySet()) {
          if (winners.get(e.getKey()) != e.getValue()) {
            changedNodes.add(e.getKey());
          }
        }
        for (Map.Entry<String, Member> e : winners.entrySet()) {
          if (previous.get(e.getKey()) != e.getValue()) {
            changedNodes.add(e.getKey());
          }
        }
      }
    }
    IntList orphans = change.orphans();
    if (change.before().isEmpty()) {
      IntList toPool = new IntList();
      Arrays.fill(inPool, false);
      poolSize = 0;
      resetIds();
      poolView.reset();
      for (int i = 0; i < orphans.size(); i++) {
        int s = orphans.get(i);
        Member w = winner(s);
        if (w != null) {
          assignment.place(s, w);
        } else {
          join(s);
          toPool.add(idOf(s));
        }
      }
      poolView.invalidate();
      if (fallback != null) {
        fallback.collectorsChanged(change.withOrphans(toPool), poolView);
      } else {
        warnUnplaced(toPool.size());
      }
      return;
    }
    int stamp = ++markStamp;
    boolean poolChanged = false;
    for (String node : changedNodes) {
      NodeTargets e = byNode.get(node);
      if (e == null) {
        continue;
      }
      Member w = e.winner;
      IntList local = e.slots;
      for (int i = 0; i < local.size(); i++) {
        int s = local.get(i);
        if (w != null) {
          poolChanged |= leave(s) >= 0;
          assignment.place(s, w);
        } else if (!inPool[s]) {
          join(s);
          poolChanged = true;
          assignment.place(s, null);
          markOfId[idOf(s)] = stamp;
        }
      }
    }
    for (int i = 0; i < orphans.size(); i++) {
      int s = orphans.get(i);
      if (inPool[s]) {
        markOfId[idOf(s)] = stamp;
      } else if (assignment.ownerOf(s) == null) {
        Member w = winner(s);
        if (w != null) {
          assignment.place(s, w);
        } else {
          join(s);
          poolChanged = true;
          markOfId[idOf(s)] = stamp;
        }
      }
    }
    if (poolChanged) {
      poolView.invalidate();
    }
    // The pool's orphans (the removed members' pool targets and the targets that joined the
    // pool), in identity-hash order: the pool view is in that order.
    IntList poolOrphans = new IntList();
    IntList pool = poolView.sorted();
    for (int i = 0; i < pool.size(); i++) {
      int s = pool.get(i);
      if (markOfId[idOf(s)] == stamp) {
        poolOrphans.add(idOf(s));
      }
    }
    if (fallback != null) {
      fallback.collectorsChanged(change.withOrphans(poolOrphans), poolView);
    } else {
      warnUnplaced(poolSize);
    }
  }

  private Member winner(int slot) {
    NodeTargets e = nodeOf[slot];
    return e == null ? null : e.winner;
  }

  /** The first member in name order on {@code node}, or null: the node's winner. */
  private static Member firstOn(String node, Members members) {
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      if (node.equals(m.node())) {
        return m;
      }
    }
    return null;
  }

  /** Node to the collector on it with the smallest name: members come in name order. */
  private static Map<String, Member> winners(Members members) {
    Map<String, Member> w = new HashMap<>(Math.max(16, members.size() * 4 / 3 + 1));
    for (Member m : members) {
      String node = m.node();
      if (node != null) {
        w.putIfAbsent(node, m);
      }
    }
    return w;
  }

  private void warnUnplaced(int count) {
    if (count > 0 && !warned) {
      warned = true;
      LOG.warn("per-node runs with no fallback strategy: {} target(s) with no node, or whose node "
          + "has no collector, are left unassigned and will not be scraped (listed in "
          + "Allocation.unassigned(), counted by AllocatorMetrics' targets.unassigned gauge). "
          + "To place them, run a collector on every node that has targets, or remove "
          + "noFallback()/fallback(\"\") so the default consistent-hashing fallback applies, or "
          + "name one with fallback(\"...\"). This warning is logged once per allocator.", count);
    }
  }

  /**
   * The fallback's view: only the pool's targets, in the engine's order, each known by its pool
   * id. Its list of slots is rebuilt when the pool changed and the fallback reads it: from the
   * last list, less the slots that left, merged with the slots that joined since (sorted), when
   * those are few; else by a pass over the engine's order. A slot that joined is taken out of its
   * old place and put in again, so a slot freed and taken by another target is placed by its new
   * target. An id given back in this operation still reads its slot (a departure's hash).
   */
  private final class PoolView implements Assignment {
    Assignment parent;
    private IntList sorted = new IntList();
    private IntList spare = new IntList();
    private boolean valid;
    /** Whether {@link #sorted} and {@link #joinedSince} together tell the pool. */
    private boolean based;
    /** The slots that joined the pool since {@link #sorted} was built (repeats possible). */
    private final IntList joinedSince = new IntList();
    private int[] joinMark = new int[16];
    private int joinStamp;

    void invalidate() {
      valid = false;
    }

    /** Forgets the list: the next read walks the engine's order. */
    void reset() {
      valid = false;
      based = false;
      joinedSince.clear();
    }

    void joined(int slot) {
      if (based) {
        joinedSince.add(slot);
        if (joinedSince.size() > (parent == null ? 0 : parent.size() >> 4) + 64) {
          // Many joined: a pass over the order is cheaper than sorting them.
          reset();
        }
      }
    }

    /** The pool's slots (not ids), in the engine's order. */
    private IntList sorted() {
      if (!valid) {
        if (based && parent instanceof Slots slots) {
          merge(slots);
        } else {
          sorted.clear();
          int n = parent.size();
          for (int i = 0; i < n; i++) {
            int s = parent.slotAt(i);
            if (inPool[s]) {
              sorted.add(s);
            }
          }
        }
        joinedSince.clear();
        valid = true;
        based = true;
      }
      return sorted;
    }

    /** Rebuilds {@link #sorted} from itself and {@link #joinedSince}. */
    private void merge(Slots slots) {
      IntList joined = joinedSince;
      // Marked by pool id: a slot in the pool holds the id it joined with last.
      if (idsIssued > joinMark.length) {
        joinMark = Arrays.copyOf(joinMark, Math.max(idsIssued, joinMark.length * 2));
      }
      joinStamp += 2;
      int stamp = joinStamp;
      int[] marks = joinMark;
      for (int i = 0; i < joined.size(); i++) {
        int s = joined.get(i);
        if (inPool[s]) {
          marks[poolIdOf[s]] = stamp;
        }
      }
      // The joined slots still in the pool, once each, in order.
      IntList add = new IntList(joined.size());
      for (int i = 0; i < joined.size(); i++) {
        int s = joined.get(i);
        if (inPool[s] && marks[poolIdOf[s]] == stamp) {
          add.add(s);
          marks[poolIdOf[s]] = stamp + 1;
        }
      }
      long[] hashes = slots.hashes();
      Target[] targets = slots.targets();
      slots.sorter().sort(add.array(), add.size(), hashes, targets);
      IntList out = spare;
      out.clear();
      out.ensureCapacity(sorted.size() + add.size());
      int a = 0;
      for (int i = 0; i < sorted.size(); i++) {
        int s = sorted.get(i);
        // Left, or joined again (its place is taken anew, from its current target).
        if (!inPool[s] || marks[poolIdOf[s]] >= stamp) {
          continue;
        }
        while (a < add.size() && SlotOrder.compare(add.get(a), s, hashes, targets) < 0) {
          out.add(add.get(a++));
        }
        out.add(s);
      }
      while (a < add.size()) {
        out.add(add.get(a++));
      }
      spare = sorted;
      sorted = out;
    }

    /** Whether pool id {@code id} is held by a slot in the pool now. */
    private boolean held(int id, int slot) {
      return inPool[slot] && poolIdOf[slot] == id;
    }

    @Override
    public Member ownerOf(int id) {
      int slot = slotOfId[id];
      return held(id, slot) ? parent.ownerOf(slot) : null;
    }

    @Override
    public void place(int id, Member member) {
      int slot = slotOfId[id];
      if (!held(id, slot)) {
        throw new IllegalStateException("fallback placing a target not in the pool: "
            + parent.target(slot));
      }
      parent.place(slot, member);
    }

    @Override
    public Target target(int id) {
      return parent.target(slotOfId[id]);
    }

    @Override
    public long hash(int id) {
      return parent.hash(slotOfId[id]);
    }

    @Override
    public int job(int id) {
      return parent.job(slotOfId[id]);
    }

    @Override
    public long cost(int id) {
      return parent.cost(slotOfId[id]);
    }

    @Override
    public int size() {
      return sorted().size();
    }

    @Override
    public long hashAt(int i) {
      return parent.hash(sorted().get(i));
    }

    /** The member's node-local targets: those of its node when it is the node's winner. */
    @Override
    public int heldOutside(Member member) {
      String node = member.node();
      NodeTargets local = node == null ? null : byNode.get(node);
      // The entry's winner is the winners' map's for its node (kept equal): one search.
      return local == null || local.winner != member ? 0 : local.slots.size();
    }

    /** The pool id of the {@code i}th pool target. */
    @Override
    public int slotAt(int i) {
      return poolIdOf[sorted().get(i)];
    }
  }
}
