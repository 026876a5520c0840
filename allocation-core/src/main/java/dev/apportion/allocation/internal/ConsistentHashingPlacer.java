package dev.apportion.allocation.internal;

import dev.apportion.allocation.spi.AllocatorSpec;
import dev.apportion.allocation.ring.HashRings;
import java.util.Arrays;

/**
 * {@code consistent-hashing}: consistent hashing with bounded loads (Mirrokni, Thorup and
 * Zadimoghaddam, "Consistent Hashing with Bounded Loads", SODA 2018), made a pure function of the
 * two sets and built so that one change disturbs little.
 *
 * <p><b>Design.</b> A ring with {@value #VIRTUAL_NODES} tokens per collector.
 * Each collector has a cap of {@code max(ceil(n / c), floor(loadFactor * n / c + u))}, where
 * {@code u} in {@code [0, 1)} is drawn from the collector's name: the caps are never above
 * {@link AllocatorSpec#boundedLoadCap}, and when {@code n / c} drifts, only the collectors whose
 * {@code u} the drift crosses change their cap, not all of them at once. Placement is a
 * deferred-acceptance matching (Gale and Shapley) in rounds:
 * <ol>
 *   <li>every target proposes to the collector owning its hash on the ring; a collector offered
 *       more than its cap keeps the targets <em>closest to its tokens</em> (the shortest
 *       clockwise distance from the target's hash to the token) and rejects the rest;
 *   <li>each rejected target then proposes along its own probe sequence (fresh hashes of the
 *       target, each looked up on the ring: the "random jumps" of Chen, Coleman and Shrivastava,
 *       AAAI 2021, instead of the clockwise walk), and a collector with room left keeps the
 *       closest of that round's proposals. An overflowing target never displaces one that was
 *       accepted in an earlier round.
 * </ol>
 * After {@value #PROBE_ROUNDS} rounds the few still homeless take the first collector with room
 * clockwise from their hash. Every tie is broken by the targets' identity-hash order, so two
 * allocators given the same sets agree on every target.
 *
 * <p><b>Why this moves little.</b> The clockwise walk of the first design let an overflowing
 * target, processed in hash order, take the room a later target needed on its own arc, so a
 * change anywhere shifted the overflow all along the ring; and a cap that all collectors changed
 * at once (110 to 111 at 100k targets on 1000 to 999 collectors) sent every full collector's
 * overflow back. Here primaries beat overflow; a removed collector's targets land at the far end
 * of their new owners' arcs, so they displace few; an added collector takes the far ends of its
 * successors' arcs, the very targets those collectors rejected when they were full; and a drift
 * of {@code n / c} changes about {@code loadFactor * n / c} caps, spread over the ring, instead
 * of all {@code c}. What remains is inherent to any bounded load that is a pure function of the
 * sets: when a full collector gains or loses a proposer, one target must go or come back.
 * {@code docs/strategies.md} has the figures.
 *
 * <p><b>Cost.</b> Every change re-places all targets: one merge walk of the targets (already in
 * identity-hash order) against the sorted tokens, a radix sort of the proposals to over-full
 * collectors, a few short rounds for the overflow, and one array read per target to compare with
 * the current owner. The tokens are updated incrementally when collectors change. The scratch
 * arrays are kept between calls, sized to the largest placement seen.
 */
final class ConsistentHashingPlacer implements Placer {
  /**
   * Tokens per collector. Twice the rings' default: the arcs' spread adds to the targets' own
   * (Poisson) spread in deciding how many collectors are full, and every full collector costs
   * moves (see the class comment); 8 bytes a token.
   */
  static final int VIRTUAL_NODES = 2 * HashRings.DEFAULT_VIRTUAL_NODES;

  /** Probe rounds before the clockwise fallback. */
  static final int PROBE_ROUNDS = 32;
  private static final int ID_BITS = 20;
  private static final long ID_MASK = (1L << ID_BITS) - 1;
  private static final long POSITION_MASK = ~ID_MASK;
  private static final long GOLDEN = 0x9E3779B97F4A7C15L;
  /** Odd constant for the probe sequence (not the token sequence's). */
  private static final long PROBE_GAMMA = 0xD1B54A32D192ED03L;
  /** Salt for the per-collector rounding offset {@code u}. */
  private static final long CAP_SALT = 0x2545F4914F6CDD1DL;

  private final double loadFactor;
  private final int virtualNodes;
  private final LongSort longSort = new LongSort();

  // The ring: positions (high bits) | member id (low bits), ascending as unsigned numbers.
  private long[] tokens = new long[0];
  /** The member each id's tokens were made for. */
  private Member[] ringIds = new Member[0];
  private Members ringFor;

  // Scratch by member id.
  private Member[] byId = new Member[0];
  private int[] caps = new int[0];
  private int[] counts = new int[0];

  // Scratch by position in the view's identity-hash order.
  private int[] chosen = new int[0];
  private long[] distance = new long[0];
  private long[] keys = new long[0];
  private final IntList pending = new IntList();
  private final IntList next = new IntList();

