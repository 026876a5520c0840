package dev.apportion.allocation.internal.chash;

import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;

/**
 * The floor phase of {@link ConsistentHashingPlacer}'s weighted placements, run after the
 * {@link BoundedMatching matching rounds} when the bound is two-sided. Caps alone leave a
 * collector whose arcs drew few or light targets far below its share (heavy-tailed costs spread
 * about 25% around it), so each collector below its floor, in name order, extends its arcs
 * clockwise past its own tokens: it takes, nearest first, each target there that fits under its
 * cap and whose collector stays at or above its floor (first only from collectors at or above the
 * middle of their band, about their share), until it reaches its floor. Those targets are the far
 * ends of the next collectors' arcs, the first those would reject. A pure function of the sets
 * and costs like the rest, at the price of more movement than a one-sided bound:
 * {@code docs/strategies.md} ("Cost and capacity") has the figures.
 *
 * <p>Each needy collector's tokens are streams of the targets clockwise past them, up to its next
 * token; a heap merges them nearest first. Linear in the targets and tokens, plus at most
 * {@code 16 n / c + 256} heap steps per collector below its floor in each of the two passes. The
 * streams start where {@link BoundedMatching} recorded them ({@link ViewScratch#position},
 * {@link ViewScratch#firstAfter}); the scratch arrays are kept between calls.
 */
final class FloorPhase {
  private final TokenRing ring;
  private final LoadBounds bounds;
  private final ViewScratch scratch;

  /** By stream (a needy collector's token): the token's ring position. */
  private long[] streamPosition = new long[0];
  /** By stream: the position in the view of its next target, its first, and its arc's length. */
  private int[] streamCursor = new int[0];
  private int[] streamFirst = new int[0];
  private long[] streamLimit = new long[0];
  /** By member id: its streams' range, and the scan's next slot and step. */
  private int[] streamStart = new int[0];
  private int[] streamEnd = new int[0];
  private int[] streamFill = new int[0];
  private int[] streamStep = new int[0];
  /** The merge's heap: distance (top bits) | stream (low 16 bits). */
  private long[] heap = new long[0];
  /** By member id: below its floor; at or above the middle of its band. */
  private boolean[] needy = new boolean[0];
  private boolean[] rich = new boolean[0];

  /**
   * A floor phase over shared parts of the placer.
   *
   * @param ring the ring the matching placed on
   * @param bounds the bounds, with the loads the matching left
   * @param scratch the matching's placement, with the arcs recorded
   */
  FloorPhase(TokenRing ring, LoadBounds bounds, ViewScratch scratch) {
    this.ring = ring;
    this.bounds = bounds;
    this.scratch = scratch;
  }

