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
 * logged once per allocator. Unlike the OpenTelemetry target allocator, a target whose node has
 * no collector is never silently dropped.
 *
 * <p><b>Guarantees.</b> Node-local placement is exact: a target whose node has a collector is on
 * that node's winner. A collector change re-places only the targets of nodes whose winner
 * changed (a collector re-reported on another node changes the winners of both nodes), plus what
 * the fallback moves in the pool.
 *
 * <p><b>State.</b> By slot: the node a target is indexed under (the node's entry, which holds its
 * slots and its winner, so a target's winner is read without a search by name) and its position
 * in that node's slot list (removal is a swap with the last). The {@link Pool} keeps which slots
 * are in the pool, the dense ids the fallback knows them by, and the fallback's view of them in
 * identity-hash order.
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
  /** The pool, and the fallback's view of it. */
  private final Pool pool = new Pool(this::heldOnNode);
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
      pool.grow(n);
    }
  }

  @Override
  public void targetsChanged(IntList added, IntList removed, Members members,
      Assignment assignment) {
    pool.parent = assignment;
    pool.recycleIds();
    IntList leftPool = new IntList();
    for (int i = 0; i < removed.size(); i++) {
      int s = removed.get(i);
      unindex(s);
      int id = pool.leave(s);
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
      pool.invalidate();
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
        pool.join(s);
        joinedPool.add(pool.idOf(s));
      }
    }
    if (!joinedPool.isEmpty()) {
      pool.invalidate();
    }
    if (fallback != null) {
      if (!joinedPool.isEmpty() || !leftPool.isEmpty()) {
        fallback.targetsChanged(joinedPool, leftPool, members, pool);
      } else if (localChanged && partitionedFallback != null) {
        partitionedFallback.heldOutsideChanged(members, pool);
      }
    } else {
      warnUnplaced(joinedPool.size());
    }
  }

  @Override
  public void nodesChanged(IntList renoded, Members members, Assignment assignment) {
    pool.parent = assignment;
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
        int id = pool.leave(s);
        if (id >= 0) {
          leftPool.add(id);
        } else {
          localChanged = true;
        }
        assignment.place(s, w);
      } else if (!pool.contains(s)) {
        pool.join(s);
        assignment.place(s, null);
        joinedPool.add(pool.idOf(s));
      } else {
        stayedInPool.add(pool.idOf(s));
      }
    }
    if (joinedPool.isEmpty() && leftPool.isEmpty()) {
      if (fallback != null && !stayedInPool.isEmpty()) {
        // Still in the pool, but the fallback may place by the labels that changed (the zone).
        fallback.nodesChanged(stayedInPool, members, pool);
      } else if (partitionedFallback != null && localChanged) {
        // A node-local target moved to another node: the collectors' node-local loads changed.
        partitionedFallback.heldOutsideChanged(members, pool);
      }
      return;
    }
    pool.invalidate();
    if (fallback != null) {
      fallback.targetsChanged(joinedPool, leftPool, members, pool);
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
    pool.parent = assignment;
    IntList pooled = new IntList();
    for (int i = 0; i < recosted.size(); i++) {
      int s = recosted.get(i);
      if (pool.contains(s)) {
        pooled.add(pool.idOf(s));
      }
    }
    if (!pooled.isEmpty()) {
      fallback.costsChanged(pooled, members, pool);
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
      pool.parent = assignment;
      fallback.topologyChanged(members, pool);
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
    pool.parent = assignment;
    IntList pooled = new IntList();
    IntList local = new IntList();
    for (int i = 0; i < placed.size(); i++) {
      int s = placed.get(i);
      if (pool.contains(s)) {
        pooled.add(pool.idOf(s));
      } else {
        local.add(s);
      }
    }
    return partitionedFallback.outsideAmong(pooled, pool)
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
    pool.parent = assignment;
    pool.recycleIds();
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
      pool.clear();
      for (int i = 0; i < orphans.size(); i++) {
        int s = orphans.get(i);
        Member w = winner(s);
        if (w != null) {
          assignment.place(s, w);
        } else {
          pool.join(s);
          toPool.add(pool.idOf(s));
        }
      }
      pool.invalidate();
      if (fallback != null) {
        fallback.collectorsChanged(change.withOrphans(toPool), pool);
      } else {
        warnUnplaced(toPool.size());
      }
      return;
    }
    pool.newMarks();
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
          poolChanged |= pool.leave(s) >= 0;
          assignment.place(s, w);
        } else if (!pool.contains(s)) {
          pool.join(s);
          poolChanged = true;
          assignment.place(s, null);
          pool.mark(s);
        }
      }
    }
    for (int i = 0; i < orphans.size(); i++) {
      int s = orphans.get(i);
      if (pool.contains(s)) {
        pool.mark(s);
      } else if (assignment.ownerOf(s) == null) {
        Member w = winner(s);
        if (w != null) {
          assignment.place(s, w);
        } else {
          pool.join(s);
          poolChanged = true;
          pool.mark(s);
        }
      }
    }
    if (poolChanged) {
      pool.invalidate();
    }
    // The pool's orphans (the removed members' pool targets and the targets that joined the
    // pool), in identity-hash order: the pool view is in that order.
    IntList poolOrphans = pool.markedIds();
    if (fallback != null) {
      fallback.collectorsChanged(change.withOrphans(poolOrphans), pool);
    } else {
      warnUnplaced(pool.count());
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

  /** What {@code member} holds outside the pool: its node's targets when it is the winner. */
  private int heldOnNode(Member member) {
    String node = member.node();
    NodeTargets local = node == null ? null : byNode.get(node);
    // The entry's winner is the winners' map's for its node (kept equal): one search.
    return local == null || local.winner != member ? 0 : local.slots.size();
  }
}
