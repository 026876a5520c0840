package dev.apportion.allocation.internal.rendezvous;

import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.CollectorSetChange;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.engine.Placer;
import dev.apportion.allocation.ring.HashRings;
import java.util.List;

/**
 * {@code rendezvous}: every target goes to the collector with the highest rendezvous score for
 * its identity hash ({@link HashRings#rendezvousScore}), ties to the smaller name; with
 * collectors of different capacities, to the highest <em>weighted</em> score.
 *
 * <p><b>Design.</b> The scoring loop reads the members' hashes from one flat {@code long[]}
 * ({@link Members#hashes()}) and inlines the score, so placing a target is a tight, allocation-free
 * loop of one multiply-xorshift mix per collector with no virtual call; it gives exactly the
 * placement of {@link HashRings#rendezvous} over the same names (pinned by the tests).
 *
 * <p><b>Capacity.</b> When capacities differ, member {@code i}'s score for a key is the weighted
 * rendezvous score {@code w_i / -ln(u_i)} (Schindelhauer and Schomaker's logarithmic method),
 * with {@code u_i} in (0, 1) taken from the top 53 bits of the mix: member {@code i} then owns a
 * share {@code w_i / sum(w)} of the targets in expectation, and adding, removing or reweighting
 * one collector still moves only the targets it gains or loses. The order is total: weighted
 * score, then {@code u}'s bits, then the smaller name. A logarithm per member per target would
 * cost about 20 ns each; instead the loop keeps, per distinct capacity, the member with the
 * largest {@code u} (one integer comparison each, as in the unweighted loop: within one capacity
 * the weighted score grows with {@code u}), and takes a logarithm only for those few winners
 * ({@link StrictMath#log}, so every JVM computes the same placement). With equal capacities (the
 * default) the unweighted loop runs, unchanged. Costs are not read: placement depends on the
 * identity hash and the collector set only, so a change of cost never moves a target.
 *
 * <p><b>Guarantees.</b> Stateless: the assignment is a function of the target and collector sets
 * alone. Removing a collector moves exactly its targets; adding one moves exactly the targets it
 * now wins. Balance is that of random placement: about 1.3x peak/mean at 100 targets per
 * collector.
 *
 * <p><b>Cost.</b> Placing a target scores every collector: O(c) (plus one logarithm per distinct
 * capacity when capacities differ). Removing a collector re-places only its targets:
 * O(moved * c). Adding (or reweighting) {@code a} collectors tests every placed target against
 * each of them: O(n * a), one mix per test.
 */
public final class RendezvousPlacer implements Placer {
  private static final byte ADDED = 1;
  private static final byte REWEIGHTED = 2;
  // Scratch for the weighted loop, by capacity class.
  private int[] classBest = new int[0];
  private long[] classBits = new long[0];

  /**
   * The index of the member with the highest score for {@code key}; ties to the lower index. A
   * four-lane unrolled variant measured no faster (each score is two dependent multiplies, so
   * the loop is bound by multiply throughput, not by the comparison chain).
   */
  static int best(long[] hashes, long key) {
    int best = 0;
    long top = HashRings.rendezvousScore(hashes[0], key);
    for (int i = 1; i < hashes.length; i++) {
      long s = HashRings.rendezvousScore(hashes[i], key);
      // Members come in name order, so the earlier one (best) has the smaller name.
      if (HashRings.rendezvousBeats(s, top, false)) {
        top = s;
        best = i;
      }
    }
    return best;
  }

  /**
   * {@code u}'s 53 bits for a score: non-negative, so signed comparison orders them, and in the
   * order of the scores themselves as signed longs (the unweighted loop's order), so that
   * collectors of one capacity rank alike whether or not the capacities differ. (Taken from the
   * unsigned score they ranked a negative score first: a placement then depended on whether a
   * collector of another capacity had come and gone.)
   */
  static long bits(long score) {
    return (score ^ Long.MIN_VALUE) >>> 11;
  }

  /** The weighted score {@code capacity / -ln(u)}: finite and positive. */
  static double weighted(long bits, double capacity) {
    double u = (bits + 0.5) * 0x1.0p-53;
    return -capacity / StrictMath.log(u);
  }

  /** Whether (ws, bits, index) a beats b: higher weighted score, then more bits, then index. */
  private static boolean beats(double wsA, long bitsA, int indexA, double wsB, long bitsB,
      int indexB) {
    if (wsA != wsB) {
      return wsA > wsB;
    }
    return bitsA > bitsB || (bitsA == bitsB && indexA < indexB);
  }

  /** The winner of {@code key} among all members, by capacity-weighted score. */
  private int bestWeighted(Members members, long key) {
    long[] hashes = members.hashes();
    int[] cls = members.capacityClass();
    double[] classCap = members.classCapacities();
    int k = classCap.length;
    if (classBest.length < k) {
      classBest = new int[k];
      classBits = new long[k];
    }
    for (int j = 0; j < k; j++) {
      classBest[j] = -1;
    }
    for (int i = 0; i < hashes.length; i++) {
      long b = bits(HashRings.rendezvousScore(hashes[i], key));
      int c = cls[i];
      // Ascending index: a tie keeps the earlier (smaller name).
      if (classBest[c] < 0 || b > classBits[c]) {
        classBest[c] = i;
        classBits[c] = b;
      }
    }
    int best = -1;
    double bestWs = 0;
    long bestBits = 0;
    for (int j = 0; j < k; j++) {
      int i = classBest[j];
      if (i < 0) {
        continue;
      }
      double ws = weighted(classBits[j], classCap[j]);
      if (best < 0 || beats(ws, classBits[j], i, bestWs, bestBits, best)) {
        best = i;
        bestWs = ws;
        bestBits = classBits[j];
      }
    }
    return best;
  }

