package dev.apportion.allocation.internal.chash;

import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.engine.Assignment;
import java.util.Arrays;

/**
 * {@link IncrementalMatching}'s kept round-1 keys: by member id, the sorted round-1 keys of the
 * targets on its arcs, kept from the last time it was over-full, valid while its generation is
 * the current one. A collector change moves every cap a little and re-runs round 1 for the
 * collectors over-full before or after; they take their keys from here instead of searching the
 * ring and the view for each of their hundreds of arcs. The neighbours of the tokens that came or
 * went gain or lose the targets of those tokens' arcs, whose keys are inserted into or taken out
 * of their lists in place ({@link #insert}, {@link #remove}). The keys hold view positions, which
 * a change of the view's targets moves: {@link #carry} maps them to the new ones. Writer-thread
 * only.
 */
final class KeptArcKeys {
  private long[][] arcKeys = new long[0][];
  private int[] arcKeysCount = new int[0];
  private int[] arcKeysGen = new int[0];
  /**
   * Moves when the kept key lists cannot follow a change (the key widths change, or hashes
   * collide): every kept key list is stale. A change of the view's targets otherwise carries
   * them over ({@link #carry}).
   */
  private int viewGen = 1;
  /** The members whose keys the last match from scratch gave ({@link #round1}). */
  private final IntList round1Ids = new IntList();
  /** Keys inserted or removed in place since {@link #resetEdited}: reported at trace level. */
  private int edited;

  /** Forgets every list. */
  void forgetAll() {
    viewGen++;
    round1Ids.clear();
  }

  /**
   * Makes the lists {@link #round1} kept valid, every other one stale: the match from scratch is
   * one the matching continues. A list counts only when it holds as many keys as its member is
   * offered.
   *
   * @param offered by member id, the targets offered to it in round 1
   */
  void keepRound1(int[] offered) {
    viewGen++;
    for (int i = 0; i < round1Ids.size(); i++) {
      int id = round1Ids.get(i);
      if (arcKeysCount[id] == offered[id]) {
        arcKeysGen[id] = viewGen;
      }
    }
    round1Ids.clear();
  }

  /** How many keys member {@code id}'s list holds. */
  int count(int id) {
    return arcKeysCount[id];
  }

  /** Keys edited in place since the last {@link #resetEdited}. */
  int edited() {
    return edited;
  }

  void resetEdited() {
    edited = 0;
  }

  /**
   * Keeps round 1's sorted keys of a match from scratch, {@code keys[0 .. k)}: the proposals to
   * the members offered more than their cap, grouped by member (the id is the key's top bits).
   * Kept invalid until {@link #keepRound1} says the match is one the matching continues.
   */
  void round1(long[] keys, int k, int idBitsOfKeys) {
    round1Ids.clear();
    int shift = 63 - idBitsOfKeys;
    int from = 0;
    while (from < k) {
      int id = (int) (keys[from] >>> shift);
      int to = from + 1;
      while (to < k && (int) (keys[to] >>> shift) == id) {
        to++;
      }
      keep(id, keys, from, to - from);
      arcKeysGen[id] = 0;
      round1Ids.add(id);
      from = to;
    }
  }

