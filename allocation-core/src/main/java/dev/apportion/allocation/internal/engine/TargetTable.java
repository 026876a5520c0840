package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.IntList;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * An immutable map from target to owner that a change copies only in part: the targets are
 * split into {@code 2^bits} shards by the top bits of their identity hash, each shard a pair of
 * arrays sorted in {@link TargetOrder}. Applying a change rebuilds only the shards it touches,
 * so a change of {@code k} targets costs about {@code k * shardSize} copies, not {@code n}. The
 * shard count follows the size (about 16 targets a shard), re-chosen when the size drifts by 4x.
 * Iteration is in {@link TargetOrder}.
 */
final class TargetTable implements Iterable<Target> {
  private static final Target[] NO_TARGETS = new Target[0];
  private static final String[] NO_OWNERS = new String[0];
  private static final byte[] NO_KEYS = new byte[0];
  static final TargetTable EMPTY = new TargetTable(0, new Shard[] {new Shard(NO_TARGETS,
      NO_OWNERS, NO_KEYS)}, 0);

  /** Marks a removal in {@link #apply}. */
  static final String REMOVE = new String("<removed>");

  /**
   * One shard: its targets in {@link TargetOrder}, their owners, and each target's <em>key</em>:
   * the 8 bits of its identity hash after the shard's prefix, unsigned, so ascending as well. A
   * search compares keys, and reads a target only where its key equals the one sought (about one
   * target for a hit, about one in ten searches for a miss, in shards of 16 to 32), not the four
   * or five scattered targets a binary search by {@link TargetOrder} reads; a byte a target.
   */
  private static final class Shard {
    final Target[] targets;
    final String[] owners;
    final byte[] keys;

    Shard(Target[] targets, String[] owners, byte[] keys) {
      this.targets = targets;
      this.owners = owners;
      this.keys = keys;
    }

    /**
     * The index of {@code t} (whose key is {@code key}) at or after {@code from}, or
     * {@code -(insertion point) - 1} when it is not there (as
     * {@link java.util.Arrays#binarySearch}).
     */
    @SuppressWarnings("ReferenceEquality") // the same instance first, then an equal one
    int search(Target t, int key, int from) {
      int lo = from;
      int hi = keys.length;
      // The first key at or above the one sought.
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if ((keys[mid] & 0xFF) < key) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      // Among the targets with that key (rarely more than one), by TargetOrder.
      for (int i = lo; i < keys.length && (keys[i] & 0xFF) == key; i++) {
        Target x = targets[i];
        int c = x == t ? 0 : TargetOrder.compare(x, t);
        if (c == 0) {
          return i;
        }
        if (c > 0) {
          return -i - 1;
        }
        lo = i + 1;
      }
      return -lo - 1;
    }
  }

  /** The key of a hash in a table of {@code bits}: the 8 bits after the shard's prefix. */
  private static int keyOf(long hash, int bits) {
    return (int) (hash << bits >>> 56);
  }

  private final int bits;
  private final Shard[] shards;
  private final int size;

  private TargetTable(int bits, Shard[] shards, int size) {
    this.bits = bits;
    this.shards = shards;
    this.size = size;
  }

  int size() {
    return size;
  }

  private int shardOf(Target t) {
    return bits == 0 ? 0 : (int) (t.hash() >>> (64 - bits));
  }

  /** The stored instance equal to {@code t}, or null. */
  Target instance(Target t) {
    Shard s = shards[shardOf(t)];
    int i = s.search(t, keyOf(t.hash(), bits), 0);
    return i < 0 ? null : s.targets[i];
  }

  /** The owner of {@code t}, or null when unknown or unassigned. */
  String owner(Target t) {
    Shard s = shards[shardOf(t)];
    int i = s.search(t, keyOf(t.hash(), bits), 0);
    return i < 0 ? null : s.owners[i];
  }

  /**
   * A table with changes applied: {@code targets[i]} (the instance to store) gets
   * {@code owners[i]} (null for unassigned, {@link #REMOVE} to drop it). The arrays are sorted in
   * {@link TargetOrder} and hold each target once.
   */
  TargetTable apply(Target[] targets, String[] owners, int count) {
    if (count == 0) {
      return this;
    }
    int grown = idealBits(size + count);
    if (grown - bits >= 2) {
      // A change much larger than the table (a first placement): reshard first, so the change
      // is merged into small shards instead of one huge shard that is resharded after.
      return reshard(grown).apply(targets, owners, count);
    }
    Shard[] next = shards.clone();
    int newSize = size;
    int[] where = new int[count];
    int i = 0;
    while (i < count) {
      int shard = shardOf(targets[i]);
      int j = i;
      while (j < count && shardOf(targets[j]) == shard) {
        j++;
      }
      Shard old = shards[shard];
      Shard merged = merge(old, targets, owners, i, j, where, bits);
      newSize += merged.targets.length - old.targets.length;
      next[shard] = merged;
      i = j;
    }
    TargetTable table = new TargetTable(bits, next, newSize);
    int ideal = idealBits(newSize);
    return Math.abs(ideal - bits) >= 2 ? table.reshard(ideal) : table;
  }

