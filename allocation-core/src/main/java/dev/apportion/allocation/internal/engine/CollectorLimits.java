package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.internal.collections.IntList;
import java.util.Arrays;
import org.slf4j.Logger;

/**
 * The optional per-collector limit ({@code maxTargetsPerCollector}, {@code maxCostPerCollector}),
 * enforced by the {@link Engine} after the strategy's placer ran, whatever the strategy.
 * Writer-thread only.
 *
 * <p><b>Rule.</b> A collector of capacity {@code w} may hold {@code floor(maxTargets * w)}
 * targets (at least 1) and {@code floor(maxCost * w)} cost ({@link Member#fits}: an empty
 * collector takes any one target, so a target costlier than every limit is placed alone rather
 * than nowhere). After each write, targets the write placed on a collector beyond its limit are
 * taken off again (the last in identity-hash order first) and, with the targets still waiting
 * from earlier writes, each goes to the collector with room that has the least cost relative to
 * its capacity (ties to the smaller name). A target that fits nowhere stays unassigned
 * ({@code Allocation.unassigned()}) and waits: it is tried again after every write. The limit is
 * checked when a target is placed; a collector whose targets' costs grow past it, or whose
 * capacity shrinks, keeps them (a change of cost alone moves nothing).
 *
 * <p><b>Episode.</b> The first write that leaves targets waiting logs one warning, with the
 * counts and what to do; the write after which none waits logs one info line; nothing in
 * between.
 *
 * <p><b>Cost.</b> Nothing when no limit is set. Otherwise O(c) per write to find full
 * collectors, O(k log k) to order the {@code k} targets taken off, and O(c) per target placed
 * by this rule; a write with nothing over the limit and nothing waiting costs the O(c) check.
 */
public final class CollectorLimits {
  private final String strategy;
  private final Logger log;
  private final int maxTargets;
  private final long maxCost;

  /** Targets unassigned by this rule, waiting; by slot whether waiting. */
  private final IntList waiting = new IntList();
  private boolean[] isWaiting = new boolean[16];
  /**
   * Targets this rule placed that are still where it put them, for the outside-partition count;
   * by slot, the owner's id plus 1 it chose (0 when not listed).
   */
  private final IntList placed = new IntList();
  private int[] placedOn = new int[16];
  private final IntList homeless = new IntList();
  private final IntList roomy = new IntList();
  private boolean warned;

  CollectorLimits(String strategy, Logger log, int maxTargets, long maxCost) {
    this.strategy = strategy;
    this.log = log;
    this.maxTargets = maxTargets;
    this.maxCost = maxCost;
  }

  /** Whether any limit is set. */
  boolean active() {
    return maxTargets > 0 || maxCost > 0;
  }

  /** Sets a member's limits from its capacity. */
  void apply(Member m) {
    double w = m.capacity();
    int targets = maxTargets > 0 ? (int) Math.max(1, Math.floor(maxTargets * w))
        : Integer.MAX_VALUE;
    long cost = maxCost > 0 ? (long) Math.max(1, Math.floor(maxCost * w)) : Long.MAX_VALUE;
    m.limits(targets, cost);
  }

  /** Forgets removed targets that were waiting (their slots may be reused). */
  void forget(IntList removed) {
    for (int i = 0; i < removed.size(); i++) {
      int s = removed.get(i);
      if (s < isWaiting.length) {
        isWaiting[s] = false;
      }
      if (s < placedOn.length) {
        placedOn[s] = 0;
      }
    }
  }

  /** How many targets wait, unassigned by this rule. */
  int waiting() {
    return waiting.size();
  }

  /**
   * The targets this rule placed that are still on the collector it chose (for the
   * outside-partition count: {@link Placer#outsideAmong}), in no particular order.
   *
   * @return the slots; read-only, valid until the next write
   */
  IntList placed() {
    return placed;
  }