  /**
   * Carries the kept lists over a change of the view's targets: each valid list loses the keys
   * of the targets that left and has the others' positions moved to where they are now (a
   * monotone map, so the lists stay sorted); the targets that came are added to their owners'
   * lists as they are offered. Forgets every list instead when the keys' position width changes
   * or two targets share a hash (their order in the view is then not the hashes' alone).
   *
   * @param came the slots new to the view (in it now)
   * @param gone the slots that left it (their hashes still readable)
   * @param assignment the view after the change
   * @param n its size
   * @param indexBits the width of the keys' view positions
   * @return how many kept keys were carried, or -1 when none was (nothing changed, or every
   *     list was forgotten)
   */
  long carry(IntList came, IntList gone, Assignment assignment, int n, int indexBits) {
    if (came.isEmpty() && gone.isEmpty()) {
      return -1;
    }
    int before = n - came.size() + gone.size();
    if (BoundedMatching.indexBits(n) != indexBits || before <= 0) {
      viewGen++;
      return -1;
    }
    // The new positions of the targets that came, ascending.
    int[] cameAt = new int[came.size()];
    for (int j = 0; j < came.size(); j++) {
      long h = assignment.hash(came.get(j));
      int i = ViewSearch.firstAbove(assignment, n, h, true);
      if (i >= n || assignment.hashAt(i) != h
          || (i + 1 < n && assignment.hashAt(i + 1) == h)
          || (i > 0 && assignment.hashAt(i - 1) == h)) {
        viewGen++;
        return -1;
      }
      cameAt[j] = i;
    }
    Arrays.sort(cameAt);
    // The old positions of the targets that left: the targets that stayed below their hash,
    // plus those that left below it.
    long[] goneHashes = new long[gone.size()];
    for (int j = 0; j < gone.size(); j++) {
      goneHashes[j] = assignment.hash(gone.get(j)) ^ Long.MIN_VALUE; // unsigned order
    }
    Arrays.sort(goneHashes);
    int[] goneAt = new int[gone.size()];
    for (int j = 0; j < gone.size(); j++) {
      long h = goneHashes[j] ^ Long.MIN_VALUE;
      if (j > 0 && goneHashes[j - 1] == goneHashes[j]) {
        viewGen++;
        return -1;
      }
      int i = ViewSearch.firstAbove(assignment, n, h, true);
      if (i < n && assignment.hashAt(i) == h) {
        viewGen++;
        return -1;
      }
      int cameBelow = lowerBound(cameAt, i);
      goneAt[j] = i - cameBelow + j;
    }
    // A target that stayed, at old position p with d of the departed below it, is the
    // (p - d)-th that stayed; the j-th arrival came in after cameAt[j] - j of those.
    for (int j = 0; j < cameAt.length; j++) {
      cameAt[j] -= j;
    }
    long kept = 0;
    for (int id = 0; id < arcKeysGen.length; id++) {
      if (arcKeysGen[id] == viewGen) {
        kept += arcKeysCount[id];
      }
    }
    // Few kept keys for the view (a change after which few collectors are over-full): two
    // searches each; many: one walk over the old positions that maps each to its new one.
    int steps = 2 + 32 - Integer.numberOfLeadingZeros(Math.max(goneAt.length, cameAt.length));
    int[] map = null;
    if (kept * steps > before) {
      map = new int[before];
      int g = 0;
      int c = 0;
      int stayed = 0;
      for (int p = 0; p < before; p++) {
        if (g < goneAt.length && goneAt[g] == p) {
          map[p] = -1;
          g++;
          continue;
        }
        while (c < cameAt.length && cameAt[c] <= stayed) {
          c++;
        }
        map[p] = stayed++ + c;
      }
    }
    long indexMask = (1L << indexBits) - 1;
    for (int id = 0; id < arcKeysGen.length; id++) {
      if (arcKeysGen[id] != viewGen) {
        continue;
      }
      long[] keys = arcKeys[id];
      int count = arcKeysCount[id];
      int w = 0;
      for (int k = 0; k < count; k++) {
        long key = keys[k];
        int p = (int) (key & indexMask);
        int to;
        if (map != null) {
          to = map[p];
        } else {
          int below = lowerBound(goneAt, p);
          if (below < goneAt.length && goneAt[below] == p) {
            to = -1;
          } else {
            int stayed = p - below;
            to = stayed + upperBound(cameAt, stayed);
          }
        }
        if (to >= 0) {
          keys[w++] = (key & ~indexMask) | to;
        }
      }
      arcKeysCount[id] = w;
    }
    return kept;
  }

  /** How many of {@code sorted}'s values are at or below {@code x}. */
  private static int upperBound(int[] sorted, int x) {
    return lowerBound(sorted, x + 1);
  }

  /** How many of {@code sorted}'s values are below {@code x}. */
  private static int lowerBound(int[] sorted, int x) {
    int lo = 0;
    int hi = sorted.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (sorted[mid] < x) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** Forgets the kept keys of member {@code id}: the targets on its arcs changed. */
  void forget(int id) {
    if (id < arcKeysGen.length) {
      arcKeysGen[id] = 0;
    }
  }

  /** Member {@code id}'s kept keys when valid and as many as it is offered, else null. */
  long[] keys(int id, int offered) {
    if (id < arcKeysGen.length && arcKeysGen[id] == viewGen && arcKeysCount[id] == offered) {
      return arcKeys[id];
    }
    return null;
  }

  /**
   * Adds {@code key} to member {@code id}'s kept keys, valid before, in order; the caller
   * counts the target offered to it, which keeps them valid.
   */
  void insert(int id, long key) {
    long[] kept = arcKeys[id];
    int count = arcKeysCount[id];
    if (count == kept.length) {
      kept = Arrays.copyOf(kept, count + (count >> 1) + 4);
      arcKeys[id] = kept;
    }
    int at = Arrays.binarySearch(kept, 0, count, key);
    at = at < 0 ? -at - 1 : at;
    System.arraycopy(kept, at, kept, at + 1, count - at);
    kept[at] = key;
    arcKeysCount[id] = count + 1;
    edited++;
  }

  /**
   * Takes the key of view position {@code i} out of member {@code id}'s kept keys, valid before;
   * the caller takes the target off its count, which keeps them valid. Forgets them if none is
   * found (which the state being right excludes).
   */
  void remove(int id, int i, int indexBits) {
    long[] kept = arcKeys[id];
    int count = arcKeysCount[id];
    long indexMask = (1L << indexBits) - 1;
    for (int p = 0; p < count; p++) {
      if ((kept[p] & indexMask) == i) {
        System.arraycopy(kept, p + 1, kept, p, count - p - 1);
        arcKeysCount[id] = count - 1;
        edited++;
        return;
      }
    }
    forget(id);
  }

  /** Keeps {@code sorted[from .. from + count)} as member {@code id}'s keys; returns them. */
  long[] keep(int id, long[] sorted, int from, int count) {
    if (arcKeysGen.length <= id) {
      int size = Math.max(id + 1, 2 * arcKeysGen.length);
      arcKeys = Arrays.copyOf(arcKeys, size);
      arcKeysCount = Arrays.copyOf(arcKeysCount, size);
      arcKeysGen = Arrays.copyOf(arcKeysGen, size);
    }
    long[] kept = arcKeys[id];
    if (kept == null || kept.length < count || kept.length > 4 * count + 16) {
      kept = new long[count + (count >> 3) + 4];
      arcKeys[id] = kept;
    }
    System.arraycopy(sorted, from, kept, 0, count);
    arcKeysCount[id] = count;
    arcKeysGen[id] = viewGen;
    return kept;
  }
}
