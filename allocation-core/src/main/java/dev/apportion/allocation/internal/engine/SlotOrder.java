package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.LongSort;

/**
 * Sorts slots into {@link TargetOrder} (identity hash as an unsigned number, then the tie-break
 * for equal hashes) by primitive keys: each slot's hash prefix with the slot number in the low
 * bits, so one {@code long[]} sort orders both, then an insertion pass that is linear
 * unless hash prefixes collide. Owns its scratch arrays, reused across calls up to a size.
 */
public final class SlotOrder {
  /** Scratch larger than this many entries is dropped after use. */
  private static final int RETAINED_MAX = 1 << 14;

  /**
   * The most slots {@link #sortInto} takes in one bucket: random hashes put about four in each and
   * rarely more than 25 in any at 100k; more means hashes chosen to collide.
   */
  static final int BUCKET_MAX = 64;

  private long[] keys = new long[16];
  private final LongSort longSort = new LongSort();

  /**
   * Sorts {@code slots[0 .. n)} in place.
   *
   * @param slots the slots
   * @param n how many
   * @param hashes identity hash by slot
   * @param targets target by slot, for the tie-break of equal hashes
   */
  public void sort(int[] slots, int n, long[] hashes, Target[] targets) {
    if (n < 2) {
      return;
    }
    if (keys.length < n) {
      keys = new long[Math.max(n, keys.length * 2)];
    }
    // The slot itself rides in the low bits of its key: no second array to permute.
    int max = 0;
    for (int i = 0; i < n; i++) {
      max = Math.max(max, slots[i]);
    }
    int indexBits = Math.max(1, 32 - Integer.numberOfLeadingZeros(max));
    for (int i = 0; i < n; i++) {
      long prefix = (hashes[slots[i]] >>> indexBits) << indexBits;
      // Flipping the sign bit makes the signed sort an unsigned one.
      keys[i] = (prefix | slots[i]) ^ Long.MIN_VALUE;
    }
    longSort.sort(keys, n);
    long mask = (1L << indexBits) - 1;
    for (int i = 0; i < n; i++) {
      slots[i] = (int) ((keys[i] ^ Long.MIN_VALUE) & mask);
    }
    for (int i = 1; i < n; i++) {
      int s = slots[i];
      int j = i - 1;
      while (j >= 0 && compare(slots[j], s, hashes, targets) > 0) {
        slots[j + 1] = slots[j];
        j--;
      }
      slots[j + 1] = s;
    }
    if (keys.length > RETAINED_MAX) {
      // A large sort (a first placement) is rare: do not keep its scratch for the small ones.
      keys = new long[16];
      longSort.release();
    }
  }

  /**
   * Writes {@code slots[0 .. n)} in {@link TargetOrder} into {@code out}, and their hashes into
   * {@code outHashes}: counted by their hashes' top bits, each written at its bucket's place,
   * then one insertion pass, which moves each slot only within its bucket (about four slots). No
   * scratch but the counts, about a byte a slot. {@code slots} is left as it was.
   *
   * <p>Identity hashes are public (XXH64 of the target's canonical bytes), so a set of targets
   * whose hashes share their top bits can be made on purpose; the insertion pass would then be
   * quadratic. When a bucket holds more than {@value #BUCKET_MAX} slots this writes nothing and
   * returns false, and the caller sorts by {@link #sort}, whose keys are the hashes' top 40-odd
   * bits.
   *
   * @param slots the slots
   * @param n how many
   * @param hashes identity hash by slot
   * @param targets target by slot, for the tie-break of equal hashes
   * @param out where the slots go, at least {@code n} long
   * @param outHashes where their hashes go, at least {@code n} long
   * @return whether the slots were sorted (false: a bucket was too full, nothing written)
   */
  static boolean sortInto(int[] slots, int n, long[] hashes, Target[] targets, int[] out,
      long[] outHashes) {
    int bits = Math.min(24, Math.max(1, 31 - Integer.numberOfLeadingZeros(Math.max(1, n >> 2))));
    int shift = 64 - bits;
    int[] next = new int[(1 << bits) + 1];
    for (int i = 0; i < n; i++) {
      if (++next[(int) (hashes[slots[i]] >>> shift) + 1] > BUCKET_MAX) {
        return false;
      }
    }
    for (int b = 0; b < 1 << bits; b++) {
      next[b + 1] += next[b];
    }
    for (int i = 0; i < n; i++) {
      int slot = slots[i];
      long h = hashes[slot];
      int at = next[(int) (h >>> shift)]++;
      out[at] = slot;
      outHashes[at] = h;
    }
    for (int i = 1; i < n; i++) {
      int slot = out[i];
      long h = outHashes[i];
      int j = i - 1;
      while (j >= 0 && precedes(slot, h, out[j], outHashes[j], targets)) {
        out[j + 1] = out[j];
        outHashes[j + 1] = outHashes[j];
        j--;
      }
      out[j + 1] = slot;
      outHashes[j + 1] = h;
    }
    return true;
  }

  /** Whether slot {@code a} (hash {@code ha}) comes before slot {@code b} in TargetOrder. */
  private static boolean precedes(int a, long ha, int b, long hb, Target[] targets) {
    int c = Long.compareUnsigned(ha, hb);
    return c < 0 || (c == 0 && TargetOrder.compare(targets[a], targets[b]) < 0);
  }

  /** Compares two slots in {@link TargetOrder}; string comparison only for equal hashes. */
  public static int compare(int a, int b, long[] hashes, Target[] targets) {
    int c = Long.compareUnsigned(hashes[a], hashes[b]);
    return c != 0 || a == b ? c : TargetOrder.compare(targets[a], targets[b]);
  }
}
