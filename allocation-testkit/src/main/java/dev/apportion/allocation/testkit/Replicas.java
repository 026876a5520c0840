package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The checks behind the replica invariants of {@link Invariants}: how a target's owners spread
 * over nodes and zones, how many replicas a step moved, and whether a change's moves tell the
 * truth replica by replica. Stateless.
 *
 * <p>Spread is counted in <em>slots</em>, as the replica placement tells collectors apart: a
 * collector's node slot is its node, or the collector itself when it has none; its zone slot is
 * its zone, else its node slot (a collector without a zone is in no known zone, so it differs
 * from every zone).
 */
final class Replicas {
  private Replicas() {}

  /**
   * Checks the moves reported for one target against its owners before and after, and returns
   * how many of its replicas were reassigned (a known target's replica that left a collector).
   * When both owner lists are complete (k names or none) the ranks are known and every rank is
   * checked; otherwise the moves must account for the owners as sets.
   */
  static int checkMoves(Target x, List<String> before, List<String> after, int k,
      List<Move> moves, boolean known, Invariants.Problems p) {
    Map<Integer, Move> byRank = new TreeMap<>();
    for (Move m : moves) {
      if (m.replica() >= k) {
        p.add("the move " + m + " names replica " + m.replica() + " of " + k);
      } else if (byRank.put(m.replica(), m) != null) {
        p.add("the move of " + label(x, m.replica(), k) + " is reported twice");
      }
    }
    boolean exact = (before.isEmpty() || before.size() == k)
        && (after.isEmpty() || after.size() == k);
    int reassigned = 0;
    if (exact) {
      for (int r = 0; r < k; r++) {
        String from = before.isEmpty() ? null : before.get(r);
        String to = after.isEmpty() ? null : after.get(r);
        Move m = byRank.get(r);
        String what = label(x, r, k);
        if (Objects.equals(from, to)) {
          if (m != null) {
            p.add("reported move " + what + ": " + show(m.from()) + " -> " + show(m.to())
                + " did not happen");
          }
          continue;
        }
        if (from != null && known) {
          reassigned++;
        }
        if (m == null) {
          p.add("move " + what + ": " + show(from) + " -> " + show(to) + " was not reported");
        } else if (!Objects.equals(from, m.from().orElse(null))
            || !Objects.equals(to, m.to().orElse(null))) {
          p.add("move " + what + " reported as " + show(m.from()) + " -> " + show(m.to())
              + ", happened as " + show(from) + " -> " + show(to));
        }
      }
      return reassigned;
    }
    Set<String> from = new HashSet<>();
    Set<String> to = new HashSet<>();
    for (Move m : byRank.values()) {
      m.from().ifPresent(from::add);
      m.to().ifPresent(to::add);
      if (m.from().isPresent() && known) {
        reassigned++;
      }
      if (m.from().isPresent() && !before.contains(m.from().get())) {
        p.add("reported move " + m + " did not happen: " + x + " was on " + before);
      }
      if (m.to().isPresent() && !after.contains(m.to().get())) {
        p.add("reported move " + m + " did not happen: " + x + " is on " + after);
      }
    }
    for (String o : before) {
      if (!after.contains(o) && !from.contains(o)) {
        p.add(x + " left " + o + " (owners " + before + " -> " + after
            + ") but no move reports it");
      }
    }
    for (String o : after) {
      if (!before.contains(o) && !to.contains(o)) {
        p.add(x + " reached " + o + " (owners " + before + " -> " + after
            + ") but no move reports it");
      }
    }
    return reassigned;
  }

  private static String label(Target x, int replica, int k) {
    return k == 1 ? x.toString() : x + " (replica " + replica + ")";
  }

  private static String show(Optional<String> collector) {
    return collector.orElse("(unassigned)");
  }

  private static String show(String collector) {
    return collector == null ? "(unassigned)" : collector;
  }

  /** The collector's node slot: its node, or itself when it runs on none. */
  static String nodeSlot(Collector c) {
    return c.node().map(n -> "node " + n).orElse("collector " + c.name());
  }

  /** The collector's zone slot: its zone, or else its node slot. */
  static String zoneSlot(Collector c) {
    return c.zone().map(z -> "zone " + z).orElseGet(() -> nodeSlot(c));
  }

  /**
   * Whether no two collectors share a node slot or a zone slot: then the spread of replicas
   * puts no constraint on where they go, and balance is the strategy's.
   */
  static boolean everyCollectorApart(List<Collector> collectors) {
    return slots(collectors, true).size() == collectors.size()
        && slots(collectors, false).size() == collectors.size();
  }

