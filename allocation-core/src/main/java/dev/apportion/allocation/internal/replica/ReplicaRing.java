package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.ring.HashRings;
import java.util.Arrays;

/**
 * The ring further replicas walk: a consistent-hash ring of the collectors (points in proportion
 * to capacity), walked clockwise from a replica's key. A collector that leaves takes only the
 * replicas whose walk met it first; one that joins takes only those whose walk now meets it
 * first.
 *
 * <p>The points are kept in buckets by their top bits, each bucket a small sorted array, so a
 * collector that joins or leaves touches only the buckets of its own points (about {@value
 * #POINTS} of {@value #BUCKET_BITS}-bit buckets), never the whole ring; and a lookup is one
 * bucket's scan. A place on the ring is a {@code long}: the bucket in the high half, the index in
 * it in the low half. Not thread-safe.
 */
final class ReplicaRing {
  /** Points of a collector of capacity 1: enough that arcs, hence proposals, vary by ~9%. */
  static final int POINTS = 128;
  /** The most points of one collector, whatever its capacity. */
  static final int MAX_POINTS = 16 * POINTS;
  private static final long POINT_GAMMA = 0x9E3779B97F4A7C15L;
  private static final int BUCKET_BITS = 15;
  private static final int BUCKETS = 1 << BUCKET_BITS;

  private Topology topology = Topology.EMPTY;
  private final long[][] points = new long[BUCKETS][];
  private final int[][] owners = new int[BUCKETS][];
  private final int[] counts = new int[BUCKETS];
  private int size;

  /** How many points the ring has. */
  int size() {
    return size;
  }

  /** The collector owning the point at {@code at}. */
  int owner(long at) {
    return owners[(int) (at >>> 32)][(int) at];
  }

  /** The point at {@code at}. */
  long point(long at) {
    return points[(int) (at >>> 32)][(int) at];
  }

  /** The points collector {@code c} of {@code t} has on the ring. */
  static long[] ringPoints(Topology t, int c) {
    long[] ps = new long[pointsOf(t, c)];
    for (int v = 0; v < ps.length; v++) {
      ps[v] = point(t.hash(c), v);
    }
    return ps;
  }

  /**
   * Makes the ring that of {@code next}: the points of the collectors that left (or changed
   * capacity) are taken out of their buckets, those of the ones that joined put in; every point
   * again when {@code next} numbers the collectors afresh.
   */
  void update(Topology next) {
    if (next == topology) {
      return;
    }
    Topology old = topology;
    if (old.generation() != next.generation()) {
      Arrays.fill(counts, 0);
      size = 0;
      for (int c : next.live()) {
        insertAll(next, c);
      }
    } else {
      for (int c : old.live()) {
        if (!next.present(c) || old.capacity(c) != next.capacity(c)) {
          removeAll(old, c);
        }
      }
      for (int c : next.live()) {
        if (!old.present(c) || old.capacity(c) != next.capacity(c)) {
          insertAll(next, c);
        }
      }
    }
    topology = next;
  }

  private void insertAll(Topology t, int c) {
    for (long p : ringPoints(t, c)) {
      int b = bucket(p);
      int n = counts[b];
      if (points[b] == null || points[b].length == n) {
        int grown = Math.max(4, n * 2);
        points[b] = points[b] == null ? new long[grown] : Arrays.copyOf(points[b], grown);
        owners[b] = owners[b] == null ? new int[grown] : Arrays.copyOf(owners[b], grown);
      }
      int j = n;
      while (j > 0 && before(p, c, points[b][j - 1], owners[b][j - 1], t)) {
        points[b][j] = points[b][j - 1];
        owners[b][j] = owners[b][j - 1];
        j--;
      }
      points[b][j] = p;
      owners[b][j] = c;
      counts[b] = n + 1;
      size++;
    }
  }

  private void removeAll(Topology t, int c) {
    for (long p : ringPoints(t, c)) {
      int b = bucket(p);
      int n = counts[b];
      for (int j = 0; j < n; j++) {
        if (owners[b][j] == c && points[b][j] == p) {
          System.arraycopy(points[b], j + 1, points[b], j, n - j - 1);
          System.arraycopy(owners[b], j + 1, owners[b], j, n - j - 1);
          counts[b] = n - 1;
          size--;
          break;
        }
      }
    }
  }

  /** The place of the first point at or after {@code key}, wrapping; -1 for an empty ring. */
  long lookup(long key) {
    if (size == 0) {
      return -1;
    }
    int b = bucket(key);
    int n = counts[b];
    long[] ps = points[b];
    for (int j = 0; j < n; j++) {
      if (ps[j] >= key) {
        return ((long) b << 32) | j;
      }
    }
    return firstFrom(b + 1);
  }

  /** The place after {@code at}, wrapping. */
  long next(long at) {
    int b = (int) (at >>> 32);
    int j = (int) at + 1;
    return j < counts[b] ? ((long) b << 32) | j : firstFrom(b + 1);
  }

  /** The first point of the first non-empty bucket from {@code b} on, wrapping. */
  private long firstFrom(int b) {
    for (int seen = 0; seen < BUCKETS; seen++, b++) {
      b &= BUCKETS - 1;
      if (counts[b] > 0) {
        return (long) b << 32;
      }
    }
    return -1;
  }

  /** The point's bucket: its top bits, in the points' signed order. */
  private static int bucket(long point) {
    return (int) ((point ^ Long.MIN_VALUE) >>> (64 - BUCKET_BITS));
  }

  private static int pointsOf(Topology t, int c) {
    return (int) Math.max(1, Math.min(MAX_POINTS, Math.round(POINTS * t.capacity(c))));
  }

  private static long point(long memberHash, int v) {
    return HashRings.mix(memberHash + (v + 1) * POINT_GAMMA);
  }

  /** Ring order: by point, then (equal points, about never) by collector name. */
  private static boolean before(long p, int c, long q, int d, Topology t) {
    return p < q || (p == q && t.name(c).compareTo(t.name(d)) < 0);
  }
}
