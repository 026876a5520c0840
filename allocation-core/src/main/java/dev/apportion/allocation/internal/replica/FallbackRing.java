package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.ring.HashRings;
import java.util.Arrays;

/**
 * Where a replica whose rank's choice does not stand looks next: a consistent-hash ring of the
 * collectors (points in proportion to capacity), walked clockwise from the replica's key. A
 * collector that leaves takes only the replicas whose walk met it first; one that joins takes
 * only those whose walk now meets it first. A bucket index over the points' top bits makes a
 * lookup a few array reads. Updated in place from one topology to the next by keeping the points
 * of the collectors that stay and merging in those of the ones that join. Not thread-safe.
 */
final class FallbackRing {
  /** Points of a collector of capacity 1. */
  static final int POINTS = 16;
  /** The most points of one collector, whatever its capacity. */
  static final int MAX_POINTS = 16 * POINTS;
  private static final long POINT_GAMMA = 0x9E3779B97F4A7C15L;
  private static final int BUCKET_BITS = 14;

  private Topology topology = Topology.EMPTY;
  private long[] points = new long[0];
  private int[] owners = new int[0];
  private final int[] buckets = new int[(1 << BUCKET_BITS) + 1];

  /** The ring's points now: sorted (signed), each with its collector's id in the topology. */
  int size() {
    return points.length;
  }

  int owner(int at) {
    return owners[at];
  }

  /** Makes the ring that of {@code next}, keeping the points of the collectors that stay. */
  void update(Topology next) {
    if (next == topology) {
      return;
    }
    Topology old = topology;
    int[] map = new int[old.size()];
    boolean[] stays = new boolean[next.size()];
    for (int c = 0; c < map.length; c++) {
      int to = next.id(old.name(c));
      map[c] = to >= 0 && old.capacity(c) == next.capacity(to) ? to : -1;
      if (map[c] >= 0) {
        stays[map[c]] = true;
      }
    }
    int kept = 0;
    long[] keptPoints = new long[points.length];
    int[] keptOwners = new int[points.length];
    for (int i = 0; i < points.length; i++) {
      int to = map[owners[i]];
      if (to >= 0) {
        keptPoints[kept] = points[i];
        keptOwners[kept++] = to;
      }
    }
    int addedCount = 0;
    for (int c = 0; c < next.size(); c++) {
      if (!stays[c]) {
        addedCount += pointsOf(next, c);
      }
    }
    long[] addedPoints = new long[addedCount];
    int[] addedOwners = new int[addedCount];
    int a = 0;
    for (int c = 0; c < next.size(); c++) {
      if (!stays[c]) {
        for (int v = 0, n = pointsOf(next, c); v < n; v++) {
          addedPoints[a] = point(next.hash(c), v);
          addedOwners[a++] = c;
        }
      }
    }
    sort(addedPoints, addedOwners, next);
    points = new long[kept + addedCount];
    owners = new int[kept + addedCount];
    int i = 0;
    int j = 0;
    int o = 0;
    while (i < kept || j < addedCount) {
      boolean fromKept = j == addedCount || (i < kept
          && before(keptPoints[i], keptOwners[i], addedPoints[j], addedOwners[j], next));
      if (fromKept) {
        points[o] = keptPoints[i];
        owners[o++] = keptOwners[i++];
      } else {
        points[o] = addedPoints[j];
        owners[o++] = addedOwners[j++];
      }
    }
    topology = next;
    index();
  }

  /** The index of the first point at or after {@code key}, wrapping; -1 for an empty ring. */
  int lookup(long key) {
    if (points.length == 0) {
      return -1;
    }
    int at = buckets[bucket(key)];
    while (at < points.length && points[at] < key) {
      at++;
    }
    return at == points.length ? 0 : at;
  }

  private void index() {
    int at = 0;
    for (int b = 0; b < buckets.length - 1; b++) {
      while (at < points.length && bucket(points[at]) < b) {
        at++;
      }
      buckets[b] = at;
    }
    buckets[buckets.length - 1] = points.length;
  }

  /** The point's bucket: its top bits, in the points' signed order. */
  private static int bucket(long point) {
    return (int) (point >>> (64 - BUCKET_BITS)) ^ (1 << (BUCKET_BITS - 1));
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

  /** Sorts the few points of joining collectors (insertion sort on parallel arrays). */
  private static void sort(long[] ps, int[] cs, Topology t) {
    if (ps.length > 256) {
      sortLarge(ps, cs, t);
      return;
    }
    for (int i = 1; i < ps.length; i++) {
      long p = ps[i];
      int c = cs[i];
      int j = i - 1;
      while (j >= 0 && before(p, c, ps[j], cs[j], t)) {
        ps[j + 1] = ps[j];
        cs[j + 1] = cs[j];
        j--;
      }
      ps[j + 1] = p;
      cs[j + 1] = c;
    }
  }

  /** Sorts many points (a first ring, many joiners) through an index sort. */
  private static void sortLarge(long[] ps, int[] cs, Topology t) {
    Integer[] order = new Integer[ps.length];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (x, y) -> ps[x] != ps[y] ? Long.compare(ps[x], ps[y])
        : t.name(cs[x]).compareTo(t.name(cs[y])));
    long[] p2 = new long[ps.length];
    int[] c2 = new int[cs.length];
    for (int i = 0; i < order.length; i++) {
      p2[i] = ps[order[i]];
      c2[i] = cs[order[i]];
    }
    System.arraycopy(p2, 0, ps, 0, ps.length);
    System.arraycopy(c2, 0, cs, 0, cs.length);
  }
}