  /** Whether every node's collectors agree on their zone (all without one counts as agreeing). */
  static boolean zonesFollowNodes(List<Collector> collectors) {
    Map<String, Optional<String>> zoneOfNode = new HashMap<>();
    for (Collector c : collectors) {
      if (c.node().isPresent()) {
        Optional<String> was = zoneOfNode.putIfAbsent(c.node().get(), c.zone());
        if (was != null && !was.equals(c.zone())) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * The spread of the non-per-node strategies: each target's owners on as many node slots as
   * there are (up to its owner count), and, when zones follow nodes, on as many zone slots.
   */
  static String spread(Transition t) {
    List<Collector> live = t.inputsAfter().collectors();
    Allocation a = t.after();
    if (a.replicas() == 1 || live.size() < 2) {
      return null;
    }
    Map<String, Collector> byName = byName(live);
    int nodes = slots(live, false).size();
    boolean zoned = zonesFollowNodes(live);
    int zones = slots(live, true).size();
    Invariants.Problems p = new Invariants.Problems();
    for (Target x : Invariants.sorted(t.inputsAfter().targets())) {
      List<Collector> owners = collectors(a.ownersOf(x), byName);
      int onNodes = slots(owners, false).size();
      if (onNodes < Math.min(owners.size(), nodes)) {
        p.add(x + " is on " + a.ownersOf(x) + ", " + onNodes + " node(s) "
            + slots(owners, false) + ", though collectors run on " + nodes + " nodes");
      } else if (zoned && slots(owners, true).size() < Math.min(owners.size(), zones)) {
        p.add(x + " is on " + a.ownersOf(x) + ", in " + slots(owners, true).size()
            + " zone(s) " + slots(owners, true) + ", though collectors run in " + zones
            + " zones");
      }
    }
    return p.describe();
  }

  /**
   * The spread of {@code per-node}: owners on as many node slots as there are, and the further
   * replicas (after the primary) in the target's zone, each on its own node slot, as far as the
   * zone has node slots the primary is not on. The target's zone is its own, else the zone of
   * the first collector (by name) on its node that has one.
   */
  static String locality(Transition t) {
    List<Collector> live = t.inputsAfter().collectors();
    Allocation a = t.after();
    if (a.replicas() == 1 || live.size() < 2) {
      return null;
    }
    Map<String, Collector> byName = byName(live);
    Map<String, String> zoneOfNode = new HashMap<>();
    Set<String> zonesKnown = new HashSet<>();
    for (Collector c : live) {
      if (c.zone().isPresent()) {
        zonesKnown.add(c.zone().get());
        c.node().ifPresent(n -> zoneOfNode.putIfAbsent(n, c.zone().get()));
      }
    }
    int nodes = slots(live, false).size();
    Invariants.Problems p = new Invariants.Problems();
    for (Target x : Invariants.sorted(t.inputsAfter().targets())) {
      List<String> names = a.ownersOf(x);
      List<Collector> owners = collectors(names, byName);
      int onNodes = slots(owners, false).size();
      if (onNodes < Math.min(owners.size(), nodes)) {
        p.add(x + " is on " + names + ", " + onNodes + " node(s), though collectors run on "
            + nodes + " nodes");
        continue;
      }
      String zone = x.zone().orElseGet(() -> x.node().map(zoneOfNode::get).orElse(null));
      Optional<String> primary = a.collectorOf(x);
      if (zone == null || !zonesKnown.contains(zone) || primary.isEmpty() || owners.size() < 2) {
        continue;
      }
      String primarySlot = nodeSlot(owners.get(0));
      Set<String> room = new HashSet<>();
      for (Collector c : live) {
        if (c.zone().equals(Optional.of(zone)) && !nodeSlot(c).equals(primarySlot)) {
          room.add(nodeSlot(c));
        }
      }
      Set<String> good = new HashSet<>();
      for (Collector c : owners.subList(1, owners.size())) {
        if (c.zone().equals(Optional.of(zone)) && !nodeSlot(c).equals(primarySlot)) {
          good.add(nodeSlot(c));
        }
      }
      int want = Math.min(owners.size() - 1, room.size());
      if (good.size() < want) {
        p.add(x + " in zone " + zone + " has further replicas " + names.subList(1, names.size())
            + " on " + good.size() + " node(s) of its zone besides the primary's, though "
            + room.size() + " such node(s) have collectors");
      }
    }
    return p.describe();
  }

  /**
   * Replicas that left a collector in the step, over the targets known before and after: for
   * each, the owners before that are not owners after.
   */
  static int movedReplicas(Transition t) {
    Set<Target> before = new HashSet<>(t.inputsBefore().targets());
    int n = 0;
    for (Target x : t.inputsAfter().targets()) {
      if (before.contains(x)) {
        List<String> now = t.after().ownersOf(x);
        for (String o : t.before().ownersOf(x)) {
          if (!now.contains(o)) {
            n++;
          }
        }
      }
    }
    return n;
  }

  private static Map<String, Collector> byName(List<Collector> collectors) {
    Map<String, Collector> out = new HashMap<>();
    for (Collector c : collectors) {
      out.put(c.name(), c);
    }
    return out;
  }

  /** The named collectors, in order; a name not live (completeness reports it) is skipped. */
  private static List<Collector> collectors(List<String> names, Map<String, Collector> byName) {
    List<Collector> out = new ArrayList<>();
    for (String n : names) {
      Collector c = byName.get(n);
      if (c != null) {
        out.add(c);
      }
    }
    return out;
  }

  private static Set<String> slots(List<Collector> collectors, boolean zones) {
    Set<String> out = new LinkedHashSet<>();
    for (Collector c : collectors) {
      out.add(zones ? zoneSlot(c) : nodeSlot(c));
    }
    return out;
  }
}