  private int bestOf(Members members, long key) {
    return members.uniformCapacity() ? best(members.hashes(), key) : bestWeighted(members, key);
  }

  @Override
  public void targetsChanged(IntList added, IntList removed, Members members,
      Assignment assignment) {
    if (members.isEmpty()) {
      return;
    }
    place(added, members, assignment);
  }

  private void place(IntList slots, Members members, Assignment assignment) {
    for (int i = 0; i < slots.size(); i++) {
      int slot = slots.get(i);
      assignment.place(slot, members.get(bestOf(members, assignment.hash(slot))));
    }
  }

  @Override
  public void collectorsChanged(CollectorSetChange change, Assignment assignment) {
    Members members = change.after();
    place(change.orphans(), members, assignment);
    List<Member> reweighted = change.reweighted();
    if (change.before().isEmpty()
        || (change.added().isEmpty() && reweighted.isEmpty())) {
      return;
    }
    // Only the scores of the added and reweighted members changed: a target stays unless one of
    // them now beats its holder; a reweighted holder's targets are scored against everyone.
    int a = change.added().size() + reweighted.size();
    Member[] challengers = new Member[a];
    for (int i = 0; i < change.added().size(); i++) {
      challengers[i] = change.added().get(i);
    }
    for (int i = 0; i < reweighted.size(); i++) {
      challengers[change.added().size() + i] = reweighted.get(i);
    }
    // By member id (a partition's members are not indexed from 0): what each member is (0
    // stays, 1 added, 2 reweighted), its hash and the member itself. Flat arrays rather than a
    // search of the lists and a read of the holder per target: this loop runs over every placed
    // target, and reads nothing else but the target's hash and its holder's id.
    int maxId = Math.max(0, members.maxId());
    byte[] kind = new byte[maxId + 1];
    long[] hashById = new long[maxId + 1];
    Member[] byId = new Member[maxId + 1];
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      hashById[m.id()] = m.hash();
      byId[m.id()] = m;
    }
    for (Member m : change.added()) {
      kind[m.id()] = ADDED;
    }
    for (Member m : reweighted) {
      kind[m.id()] = REWEIGHTED;
    }
    boolean uniform = members.uniformCapacity();
    // Each target is decided alone, so the walk takes the slots in memory order when the view
    // allows it (sequential reads of the owners and hashes instead of one random read each).
    int limit = assignment.slotLimit();
    if (uniform && reweighted.isEmpty() && a == 1 && limit >= 0) {
      oneAdded(challengers[0], limit, byId, hashById, assignment);
      return;
    }
    int n = limit >= 0 ? limit : assignment.size();
    for (int i = 0; i < n; i++) {
      int slot = limit >= 0 ? i : assignment.slotAt(i);
      int holderId = assignment.holderId(slot);
      if (holderId < 0) {
        continue;
      }
      Member holder = holderId < byId.length ? byId[holderId] : null;
      byte k;
      long holderHash;
      if (holder != null) {
        k = kind[holderId];
        holderHash = hashById[holderId];
      } else {
        // Not expected (the removed members' targets are orphans), but scored as a member
        // that stays, as the holder it is, rather than failing.
        holder = assignment.ownerOf(slot);
        k = 0;
        holderHash = holder.hash();
      }
      if (k == ADDED) {
        continue;
      }
      long key = limit >= 0 ? assignment.hash(slot) : assignment.hashAt(i);
      if (k == REWEIGHTED) {
        Member best = members.get(bestOf(members, key));
        if (best != holder) {
          assignment.place(slot, best);
        }
        continue;
      }
      Member best = holder;
      long bestScore = HashRings.rendezvousScore(holderHash, key);
      if (uniform) {
        for (Member c : challengers) {
          long s = HashRings.rendezvousScore(c.hash(), key);
          // The tie's name order read only on a tie (the same rule as rendezvousBeats).
          if (s > bestScore || (s == bestScore && c.index() < best.index())) {
            best = c;
            bestScore = s;
          }
        }
      } else {
        double bestWs = weighted(bits(bestScore), holder.capacity());
        for (Member c : challengers) {
          long s = HashRings.rendezvousScore(c.hash(), key);
          double ws = weighted(bits(s), c.capacity());
          if (beats(ws, bits(s), c.index(), bestWs, bits(bestScore), best.index())) {
            best = c;
            bestScore = s;
            bestWs = ws;
          }
        }
      }
      if (best != holder) {
        assignment.place(slot, best);
      }
    }
  }

  /**
   * The common addition: one collector joins collectors of equal capacity. Each placed target
   * moves to it when its score beats the holder's, which is the general loop's test with the
   * newcomer's hash and index held in registers and nothing else read but the target's hash, its
   * holder's id and that holder's hash (and, only on a tie of scores, the holder's index).
   */
  private static void oneAdded(Member added, int limit, Member[] byId, long[] hashById,
      Assignment assignment) {
    long addedHash = added.hash();
    int addedId = added.id();
    int addedIndex = added.index();
    for (int slot = 0; slot < limit; slot++) {
      int holderId = assignment.holderId(slot);
      if (holderId < 0 || holderId == addedId) {
        continue;
      }
      long key = assignment.hash(slot);
      long s = HashRings.rendezvousScore(addedHash, key);
      Member holder = holderId < byId.length ? byId[holderId] : null;
      long holderHash;
      if (holder != null) {
        holderHash = hashById[holderId];
      } else {
        holder = assignment.ownerOf(slot); // not expected, as in the general loop
        holderHash = holder.hash();
      }
      long h = HashRings.rendezvousScore(holderHash, key);
      if (s > h || (s == h && addedIndex < holder.index())) {
        assignment.place(slot, added);
      }
    }
  }
}