  /**
   * The table of every target {@code slots} knows, with its owner, built at its size: the known
   * targets are already in {@link TargetOrder}, so each shard is a run of that order. For a first
   * placement or a change of most owners, instead of {@link #apply}'s merge.
   *
   * @param slots the state, its owners current
   * @return the table
   */
  static TargetTable of(Slots slots) {
    IntList order = slots.order();
    int n = order.size();
    if (n == 0) {
      return EMPTY;
    }
    int bits = idealBits(n);
    int count = 1 << bits;
    long[] hashes = slots.hashes();
    int[] sizes = new int[count];
    for (int i = 0; i < n; i++) {
      sizes[bits == 0 ? 0 : (int) (hashes[order.get(i)] >>> (64 - bits))]++;
    }
    Shard[] shards = new Shard[count];
    int i = 0;
    for (int b = 0; b < count; b++) {
      int size = sizes[b];
      Target[] targets = size == 0 ? NO_TARGETS : new Target[size];
      String[] owners = size == 0 ? NO_OWNERS : new String[size];
      byte[] keys = size == 0 ? NO_KEYS : new byte[size];
      for (int k = 0; k < size; k++) {
        int s = order.get(i++);
        if (bits != 0 && (int) (hashes[s] >>> (64 - bits)) != b) {
          throw new IllegalStateException("the known targets are not in identity-hash order");
        }
        targets[k] = slots.target(s);
        keys[k] = (byte) keyOf(hashes[s], bits);
        int owner = slots.ownerId(s);
        owners[k] = owner < 0 ? null : slots.member(owner).name();
      }
      shards[b] = new Shard(targets, owners, keys);
    }
    return new TargetTable(bits, shards, n);
  }

  /**
   * {@code old} with the changes {@code targets[i .. j)} applied (see {@link #apply}). A method of
   * its own, called once per changed shard
   * ({@link dev.apportion.allocation.internal.collections.Passes}).
   */
  // REMOVE is a sentinel compared by identity, on purpose.
  @SuppressWarnings("ReferenceEquality")
  private static Shard merge(Shard old, Target[] targets, String[] owners, int i, int j,
      int[] where, int bits) {
    // Each changed target's place in the shard, by binary search from the previous one's (the
    // changes are in order): the untouched targets are copied in bulk and never read, so a
    // change costs a few reads of the shard's targets, not one per target in it.
    int length = old.targets.length;
    int from = 0;
    for (int c = i; c < j; c++) {
      int at = old.search(targets[c], keyOf(targets[c].hash(), bits), from);
      boolean existed = at >= 0;
      where[c] = at;
      from = existed ? at + 1 : -at - 1;
      if (owners[c] == REMOVE) {
        length -= existed ? 1 : 0;
      } else {
        length += existed ? 0 : 1;
      }
    }
    Target[] outT = new Target[length];
    String[] outO = new String[length];
    byte[] outK = new byte[length];
    int w = 0;
    int o = 0;
    for (int c = i; c < j; c++) {
      int at = where[c];
      boolean existed = at >= 0;
      int stop = existed ? at : -at - 1;
      System.arraycopy(old.targets, o, outT, w, stop - o);
      System.arraycopy(old.owners, o, outO, w, stop - o);
      System.arraycopy(old.keys, o, outK, w, stop - o);
      w += stop - o;
      o = existed ? stop + 1 : stop;
      if (owners[c] != REMOVE) {
        outT[w] = targets[c];
        outK[w] = (byte) keyOf(targets[c].hash(), bits);
        outO[w++] = owners[c];
      }
    }
    System.arraycopy(old.targets, o, outT, w, old.targets.length - o);
    System.arraycopy(old.owners, o, outO, w, old.owners.length - o);
    System.arraycopy(old.keys, o, outK, w, old.keys.length - o);
    w += old.targets.length - o;
    if (w != length) {
      throw new IllegalStateException("shard size " + w + ", counted " + length);
    }
    return new Shard(outT, outO, outK);
  }

  private static int idealBits(int size) {
    int perShard = 16;
    int shards = Math.max(1, size / perShard);
    return Math.min(20, 31 - Integer.numberOfLeadingZeros(shards));
  }

  private TargetTable reshard(int newBits) {
    int count = 1 << newBits;
    int[] sizes = new int[count];
    for (Shard s : shards) {
      for (Target t : s.targets) {
        sizes[newBits == 0 ? 0 : (int) (t.hash() >>> (64 - newBits))]++;
      }
    }
    Shard[] next = new Shard[count];
    int[] fill = new int[count];
    for (int i = 0; i < count; i++) {
      next[i] = new Shard(new Target[sizes[i]], new String[sizes[i]], new byte[sizes[i]]);
    }
    for (Shard s : shards) {
      for (int k = 0; k < s.targets.length; k++) {
        Target t = s.targets[k];
        long h = t.hash();
        int b = newBits == 0 ? 0 : (int) (h >>> (64 - newBits));
        next[b].targets[fill[b]] = t;
        next[b].keys[fill[b]] = (byte) keyOf(h, newBits);
        next[b].owners[fill[b]++] = s.owners[k];
      }
    }
    return new TargetTable(newBits, next, size);
  }

  @Override
  public Iterator<Target> iterator() {
    return new Iterator<>() {
      int shard;
      int index;

      @Override
      public boolean hasNext() {
        while (shard < shards.length && index >= shards[shard].targets.length) {
          shard++;
          index = 0;
        }
        return shard < shards.length;
      }

      @Override
      public Target next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return shards[shard].targets[index++];
      }
    };
  }
}