  /**
   * Enforces the limit after a write's placement: takes what the write put beyond a limit off
   * again, and places it and the waiting targets where they fit.
   */
  void enforce(Slots slots, Members members) {
    if (!active() || members.isEmpty()) {
      return;
    }
    if (isWaiting.length < slots.capacity()) {
      isWaiting = Arrays.copyOf(isWaiting, slots.capacity());
    }
    if (placedOn.length < slots.capacity()) {
      placedOn = Arrays.copyOf(placedOn, slots.capacity());
    }
    // What this rule placed before and the write moved (or dropped) is no longer its doing.
    int kept = 0;
    for (int i = 0; i < placed.size(); i++) {
      int s = placed.get(i);
      if (placedOn[s] != 0 && slots.ownerId(s) == placedOn[s] - 1) {
        placed.set(kept++, s);
      } else {
        placedOn[s] = 0;
      }
    }
    placed.truncate(kept);
    boolean anyOver = false;
    boolean[] overById = new boolean[maxId(members) + 1];
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      if (m.load() > m.targetLimit() || m.cost() > m.costLimit()) {
        overById[m.id()] = true;
        anyOver = true;
      }
    }
    homeless.clear();
    if (anyOver) {
      // Candidates: targets this write placed on a collector now beyond its limit.
      IntList touched = slots.journal().touched();
      for (int i = 0; i < touched.size(); i++) {
        int s = touched.get(i);
        int owner = slots.ownerId(s);
        if (owner >= 0 && overById[owner] && slots.journal().previousOwner(s) != owner) {
          homeless.add(s);
        }
      }
      slots.sorter().sort(homeless.array(), homeless.size(), slots.hashes(), slots.targets());
      // The last in identity-hash order go first: walk from the end, keep the prefix.
      int end = homeless.size();
      int first = end;
      for (int i = end - 1; i >= 0; i--) {
        int s = homeless.get(i);
        Member m = slots.ownerOf(s);
        if (m.load() > m.targetLimit() || m.cost() > m.costLimit()) {
          slots.place(s, null);
          homeless.set(--first, s);
        }
      }
      // Evicted slots now fill [first, end), still in order: move them to the front.
      int n = end - first;
      System.arraycopy(homeless.array(), first, homeless.array(), 0, n);
      homeless.truncate(n);
    }
    // The waiting targets still known and still unassigned wait on.
    for (int i = 0; i < waiting.size(); i++) {
      int s = waiting.get(i);
      if (isWaiting[s] && slots.ownerId(s) == Slots.NONE) {
        homeless.add(s);
      }
      isWaiting[s] = false;
    }
    waiting.clear();
    if (!homeless.isEmpty()) {
      slots.sorter().sort(homeless.array(), homeless.size(), slots.hashes(), slots.targets());
      roomy.clear();
      for (int i = 0; i < members.size(); i++) {
        Member m = members.get(i);
        if (m.load() < m.targetLimit()) {
          roomy.add(i);
        }
      }
      double[] capacities = members.capacities();
      for (int i = 0; i < homeless.size(); i++) {
        int s = homeless.get(i);
        long cost = slots.cost(s);
        int best = -1;
        int bestPos = -1;
        double bestLoad = 0;
        for (int r = 0; r < roomy.size(); r++) {
          int idx = roomy.get(r);
          Member m = members.get(idx);
          if (!m.fits(cost)) {
            continue;
          }
          double load = m.cost() / capacities[idx];
          if (best < 0 || load < bestLoad || (load == bestLoad && idx < best)) {
            best = idx;
            bestPos = r;
            bestLoad = load;
          }
        }
        if (best < 0) {
          if (!isWaiting[s]) {
            isWaiting[s] = true;
            waiting.add(s);
          }
          continue;
        }
        Member m = members.get(best);
        slots.place(s, m);
        if (placedOn[s] == 0) {
          placed.add(s);
        }
        placedOn[s] = m.id() + 1;
        if (m.load() >= m.targetLimit()) {
          // Full for good in this write: out of the scan (order does not matter, ties go by index).
          roomy.set(bestPos, roomy.get(roomy.size() - 1));
          roomy.truncate(roomy.size() - 1);
        }
      }
    }
    homeless.clear();
    report(slots.known());
  }

  private static int maxId(Members members) {
    return Math.max(0, members.maxId());
  }

  private void report(int known) {
    int n = waiting.size();
    if (n > 0 && !warned) {
      warned = true;
      log.warn("[{}] {} of {} target(s) fit on no collector under the per-collector limit "
          + "(max targets {}, max cost {}, per unit of capacity): they stay unassigned and are "
          + "not scraped (listed in Allocation.unassigned(), counted by AllocatorMetrics' "
          + "targets.unassigned gauge) until room appears. Add collectors, give them more "
          + "capacity, or raise maxTargetsPerCollector/maxCostPerCollector. Logged once per "
          + "episode.", strategy, n, known, maxTargets > 0 ? maxTargets : "none",
          maxCost > 0 ? maxCost : "none");
    } else if (n == 0 && warned) {
      warned = false;
      log.info("[{}] every target fits under the per-collector limit again; none is left "
          + "unassigned by it", strategy);
    }
  }
}