  ConsistentHashingPlacer(double loadFactor) {
    this(loadFactor, VIRTUAL_NODES);
  }

  /**
   * A placer whose ring has {@code virtualNodes} tokens per collector. Fewer tokens make each
   * collector change cheaper and the arcs less even; for a small set of targets the caps, not
   * the arcs, decide the balance.
   */
  ConsistentHashingPlacer(double loadFactor, int virtualNodes) {
    this.loadFactor = loadFactor;
    this.virtualNodes = virtualNodes;
  }

  @Override
  public void targetsChanged(IntList added, IntList removed, Members members,
      Assignment assignment) {
    if (!members.isEmpty() && (!added.isEmpty() || !removed.isEmpty())) {
      place(members, assignment);
    }
  }

  @Override
  public void collectorsChanged(CollectorSetChange change, Assignment assignment) {
    place(change.after(), assignment);
  }

  /** The cap for {@code n} targets on {@code c} collectors: {@link AllocatorSpec#boundedLoadCap}. */
  static int cap(double loadFactor, int n, int c) {
    return AllocatorSpec.boundedLoadCap(loadFactor, n, c);
  }

  /**
   * One collector's cap: {@code max(ceil(n / c), floor(loadFactor * n / c + u))} with {@code u}
   * drawn from the collector's hash; never above {@link #cap}.
   */
  static int memberCap(double loadFactor, int n, int c, long memberHash) {
    int even = (int) ((n + (long) c - 1) / c);
    double u = (HashRings.mix(memberHash ^ CAP_SALT) >>> 11) * 0x1.0p-53;
    int rounded = (int) Math.floor(loadFactor * n / c - 1e-9 + u);
    return Math.max(even, rounded);
  }

