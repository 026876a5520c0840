package dev.apportion.allocation.ownership;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRings;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * What a member-list change gains and loses the local member ({@link Ownership#changesTo}), and
 * the unweighted rendezvous rank both rest on. Stateless.
 *
 * <p>With k replicas the local member owns a key when fewer than k other members beat it (the
 * highest score wins, a tie goes to the smaller name: {@link HashRings#rendezvousBeats}). When
 * both views rank by raw scores and are keyed alike, a key's fate is decided by counting
 * beaters: members in both views first (k of them beating the local member means it owned the
 * key neither before nor after), then the removed members (before) and the added ones (after).
 * So a target costs O(k log m) score computations in expectation plus one per member added or
 * removed. Otherwise both views are asked, O(m) per target.
 */
final class OwnershipChanges {
  private OwnershipChanges() {}

  /**
   * How many of the members {@code names}/{@code hashes} beat {@code self} for {@code key},
   * counting no further than {@code limit}. Stops at the limit, which for a key the local member
   * does not own is after O(limit log m) members in expectation. Allocation-free.
   */
  static int beaten(long selfHash, String self, String[] names, long[] hashes, int count,
      long key, int limit) {
    long mine = HashRings.rendezvousScore(selfHash, key);
    int beaten = 0;
    for (int i = 0; i < count && beaten < limit; i++) {
      long s = HashRings.rendezvousScore(hashes[i], key);
      if (HashRings.rendezvousBeats(s, mine, names[i].compareTo(self) < 0)) {
        beaten++;
      }
    }
    return beaten;
  }

  /** The change from {@code before} to {@code next}, same local member (checked by the caller). */
  static OwnershipChange between(Ownership before, Ownership next, Collection<Target> targets) {
    List<Target> gained = new ArrayList<>();
    List<Target> lost = new ArrayList<>();
    boolean sameKey = before.key().equals(next.key());
    if (before.scored() && next.scored() && sameKey && before.replicas() == next.replicas()) {
      scored(before, next, targets, gained, lost);
    } else {
      for (Target t : targets) {
        long key = before.key().keyOf(t);
        boolean had = before.ownsKey(key);
        boolean has = next.ownsKey(sameKey ? key : next.key().keyOf(t));
        if (had != has) {
          (has ? gained : lost).add(t);
        }
      }
    }
    return new OwnershipChange(before, next, gained, lost);
  }

  /**
   * Both views list the local member: split the other members into kept, removed and added
   * (one merge of the name-ordered lists), then count beaters per key.
   */
  private static void scored(Ownership before, Ownership next, Collection<Target> targets,
      List<Target> gained, List<Target> lost) {
    String self = before.self();
    String[] was = before.otherNames();
    String[] now = next.otherNames();
    int n = was.length;
    int m = now.length;
    Members kept = new Members(Math.min(n, m));
    Members removed = new Members(n);
    Members added = new Members(m);
    int i = 0;
    int j = 0;
    while (i < n || j < m) {
      int c = i == n ? 1 : j == m ? -1 : was[i].compareTo(now[j]);
      if (c == 0) {
        kept.add(was[i], before.otherHashes()[i]);
        i++;
        j++;
      } else if (c < 0) {
        removed.add(was[i], before.otherHashes()[i]);
        i++;
      } else {
        added.add(now[j], next.otherHashes()[j]);
        j++;
      }
    }
    int k = before.replicas();
    long selfHash = before.selfHash();
    for (Target t : targets) {
      long key = before.key().keyOf(t);
      int stayed = kept.beaten(selfHash, self, key, k);
      if (stayed >= k) {
        continue;
      }
      boolean had = stayed + removed.beaten(selfHash, self, key, k - stayed) < k;
      boolean has = stayed + added.beaten(selfHash, self, key, k - stayed) < k;
      if (had != has) {
        (has ? gained : lost).add(t);
      }
    }
  }

  /** Some members, by name and hash, filled once. */
  private static final class Members {
    final String[] names;
    final long[] hashes;
    int size;

    Members(int capacity) {
      names = new String[capacity];
      hashes = new long[capacity];
    }

    void add(String name, long hash) {
      names[size] = name;
      hashes[size++] = hash;
    }

    int beaten(long selfHash, String self, long key, int limit) {
      return OwnershipChanges.beaten(selfHash, self, names, hashes, size, key, limit);
    }
  }
}
