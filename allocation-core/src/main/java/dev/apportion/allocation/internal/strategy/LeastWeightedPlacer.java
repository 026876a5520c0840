package dev.apportion.allocation.internal.strategy;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.CollectorChange;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.engine.Placer;
import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;

/**
 * {@code least-weighted}: sticky placement on the least-loaded collector, as in the OpenTelemetry
 * target allocator.
 *
 * <p><b>Design.</b> A target stays on its collector while that collector lives. A new or orphaned
 * target goes to the collector with the fewest targets; ties go to the one with the fewest
 * targets of the same job, then to the smaller name. Within one call, new targets are placed in
 * identity-hash order, so the input order never matters; across calls the result depends on
 * history (it is the one built-in strategy that is not a function of the two sets).
 *
 * <p><b>Guarantees.</b> Never moves a target whose collector lives: removing a collector moves
 * only its targets, adding one moves nothing (a new collector receives only new or orphaned
 * targets; it never rebalances). Spreads each job evenly when targets arrive together.
 *
 * <p><b>Cost.</b> Each call that places anything orders the collectors by load, O(c log c);
 * each placement is then O(log c), plus a scan of the least-loaded collectors that stops at the
 * first with no target of the job (all of them, in the worst case, as upstream). A collector
 * change costs O(c log c + orphans log c).
 */
final class LeastWeightedPlacer implements Placer {
  private static final Comparator<Member> BY_LOAD =
      Comparator.comparingInt(Member::load).thenComparing(Member::name);

  @Override
  public void targetsChanged(List<Target> added, List<Target> removed, Members members,
      Assignment assignment) {
    if (!members.isEmpty()) {
      place(added, members, assignment);
    }
  }

  @Override
  public void collectorsChanged(CollectorChange change, Assignment assignment) {
    place(change.orphans(), change.after(), assignment);
  }

  private static void place(List<Target> targets, Members members, Assignment assignment) {
    if (targets.isEmpty()) {
      return;
    }
    TreeSet<Member> byLoad = new TreeSet<>(BY_LOAD);
    byLoad.addAll(members);
    for (Target t : targets) {
      Member best = null;
      int bestJob = Integer.MAX_VALUE;
      int minLoad = byLoad.first().load();
      for (Member m : byLoad) {
        if (m.load() > minLoad) {
          break;
        }
        int j = m.jobLoad(t.job());
        if (j < bestJob) {
          best = m;
          bestJob = j;
          if (j == 0) {
            break;
          }
        }
      }
      byLoad.remove(best);
      assignment.place(t, best);
      byLoad.add(best);
    }
  }
}