  /**
   * Lets every member below its floor pull targets onto itself (see the class comment), moving
   * them in {@link ViewScratch#chosen} and in the bounds' loads.
   *
   * @param members the members, more than one
   * @param n how many targets the view holds
   */
  void fill(Members members, int n) {
    int c = members.size();
    int span = ring.idSpan();
    if (needy.length < span) {
      needy = new boolean[span];
      streamStart = new int[span];
      streamEnd = new int[span];
      streamFill = new int[span];
      streamStep = new int[span];
    }
    if (rich.length < span) {
      rich = new boolean[span];
    }
    int needyCount = 0;
    for (int i = 0; i < c; i++) {
      int id = members.get(i).id();
      needy[id] = bounds.load(id) < bounds.floor(id);
      rich[id] = bounds.load(id) >= (bounds.floor(id) + bounds.cap(id)) / 2;
      needyCount += needy[id] ? 1 : 0;
    }
    if (needyCount == 0) {
      return;
    }
    // The needy collectors' tokens, in ring order, with the first target past each: one pass
    // over the ring without a branch (a member has tokensFor(capacity) tokens on it; the other
    // members' tokens all go to one spare slot).
    int streams = 0;
    for (int i = 0; i < c; i++) {
      Member m = members.get(i);
      int id = m.id();
      streamStart[id] = streams;
      streams += needy[id] ? ring.tokensFor(m.capacity()) : 0;
      streamEnd[id] = streams;
    }
    if (streamPosition.length < streams + 1) {
      streamPosition = new long[streams + 1];
      streamCursor = new int[streams + 1];
      streamFirst = new int[streams + 1];
      streamLimit = new long[streams + 1];
    }
    for (int i = 0; i < c; i++) {
      int id = members.get(i).id();
      streamFill[id] = needy[id] ? streamStart[id] : streams;
      streamStep[id] = needy[id] ? 1 : 0;
    }
    int[] firstAfter = scratch.firstAfter;
    for (int t = 0; t < ring.size(); t++) {
      int id = ring.idAt(t);
      int slot = streamFill[id];
      streamPosition[slot] = ring.positionAt(t);
      streamFirst[slot] = firstAfter[t];
      streamFill[id] = slot + streamStep[id];
    }
    for (int i = 0; i < c; i++) {
      int id = members.get(i).id();
      if (needy[id] && streamFill[id] != streamEnd[id]) {
        throw new IllegalStateException("the ring does not hold member " + id + "'s tokens");
      }
    }
    // Each stream ends at the collector's next token (past it are its own targets).
    for (int i = 0; i < c; i++) {
      int id = members.get(i).id();
      if (!needy[id]) {
        continue;
      }
      int from = streamStart[id];
      int to = streamEnd[id];
      for (int s = from; s < to; s++) {
        int nextS = s + 1 < to ? s + 1 : from;
        long a = streamPosition[s];
        long b = streamPosition[nextS];
        streamLimit[s] = nextS == s ? -1L : b - a;
      }
    }
    // First from collectors at or above the middle of their band (a pull then rarely decides
    // whether a later collector may pull), then from any that stays at or above its floor.
    int budget = 16 * (n / c) + 256;
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < c; i++) {
        int y = members.get(i).id();
        if (needy[y] && bounds.load(y) < bounds.floor(y)) {
          pull(y, n, budget, pass == 0);
        }
      }
    }
  }

  /**
   * Collector {@code y} takes, nearest past its tokens first, the targets that fit under its cap
   * and whose collector stays at or above its floor (and, if {@code richOnly}, was at or above
   * the middle of its band before the floor phase), until it reaches its floor or has looked at
   * {@code budget} targets.
   */
  private void pull(int y, int n, int budget, boolean richOnly) {
    long[] position = scratch.position;
    int[] chosen = scratch.chosen;
    long[] cost = scratch.cost;
    long[] distance = scratch.distance;
    int from = streamStart[y];
    int to = streamEnd[y];
    if (heap.length < to - from) {
      heap = new long[to - from];
    }
    int size = 0;
    for (int s = from; s < to; s++) {
      streamCursor[s] = streamFirst[s];
      long delta = position[streamCursor[s]] - streamPosition[s];
      if (Long.compareUnsigned(delta, streamLimit[s]) < 0) {
        size = heapPush(heap, size, (delta >>> 1) | (s - from));
      }
    }
    int pops = 0;
    while (size > 0 && bounds.load(y) < bounds.floor(y) && pops++ < budget) {
      long top = heap[0];
      size = heapPop(heap, size);
      int s = from + (int) (top & 0xFFFF);
      int t = streamCursor[s];
      int d = chosen[t];
      long ct = cost[t];
      if (d != y && distance[t] != -1 && bounds.load(d) - ct >= bounds.floor(d)
          && (!richOnly || rich[d]) && bounds.room(y, ct)) {
        bounds.give(d, ct);
        chosen[t] = y;
        bounds.take(y, ct);
      }
      int nextT = t + 1 == n ? 0 : t + 1;
      streamCursor[s] = nextT;
      long delta = position[nextT] - streamPosition[s];
      // Past the collector's next token, or once round the ring, the stream ends.
      if (Long.compareUnsigned(delta, streamLimit[s]) < 0 && nextT != streamFirst[s]) {
        size = heapPush(heap, size, (delta >>> 1) | (s - from));
      }
    }
  }

  /**
   * Pushes {@code key} on the min-heap {@code h[0 .. size)}.
   *
   * @param h the heap, with room for one more
   * @param size its size
   * @param key the key
   * @return the new size
   */
  static int heapPush(long[] h, int size, long key) {
    int k = size;
    while (k > 0) {
      int parent = (k - 1) >>> 1;
      if (h[parent] <= key) {
        break;
      }
      h[k] = h[parent];
      k = parent;
    }
    h[k] = key;
    return size + 1;
  }

  /**
   * Removes the least key, {@code h[0]}, from the min-heap {@code h[0 .. size)}.
   *
   * @param h the heap, not empty
   * @param size its size
   * @return the new size
   */
  static int heapPop(long[] h, int size) {
    int last = size - 1;
    long key = h[last];
    int k = 0;
    while (true) {
      int child = 2 * k + 1;
      if (child >= last) {
        break;
      }
      if (child + 1 < last && h[child + 1] < h[child]) {
        child++;
      }
      if (h[child] >= key) {
        break;
      }
      h[k] = h[child];
      k = child;
    }
    h[k] = key;
    return last;
  }
}
