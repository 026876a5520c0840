package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.internal.collections.IntList;
import java.util.Arrays;

/**
 * What {@link ReplicaPlacement} keeps of one rank r &ge; 1 from change to change: each target's
 * status (no replica, or proposing to the first collector of its tier on the ring), each
 * collector's proposers (a list through two int arrays), those it rejected and those the probe
 * gave it, and the proposers indexed by their walk key so that a joining collector finds the
 * walks it cuts. Writer-only.
 */
final class RankState {
  static final byte NONE = 0;
  static final byte PROPOSED = 1;
  private static final int BUCKET_BITS = 14;
  private static final int BUCKETS = 1 << BUCKET_BITS;

  // By target.
  final byte[] status;
  /** The collector a target proposes to. */
  final int[] at;
  /** The walk's key and, when proposing, the ring point the walk stopped at. */
  final long[] key;
  final long[] point;
  private final int[] next;
  private final int[] prev;
  private final int[] bucketNext;
  private final int[] bucketPrev;
  private final int[] bucketHead = new int[BUCKETS];
  /** The largest distance on the ring from a proposer's key to its point, never lowered. */
  long maxSpan;

  // By collector id.
  int[] head = new int[0];
  int[] proposed = new int[0];
  long[] proposedCost = new long[0];
  int[] rejectedCount = new int[0];
  long[] rejectedCost = new long[0];
  int[] probed = new int[0];
  long[] probedCost = new long[0];
  IntList[] rejected = new IntList[0];
  /** Whether a collector is in {@link #rejecting}. */
  boolean[] listed = new boolean[0];
  /** Collectors that rejected some proposer (may list some that no longer do; check rejected). */
  final IntList rejecting = new IntList();

  /** The targets the probe placed in the last change, and where. */
  final IntList probedTargets = new IntList();
  final IntList probedOwners = new IntList();

  RankState(int targets) {
    status = new byte[targets];
    at = new int[targets];
    key = new long[targets];
    point = new long[targets];
    next = new int[targets];
    prev = new int[targets];
    bucketNext = new int[targets];
    bucketPrev = new int[targets];
    Arrays.fill(bucketHead, -1);
  }

  /** Makes the by-collector arrays hold ids below {@code limit}. */
  void ensureCollectors(int limit) {
    if (head.length >= limit) {
      return;
    }
    int was = head.length;
    head = Arrays.copyOf(head, limit);
    Arrays.fill(head, was, limit, -1);
    proposed = Arrays.copyOf(proposed, limit);
    proposedCost = Arrays.copyOf(proposedCost, limit);
    rejectedCount = Arrays.copyOf(rejectedCount, limit);
    rejectedCost = Arrays.copyOf(rejectedCost, limit);
    probed = Arrays.copyOf(probed, limit);
    probedCost = Arrays.copyOf(probedCost, limit);
    rejected = Arrays.copyOf(rejected, limit);
    listed = Arrays.copyOf(listed, limit);
  }

  /** The replicas of this rank collector {@code c} holds. */
  int count(int c) {
    return proposed[c] - rejectedCount[c] + probed[c];
  }

  /** Their cost. */
  long cost(int c) {
    return proposedCost[c] - rejectedCost[c] + probedCost[c];
  }

  void addProposal(int i, int c, long walkPoint, long cost) {
    status[i] = PROPOSED;
    at[i] = c;
    point[i] = walkPoint;
    int h = head[c];
    next[i] = h;
    prev[i] = -1;
    if (h >= 0) {
      prev[h] = i;
    }
    head[c] = i;
    proposed[c]++;
    proposedCost[c] += cost;
    int b = bucket(key[i]);
    int bh = bucketHead[b];
    bucketNext[i] = bh;
    bucketPrev[i] = -1;
    if (bh >= 0) {
      bucketPrev[bh] = i;
    }
    bucketHead[b] = i;
    long span = walkPoint - key[i];
    if (Long.compareUnsigned(span, maxSpan) > 0) {
      maxSpan = span;
    }
  }

  /** Takes target {@code i}'s contribution away; returns the collector it was on, or -1. */
  int remove(int i, long cost) {
    byte s = status[i];
    status[i] = NONE;
    if (s == NONE) {
      return -1;
    }
    int c = at[i];
    if (prev[i] >= 0) {
      next[prev[i]] = next[i];
    } else {
      head[c] = next[i];
    }
    if (next[i] >= 0) {
      prev[next[i]] = prev[i];
    }
    proposed[c]--;
    proposedCost[c] -= cost;
    if (bucketPrev[i] >= 0) {
      bucketNext[bucketPrev[i]] = bucketNext[i];
    } else {
      bucketHead[bucket(key[i])] = bucketNext[i];
    }
    if (bucketNext[i] >= 0) {
      bucketPrev[bucketNext[i]] = bucketPrev[i];
    }
    return c;
  }

  /** Adds the proposers of collector {@code c} to {@code out}. */
  void proposersOf(int c, IntList out) {
    for (int i = head[c]; i >= 0; i = next[i]) {
      out.add(i);
    }
  }

  /** Forgets what collector {@code c} rejected. */
  void clearRejected(int c) {
    if (rejected[c] != null) {
      rejected[c].clear();
    }
    rejectedCount[c] = 0;
    rejectedCost[c] = 0;
  }

  void reject(int c, int i, long cost) {
    if (rejected[c] == null) {
      rejected[c] = new IntList();
    }
    if (!listed[c]) {
      listed[c] = true;
      rejecting.add(c);
    }
    rejected[c].add(i);
    rejectedCount[c]++;
    rejectedCost[c] += cost;
  }

  /**
   * Adds to {@code out} the proposers whose walk from their key to their point passes {@code p}:
   * a collector with a point there may now be the first of their tier.
   */
  void walksThrough(long p, IntList out) {
    int to = bucket(p);
    int b = Long.compareUnsigned(maxSpan, 1L << 62) >= 0 ? (to + 1) & (BUCKETS - 1)
        : bucket(p - maxSpan);
    for (int seen = 0; seen < BUCKETS; seen++) {
      for (int i = bucketHead[b]; i >= 0; i = bucketNext[i]) {
        if (Long.compareUnsigned(p - key[i], point[i] - key[i]) <= 0) {
          out.add(i);
        }
      }
      if (b == to) {
        return;
      }
      b = (b + 1) & (BUCKETS - 1);
    }
  }

  /** A key's bucket: its top bits, in the keys' signed order. */
  private static int bucket(long key) {
    return (int) ((key ^ Long.MIN_VALUE) >>> (64 - BUCKET_BITS));
  }
}