  // Identity, on purpose: a Members is immutable, and a new one means the set changed.
  @SuppressWarnings("ReferenceEquality")
  private void ring(Members members) {
    if (ringFor == members) {
      return;
    }
    int maxId = 0;
    for (int i = 0; i < members.size(); i++) {
      maxId = Math.max(maxId, members.get(i).id());
    }
    if (maxId > ID_MASK) {
      throw new IllegalStateException("member id " + maxId + " does not fit the ring");
    }
    byId = byId.length > maxId ? byId : new Member[maxId + 1];
    Arrays.fill(byId, null);
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      byId[m.id()] = m;
    }
    // Keep the tokens of members still here under the same id and name; make the others'.
    long[] kept = new long[tokens.length];
    int k = 0;
    for (long t : tokens) {
      if (onRing((int) (t & ID_MASK))) {
        kept[k++] = t;
      }
    }
    int fresh = 0;
    for (int i = 0; i < members.size(); i++) {
      fresh += onRing(members.get(i).id()) ? 0 : 1;
    }
    long[] added = new long[fresh * virtualNodes];
    int a = 0;
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      if (!onRing(m.id())) {
        for (int j = 0; j < virtualNodes; j++) {
          long pos = HashRings.mix(m.hash() + (j + 1) * GOLDEN) & POSITION_MASK;
          // Flipped sign bit: the signed sort orders them as unsigned numbers.
          added[a++] = (pos | m.id()) ^ Long.MIN_VALUE;
        }
      }
    }
    longSort.sort(added, a);
    for (int i = 0; i < a; i++) {
      added[i] ^= Long.MIN_VALUE;
    }
    tokens = merge(kept, k, added, a);
    ringIds = new Member[byId.length];
    System.arraycopy(byId, 0, ringIds, 0, byId.length);
    ringFor = members;
  }

  /** Whether the ring's tokens for {@code id} belong to the member that has it now. */
  @SuppressWarnings("ReferenceEquality") // the same Member object: same name, so same tokens
  private boolean onRing(int id) {
    return id < ringIds.length && ringIds[id] != null && ringIds[id] == byId[id];
  }

  private static long[] merge(long[] x, int xn, long[] y, int yn) {
    long[] out = new long[xn + yn];
    int i = 0;
    int j = 0;
    int w = 0;
    while (i < xn && j < yn) {
      out[w++] = Long.compareUnsigned(x[i], y[j]) <= 0 ? x[i++] : y[j++];
    }
    while (i < xn) {
      out[w++] = x[i++];
    }
    while (j < yn) {
      out[w++] = y[j++];
    }
    return out;
  }

  /** The index of the first token at or clockwise after {@code key}. */
  private int tokenIndex(long key) {
    long q = key & POSITION_MASK;
    int lo = 0;
    int hi = tokens.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (Long.compareUnsigned(tokens[mid] & POSITION_MASK, q) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo == tokens.length ? 0 : lo;
  }

  private void place(Members members, Assignment assignment) {
    int n = assignment.size();
    if (n == 0) {
      return;
    }
    ring(members);
    int c = members.size();
    if (caps.length < byId.length) {
      caps = new int[byId.length];
      counts = new int[byId.length];
    }
    Arrays.fill(counts, 0);
    for (int i = 0; i < c; i++) {
      Member m = members.get(i);
      caps[m.id()] = memberCap(loadFactor, n, c, m.hash());
    }
    if (chosen.length < n) {
      chosen = new int[n];
      distance = new long[n];
      keys = new long[n];
    }
    proposeToOwners(assignment, n);
    int idBits = Math.max(1, 32 - Integer.numberOfLeadingZeros(byId.length - 1));
    int indexBits = Math.max(1, 32 - Integer.numberOfLeadingZeros(n - 1));
    pending.clear();
    // Round 1: the owners offered more than their cap keep the closest.
    int k = 0;
    for (int i = 0; i < n; i++) {
      int id = chosen[i];
      if (counts[id] > caps[id]) {
        keys[k++] = key(id, distance[i], i, idBits, indexBits);
      }
    }
    accept(k, idBits, indexBits, true);
    for (int round = 1; round <= PROBE_ROUNDS && !pending.isEmpty(); round++) {
      k = 0;
      for (int p = 0; p < pending.size(); p++) {
        int i = pending.get(p);
        long probe = HashRings.mix(assignment.hash(assignment.slotAt(i)) + round * PROBE_GAMMA);
        int t = tokenIndex(probe);
        int id = (int) (tokens[t] & ID_MASK);
        if (counts[id] < caps[id]) {
          keys[k++] = key(id, (tokens[t] & POSITION_MASK) - (probe & POSITION_MASK), i, idBits,
              indexBits);
        } else {
          next.add(i);
        }
      }
      pending.clear();
      accept(k, idBits, indexBits, false);
      for (int p = 0; p < next.size(); p++) {
        pending.add(next.get(p));
      }
      next.clear();
    }
    Arrays.sort(pending.array(), 0, pending.size());
    for (int p = 0; p < pending.size(); p++) {
      int i = pending.get(p);
      chosen[i] = clockwiseWithRoom(assignment.hash(assignment.slotAt(i)));
      counts[chosen[i]]++;
    }
    pending.clear();
    for (int i = 0; i < n; i++) {
      int slot = assignment.slotAt(i);
      Member m = byId[chosen[i]];
      if (assignment.ownerOf(slot) != m) {
        assignment.place(slot, m);
      }
    }
    if (n > (1 << 16)) {
      longSort.release();
    }
  }

  /**
   * Round 1's proposals, by one merge walk: the view is in identity-hash order (unsigned), and so
   * are the tokens. Counts the proposals per collector.
   */
  private void proposeToOwners(Assignment assignment, int n) {
    long[] ring = tokens;
    int t = 0;
    for (int i = 0; i < n; i++) {
      long q = assignment.hash(assignment.slotAt(i)) & POSITION_MASK;
      while (t < ring.length && Long.compareUnsigned(ring[t] & POSITION_MASK, q) < 0) {
        t++;
      }
      long token = ring[t == ring.length ? 0 : t];
      int id = (int) (token & ID_MASK);
      chosen[i] = id;
      distance[i] = (token & POSITION_MASK) - q;
      counts[id]++;
    }
  }

  /**
   * A sort key: collector id, then the top bits of the distance, then the position in the
   * view (the deterministic tie-break), packed into a non-negative long.
   */
  private static long key(int id, long distance, int i, int idBits, int indexBits) {
    int distanceBits = 63 - idBits - indexBits;
    return ((long) id << (63 - idBits)) | ((distance >>> (64 - distanceBits)) << indexBits) | i;
  }

  /**
   * Sorts {@code keys[0 .. k)} and lets each collector keep the closest proposals while it has
   * room: in round 1 its count already holds what it kept of the proposals not listed (all of
   * them, since it was over its cap only when listed), so the listed ones compete for
   * {@code cap}; later rounds compete for what is left. The rejected go to {@link #pending}.
   */
  private void accept(int k, int idBits, int indexBits, boolean firstRound) {
    longSort.sort(keys, k);
    long indexMask = (1L << indexBits) - 1;
    int group = -1;
    int room = 0;
    for (int j = 0; j < k; j++) {
      int id = (int) (keys[j] >>> (63 - idBits));
      int i = (int) (keys[j] & indexMask);
      if (id != group) {
        group = id;
        room = firstRound ? caps[id] : caps[id] - counts[id];
        if (firstRound) {
          counts[id] = 0;
        }
      }
      if (room > 0) {
        room--;
        counts[id]++;
        chosen[i] = id;
      } else {
        pending.add(i);
      }
    }
  }

  /** The first collector clockwise from {@code hash} with room left. */
  private int clockwiseWithRoom(long hash) {
    int start = tokenIndex(hash);
    for (int step = 0; step < tokens.length; step++) {
      int id = (int) (tokens[(start + step) % tokens.length] & ID_MASK);
      if (counts[id] < caps[id]) {
        return id;
      }
    }
    throw new IllegalStateException("no collector below its cap");
  }
}
