package dev.apportion.allocation.internal.strategy;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.CollectorChange;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.engine.Placer;
import dev.apportion.allocation.internal.engine.TargetOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * <p><b>Cost.</b> A collector change: O(c) to recompute winners, plus O(targets of the changed
 * nodes), plus the fallback's cost over the pool. Adding a target: O(1) plus the fallback's.
 */
final class PerNodePlacer implements Placer {
  private static final Logger LOG = LoggerFactory.getLogger(PerNodePlacer.class);

  private final Placer fallback;
  private final Map<String, Set<Target>> byNode = new HashMap<>();
  private final Set<Target> pool = new HashSet<>();
  private final PoolView poolView;
  private Map<String, Member> winners = Map.of();
  private boolean warned;

  /**
   * A per-node placer.
   *
   * @param fallback places the pool; null to leave it unassigned
   */
  PerNodePlacer(Placer fallback) {
    this.fallback = fallback;
    this.poolView = new PoolView();
  }

  @Override
  public void targetsChanged(List<Target> added, List<Target> removed, Members members,
      Assignment assignment) {
    poolView.parent = assignment;
    List<Target> leftPool = new ArrayList<>();
    for (Target t : removed) {
      unindex(t);
      if (pool.remove(t)) {
        leftPool.add(t);
      }
    }
    for (Target t : added) {
      index(t);
    }
    if (members.isEmpty()) {
      return;
    }
    List<Target> joinedPool = new ArrayList<>();
    for (Target t : added) {
      Member w = winner(t);
      if (w != null) {
        assignment.place(t, w);
      } else {
        joinedPool.add(t);
      }
    }
    pool.addAll(joinedPool);
    poolView.invalidate();
    if (fallback != null) {
      if (!joinedPool.isEmpty() || !leftPool.isEmpty()) {
        fallback.targetsChanged(joinedPool, leftPool, members, poolView);
      }
    } else {
      warnUnplaced(joinedPool.size());
    }
  }

  @Override
  public void nodesChanged(List<Target> before, List<Target> after, Members members,
      Assignment assignment) {
    poolView.parent = assignment;
    for (Target t : before) {
      unindex(t);
    }
    for (Target t : after) {
      index(t);
    }
    if (members.isEmpty()) {
      return;
    }
    List<Target> joinedPool = new ArrayList<>();
    List<Target> leftPool = new ArrayList<>();
    for (Target t : after) {
      Member w = winner(t);
      boolean inPool = pool.contains(t);
      if (w != null) {
        if (inPool) {
          pool.remove(t);
          leftPool.add(t);
        }
        assignment.place(t, w);
      } else if (!inPool) {
        pool.add(t);
        assignment.place(t, null);
        joinedPool.add(t);
      }
    }
    if (joinedPool.isEmpty() && leftPool.isEmpty()) {
      return;
    }
    poolView.invalidate();
    if (fallback != null) {
      fallback.targetsChanged(joinedPool, leftPool, members, poolView);
    } else {
      warnUnplaced(joinedPool.size());
    }
  }

  private void index(Target t) {
    t.node().ifPresent(n -> byNode.computeIfAbsent(n, k -> new HashSet<>()).add(t));
  }

  private void unindex(Target t) {
    t.node().ifPresent(n -> {
      Set<Target> s = byNode.get(n);
      s.remove(t);
      if (s.isEmpty()) {
        byNode.remove(n);
      }
    });
  }

  @Override
  public void collectorsChanged(CollectorChange change, Assignment assignment) {
    poolView.parent = assignment;
    Map<String, Member> previous = winners;
    winners = winners(change.after());
    List<Target> toPool = new ArrayList<>();
    Set<Target> toPoolSet = new HashSet<>();
    if (change.before().isEmpty()) {
      pool.clear();
      for (Target t : change.orphans()) {
        Member w = winner(t);
        if (w != null) {
          assignment.place(t, w);
        } else {
          toPool.add(t);
        }
      }
      pool.addAll(toPool);
      poolView.invalidate();
      if (fallback != null) {
        fallback.collectorsChanged(change.withOrphans(toPool), poolView);
      } else {
        warnUnplaced(toPool.size());
      }
      return;
    }
    Set<String> changedNodes = new TreeSet<>();
    for (String node : previous.keySet()) {
      if (winners.get(node) != previous.get(node)) {
        changedNodes.add(node);
      }
    }
    for (String node : winners.keySet()) {
      if (winners.get(node) != previous.get(node)) {
        changedNodes.add(node);
      }
    }
    boolean poolChanged = false;
    for (String node : changedNodes) {
      Member w = winners.get(node);
      Set<Target> local = byNode.get(node);
      if (local == null) {
        continue;
      }
      for (Target t : local) {
        if (w != null) {
          poolChanged |= pool.remove(t);
          assignment.place(t, w);
        } else if (pool.add(t)) {
          poolChanged = true;
          assignment.place(t, null);
          toPool.add(t);
          toPoolSet.add(t);
        }
      }
    }
    List<Target> poolOrphans = new ArrayList<>();
    for (Target t : change.orphans()) {
      if (pool.contains(t)) {
        if (!toPoolSet.contains(t)) {
          poolOrphans.add(t);
        }
      } else if (assignment.ownerOf(t) == null) {
        Member w = winner(t);
        if (w != null) {
          assignment.place(t, w);
        } else {
          pool.add(t);
          poolChanged = true;
          toPool.add(t);
        }
      }
    }
    if (poolChanged) {
      poolView.invalidate();
    }
    poolOrphans.addAll(toPool);
    poolOrphans.sort(TargetOrder.HASH);
    if (fallback != null) {
      fallback.collectorsChanged(change.withOrphans(poolOrphans), poolView);
    } else {
      warnUnplaced(pool.size());
    }
  }

  private Member winner(Target t) {
    String node = t.node().orElse(null);
    return node == null ? null : winners.get(node);
  }

  /** Node to the collector on it with the smallest name: members come in name order. */
  private static Map<String, Member> winners(Members members) {
    Map<String, Member> w = new HashMap<>();
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

  /** The fallback's view: only the pool's targets. */
  private final class PoolView implements Assignment {
    Assignment parent;
    private List<Target> sorted;

    void invalidate() {
      sorted = null;
    }

    @Override
    public Member ownerOf(Target target) {
      return pool.contains(target) ? parent.ownerOf(target) : null;
    }

    @Override
    public void place(Target target, Member member) {
      if (!pool.contains(target)) {
        throw new IllegalStateException("fallback placing a node-local target: " + target);
      }
      parent.place(target, member);
    }

    @Override
    public List<Target> targetsOf(Member member) {
      List<Target> out = new ArrayList<>();
      for (Target t : parent.targetsOf(member)) {
        if (pool.contains(t)) {
          out.add(t);
        }
      }
      return out;
    }

    @Override
    public List<Target> sortedTargets() {
      if (sorted == null) {
        Target[] ts = pool.toArray(new Target[0]);
        Arrays.sort(ts, TargetOrder.HASH);
        sorted = Arrays.asList(ts);
      }
      return sorted;
    }
  }
}
