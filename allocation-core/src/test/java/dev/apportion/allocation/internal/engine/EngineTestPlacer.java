package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.ring.HashRings;

/**
 * A minimal stateless placer for the engine's own tests: rendezvous over the members, so the
 * placement is a function of the sets and can be compared across engines.
 */
final class EngineTestPlacer implements Placer {
  private static void placeAll(IntList slots, Members members, Assignment a) {
    for (int i = 0; i < slots.size(); i++) {
      int s = slots.get(i);
      a.place(s, members.get(best(members, a.hash(s))));
    }
  }

  private static int best(Members members, long key) {
    int best = 0;
    long top = Long.MIN_VALUE;
    for (int i = 0; i < members.size(); i++) {
      long score = HashRings.rendezvousScore(members.get(i).hash(), key);
      if (i == 0 || score > top) {
        top = score;
        best = i;
      }
    }
    return best;
  }

  @Override
  public void targetsChanged(IntList added, IntList removed, Members members, Assignment a) {
    if (!members.isEmpty()) {
      placeAll(added, members, a);
    }
  }

  @Override
  public void collectorsChanged(CollectorSetChange change, Assignment a) {
    Members members = change.after();
    for (int i = 0; i < a.size(); i++) {
      int s = a.slotAt(i);
      Member m = members.get(best(members, a.hash(s)));
      if (a.ownerOf(s) != m) {
        a.place(s, m);
      }
    }
  }
}
