package dev.apportion.allocation.internal.strategy;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.CollectorChange;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.engine.Placer;
import dev.apportion.allocation.ring.HashRing;
import dev.apportion.allocation.ring.HashRings;
import java.util.List;

/**
 * {@code rendezvous}: every target goes to the collector with the highest rendezvous score for
 * its identity hash ({@link HashRings#rendezvousScore}).
 *
 * <p><b>Guarantees.</b> Stateless: the assignment is a function of the target and collector sets
 * alone. Removing a collector moves exactly its targets; adding one moves exactly the targets it
 * now wins. Balance is that of random placement: about 1.3x peak/mean at 100 targets per
 * collector.
 *
 * <p><b>Cost.</b> Placing a target scores every collector: O(c). Removing a collector re-places
 * only its targets: O(moved * c). Adding {@code a} collectors tests every placed target against
 * each of them: O(n * a), one mix per test, with no ring lookup.
 */
final class RendezvousPlacer implements Placer {
  private HashRing ring;
  private Members ringFor;

  private HashRing ring(Members members) {
    if (ringFor != members) {
      ring = HashRings.rendezvous(members.names());
      ringFor = members;
    }
    return ring;
  }

  @Override
  public void targetsChanged(List<Target> added, List<Target> removed, Members members,
      Assignment assignment) {
    if (members.isEmpty()) {
      return;
    }
    HashRing r = ring(members);
    for (Target t : added) {
      assignment.place(t, members.get(r.ownerIndex(t.hash())));
    }
  }

  @Override
  public void collectorsChanged(CollectorChange change, Assignment assignment) {
    Members members = change.after();
    HashRing r = ring(members);
    for (Target t : change.orphans()) {
      assignment.place(t, members.get(r.ownerIndex(t.hash())));
    }
    if (change.added().isEmpty() || change.before().isEmpty()) {
      return;
    }
    List<Member> added = change.added();
    boolean[] isNew = new boolean[members.size()];
    for (Member m : added) {
      isNew[m.index()] = true;
    }
    for (Member holder : members) {
      if (isNew[holder.index()]) {
        continue;
      }
      for (Target t : assignment.targetsOf(holder)) {
        Member best = holder;
        long bestScore = HashRings.rendezvousScore(holder.hash(), t.hash());
        for (Member challenger : added) {
          long s = HashRings.rendezvousScore(challenger.hash(), t.hash());
          if (s > bestScore || (s == bestScore && challenger.index() < best.index())) {
            best = challenger;
            bestScore = s;
          }
        }
        if (best != holder) {
          assignment.place(t, best);
        }
      }
    }
  }
}
