package dev.apportion.allocation.internal.chash;

import dev.apportion.allocation.internal.collections.Headroom;
import dev.apportion.allocation.internal.collections.IntChunks;
import dev.apportion.allocation.internal.collections.Passes;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.hash.RingTokens;
import java.util.Arrays;

/**
 * The ring of {@link ConsistentHashingPlacer}: each member's tokens, in one {@code long[]}, each
 * token a ring position in the high bits and the member's id in the low {@value #ID_BITS} bits,
 * ascending as unsigned numbers. A member has {@link #tokensFor tokensFor(capacity)} tokens, 8
 * bytes each, at positions drawn from its name's hash, so every replica builds the same ring.
 *
 * <p>The ring is rebuilt incrementally when the members change: the tokens of members still there
 * under the same id, name and capacity are kept in place, only the others' are made, sorted and
 * merged in from the back ({@link #mergeFromTheBack}), so a rebuild allocates only the new
 * members' tokens (and a larger buffer when the ring outgrows its own). Also the member for each
 * id ({@link #member}) of the last {@link #update}.
 */
public final class TokenRing {
  /** Low bits of a token that hold the member's id ({@link RingTokens#ID_BITS}). */
  static final int ID_BITS = RingTokens.ID_BITS;
  /** The id bits of a token. */
  static final long ID_MASK = RingTokens.ID_MASK;
  /** The position bits of a token (and of a target's hash, looked up on the ring). */
  static final long POSITION_MASK = RingTokens.POSITION_MASK;

  private final int virtualNodes;

  /** Positions (high bits) | member id (low bits), ascending as unsigned numbers. */
  private long[] tokens = new long[0];
  /** How many of {@link #tokens} are the ring; the rest is room kept for the next rebuild. */
  private int count;
  private Members ringFor;
  /**
   * By member id: the member of the last {@link #update}, whose tokens the ring holds, or null.
   * A new array each update, never written after it.
   */
  private Member[] byId = new Member[0];
  /** By member id: the capacity {@link #byId}'s member's tokens were made for (0 where null). */
  private double[] capacityById = new double[0];
  /**
   * The token indices grouped by member id, each group ascending: id {@code i}'s are at {@code
   * byIdStart[i]} (inclusive) to {@code byIdStart[i + 1]} (exclusive), read by {@link
   * #groupedToken}. Built on demand ({@link #indexByMember}), forgotten when the ring changes.
   * In chunks ({@link IntChunks}): as one array with the ring's headroom it took a G1 region of
   * its own at 1000 collectors.
   */
  private final IntChunks tokensById;
  private int[] byIdStart = new int[0];
  private boolean byIdBuilt;

  /**
   * An empty ring.
   *
   * @param virtualNodes tokens per unit of capacity (see {@link #tokensFor})
   */
  TokenRing(int virtualNodes) {
    this(virtualNodes, IntChunks.DEFAULT_SHIFT);
  }

  /**
   * An empty ring whose grouping by member is held in chunks of {@code 2^groupingShift} values
   * (small shifts are for tests: groups then cross chunks).
   *
   * @param virtualNodes tokens per unit of capacity (see {@link #tokensFor})
   * @param groupingShift the grouping's chunks' size in bits, from 1 to 30
   * @throws IllegalArgumentException if {@code groupingShift} is out of that range
   */
  TokenRing(int virtualNodes, int groupingShift) {
    this.virtualNodes = virtualNodes;
    this.tokensById = new IntChunks(groupingShift);
  }

  /**
   * How many tokens a member of {@code capacity} has: {@code virtualNodes * capacity}, rounded,
   * within {@code [16, 65536]}.
   *
   * @param capacity the member's capacity
   * @return the count
   */
  int tokensFor(double capacity) {
    return RingTokens.count(capacity, virtualNodes, 16, 1 << 16);
  }

  /**
   * The position of member {@code m}'s token {@code j} (from 0 to {@code tokensFor - 1}).
   *
   * @param m the member
   * @param j the token's number
   * @return its position (low {@value #ID_BITS} bits clear)
   */
  static long tokenPosition(Member m, int j) {
    return RingTokens.position(m.hash(), j);
  }

  /**
   * Makes this the ring of {@code members}, keeping the tokens of the members it already holds
   * (same id, same {@link Member} object, same capacity). Does nothing when {@code members} is
   * the set of the last call.
   *
   * @param members the members
   * @throws IllegalStateException if a member's id does not fit in {@value #ID_BITS} bits
   */
  // Identity, on purpose: a Members is immutable, and a new one means the set changed; the same
  // Member object under an id has the same name, so the same tokens.
  @SuppressWarnings("ReferenceEquality")
  void update(Members members) {
    if (ringFor == members) {
      return;
    }
    int maxId = Math.max(0, members.maxId());
    if (maxId > ID_MASK) {
      throw new IllegalStateException("member id " + maxId + " does not fit the ring");
    }
    // The new members by id, in new arrays (as long as the last, or longer; zeroed by the
    // allocation), compared with the last update's. The passes below read arrays only
    // (Passes).
    Member[] nextById = new Member[Math.max(byId.length, maxId + 1)];
    double[] nextCapacity = new double[nextById.length];
    Member[] ms = members.array();
    int[] ids = members.ids();
    for (int i = 0; i < ms.length; i++) {
      nextById[ids[i]] = ms[i];
      nextCapacity[ids[i]] = ms[i].capacity();
    }
    // Keep the tokens of members still here under the same id, name and capacity; make the
    // others'.
    // Compacted in place, in order (the write index never passes the read index).
    // Which ids keep their tokens, decided once per id, not once per token.
    boolean[] keep = new boolean[byId.length];
    long dropped = 0;
    for (int id = 0; id < keep.length; id++) {
      Member had = byId[id];
      keep[id] = had != null && had == nextById[id] && capacityById[id] == nextCapacity[id];
      if (!keep[id] && had != null) {
        dropped += tokensFor(capacityById[id]);
      }
    }
    int k;
    if (dropped == 0) {
      k = count; // no member left: every token stays where it is
    } else if (dropped * 16 > count || (k = dropTokens(keep, (int) dropped)) < 0) {
      k = 0;
      for (int i = 0; i < count; i++) {
        long t = tokens[i];
        int id = (int) (t & ID_MASK);
        if (id < keep.length && keep[id]) {
          tokens[k++] = t;
        }
      }
    }
    int fresh = 0;
    for (int id : ids) {
      fresh += kept(keep, id) ? 0 : tokensFor(nextCapacity[id]);
    }
    // A ring built from nothing (a first placement) is written and sorted where it stays.
    boolean inPlace = k == 0;
    if (inPlace && tokens.length < fresh) {
      tokens = new long[Headroom.withHeadroom(fresh)];
    }
    long[] added = inPlace ? tokens : new long[fresh];
    // No member without its tokens (a collector left, or only a node, zone or label changed):
    // nothing to generate or merge.
    int a = fresh == 0 ? 0 : sortedTokens(members, keep, fresh, added);
    // Merged in place from the back, so a rebuild allocates only the new members' tokens (and a
    // larger buffer when the ring outgrows its own).
    if (!inPlace) {
      if (tokens.length < k + a) {
        // With headroom for a few more members, so that adding one does not copy the ring.
        tokens = Arrays.copyOf(tokens, Headroom.withHeadroom(k + a));
      }
      mergeFromTheBack(tokens, k, added, a);
    }
    count = k + a;
    byId = nextById;
    capacityById = nextCapacity;
    ringFor = members;
    byIdBuilt = false;
  }

  /**
   * Writes the tokens of the members not on the ring ({@code fresh} of them) into {@code out[0 ..
   * fresh)}, sorted as unsigned numbers, with no scratch array of their size: they are counted
   * by their top bits, generated again straight into their bucket's place, and each bucket (four
   * to eight tokens) is sorted by insertion. The only scratch is the counts, an int for every
   * four tokens (256 KB for 1000 collectors of 512 tokens, where a sort of the whole would take a
   * second array of 4 MB).
   *
   * @return {@code fresh}
   */
  private int sortedTokens(Members members, boolean[] keep, int fresh, long[] out) {
    // At least one bit: a shift of 64 would shift by nothing.
    int bits = Math.max(1,
        Math.min(20, 31 - Integer.numberOfLeadingZeros(Math.max(1, fresh / 4))));
    int shift = 64 - bits;
    // ends[b + 1] counts bucket b; after the prefix sums, ends[b] is where bucket b starts, and
    // after the scatter, where it ends.
    int[] ends = new int[(1 << bits) + 1];
    // One method a pass (Passes).
    countBuckets(members, keep, shift, ends);
    prefixSums(ends, ends.length);
    scatter(members, keep, shift, ends, out);
    sortBuckets(ends, out);
    return fresh;
  }

  /** Makes {@code a[0 .. n)} its own running sums, in place. */
  private static void prefixSums(int[] a, int n) {
    for (int i = 1; i < n; i++) {
      a[i] += a[i - 1];
    }
  }

  /**
   * Counts the new members' tokens by their top bits: bucket b's count in {@code ends[b + 1]}.
   * A call a member ({@link #countTokens}), and in {@link #scatter} and {@link #sortBuckets} a
   * call a member or a range of buckets ({@link Passes}).
   */
  private void countBuckets(Members members, boolean[] keep, int shift, int[] ends) {
    for (Member m : members.array()) {
      if (!kept(keep, m.id())) {
        countTokens(m, shift, ends);
      }
    }
  }

  private void countTokens(Member m, int shift, int[] ends) {
    int n = tokensFor(m.capacity());
    for (int j = 0; j < n; j++) {
      ends[(int) (tokenPosition(m, j) >>> shift) + 1]++;
    }
  }

  /** Writes each new member's tokens at its bucket's next place: {@code ends[b]} moves on. */
  private void scatter(Members members, boolean[] keep, int shift, int[] ends, long[] out) {
    for (Member m : members.array()) {
      if (!kept(keep, m.id())) {
        scatterTokens(m, shift, ends, out);
      }
    }
  }

  private void scatterTokens(Member m, int shift, int[] ends, long[] out) {
    int n = tokensFor(m.capacity());
    for (int j = 0; j < n; j++) {
      long pos = tokenPosition(m, j);
      out[ends[(int) (pos >>> shift)]++] = pos | m.id();
    }
  }

  /** Buckets sorted a call, tokens counted or grouped a call. */
  private static final int RING_CHUNK = 1024;

  /**
   * Sorts each bucket (bucket b is {@code [ends[b - 1], ends[b])}, the first from 0) by
   * insertion: within it the tokens share their top bits, so the unsigned order is the order of
   * the rest.
   */
  private static void sortBuckets(int[] ends, long[] out) {
    int buckets = ends.length - 1;
    int from = 0;
    for (int b = 0; b < buckets; b += RING_CHUNK) {
      int b1 = buckets - b <= RING_CHUNK ? buckets : b + RING_CHUNK;
      sortBuckets(ends, out, b, b1, from);
      from = ends[b1 - 1];
    }
  }

  /**
   * {@link #sortBuckets(int[], long[])} for buckets {@code [b0, b1)}, the first starting at
   * {@code from}.
   */
  private static void sortBuckets(int[] ends, long[] out, int b0, int b1, int from) {
    for (int b = b0; b < b1; b++) {
      int to = ends[b];
      for (int i = from + 1; i < to; i++) {
        long t = out[i];
        long key = t + Long.MIN_VALUE;
        int j = i - 1;
        while (j >= from && out[j] + Long.MIN_VALUE > key) {
          out[j + 1] = out[j];
          j--;
        }
        out[j + 1] = t;
      }
      from = to;
    }
  }

  /**
   * Groups the token indices by member id, once per ring: one counting pass and one filling pass
   * over the tokens, so that a member's tokens are then listed without a search each.
   */
  void indexByMember() {
    if (byIdBuilt) {
      return;
    }
    int span = byId.length;
    if (byIdStart.length < span + 1) {
      byIdStart = new int[span + 1];
    } else {
      Arrays.fill(byIdStart, 0, span + 1, 0);
    }
    tokensById.ensureCapacity(count);
    // The two passes over the ring in methods of their own (Passes).
    countById(tokens, count, byIdStart);
    prefixSums(byIdStart, span + 1);
    int[] fill = Arrays.copyOf(byIdStart, span);
    fillById(tokens, count, fill, tokensById.chunks(), tokensById.shift());
    byIdBuilt = true;
  }

  /** Counts the tokens of each id: id {@code i}'s count in {@code starts[i + 1]}. */
  private static void countById(long[] tokens, int count, int[] starts) {
    for (int t = 0; t < count; t += RING_CHUNK) {
      countById(tokens, t, count - t <= RING_CHUNK ? count : t + RING_CHUNK, starts);
    }
  }

  /** {@link #countById(long[], int, int[])} for tokens {@code [from, to)}. */
  private static void countById(long[] tokens, int from, int to, int[] starts) {
    for (int t = from; t < to; t++) {
      starts[(int) (tokens[t] & ID_MASK) + 1]++;
    }
  }

  /**
   * Writes each token's index at its id's next place in the grouping's {@code chunks}
   * ({@code fill[id]} moves on). The chunks are indexed here, not through a call a token
   * ({@link Passes}).
   */
  private static void fillById(long[] tokens, int count, int[] fill, int[][] chunks, int shift) {
    for (int t = 0; t < count; t += RING_CHUNK) {
      fillById(tokens, t, count - t <= RING_CHUNK ? count : t + RING_CHUNK, fill, chunks, shift);
    }
  }

  /** {@link #fillById(long[], int, int[], int[][], int)} for tokens {@code [from, to)}. */
  private static void fillById(long[] tokens, int from, int to, int[] fill, int[][] chunks,
      int shift) {
    int mask = (1 << shift) - 1;
    for (int t = from; t < to; t++) {
      int at = fill[(int) (tokens[t] & ID_MASK)]++;
      chunks[at >>> shift][at & mask] = t;
    }
  }

  /**
   * Whether {@link #indexByMember} has grouped the current ring's tokens.
   *
   * @return true when the grouping is there
   */
  boolean indexedByMember() {
    return byIdBuilt;
  }

  /**
   * Where member {@code id}'s tokens start in the grouping of {@link #indexByMember}, which must
   * have been called since the last {@link #update}.
   *
   * @param id a member id below {@link #idSpan()}
   * @return an index for {@link #groupedToken}
   */
  int groupFrom(int id) {
    return byIdStart[id];
  }

  /**
   * Where member {@code id}'s tokens end (exclusive) in the grouping of {@link #indexByMember}.
   *
   * @param id a member id below {@link #idSpan()}
   * @return an index for {@link #groupedToken}
   */
  int groupTo(int id) {
    return byIdStart[id + 1];
  }

  /**
   * The token index at {@code k} of the grouping of {@link #indexByMember}.
   *
   * @param k from {@link #groupFrom} to {@link #groupTo} of some id
   * @return a token index
   */
  int groupedToken(int k) {
    return tokensById.get(k);
  }

  /** Whether {@link #update}'s {@code keep} says member {@code id}'s tokens stay on the ring. */
  private static boolean kept(boolean[] keep, int id) {
    return id < keep.length && keep[id];
  }

  /**
   * Removes the tokens of the members that left (those not {@code keep}), found by their
   * positions instead of a test of every token, and closes the gaps by moving the runs between
   * them in bulk: for a few members leaving a large ring. {@code total} is how many tokens they
   * have. Returns the new count, or -1 (nothing changed) when the tokens found are not all those
   * of the members that left.
   */
  private int dropTokens(boolean[] keep, int total) {
    int[] at = new int[total];
    int d = 0;
    for (int id = 0; id < keep.length; id++) {
      Member m = byId[id];
      if (keep[id] || m == null) {
        continue;
      }
      int n = tokensFor(capacityById[id]);
      for (int j = 0; j < n; j++) {
        long token = tokenPosition(m, j) | id;
        int t = tokenIndex(token);
        // Tokens of other members may share the position: the first of them comes first.
        while (t < count && (tokens[t] & POSITION_MASK) == (token & POSITION_MASK)
            && tokens[t] != token) {
          t++;
        }
        if (t >= count || tokens[t] != token) {
          return -1;
        }
        at[d++] = t;
      }
    }
    Arrays.sort(at, 0, d);
    for (int q = 1; q < d; q++) {
      if (at[q] == at[q - 1]) {
        return -1; // a member's two tokens at one position: left to the full pass
      }
    }
    int w = at[0];
    for (int q = 0; q < d; q++) {
      int from = at[q] + 1;
      int to = q + 1 < d ? at[q + 1] : count;
      System.arraycopy(tokens, from, tokens, w, to - from);
      w += to - from;
    }
    return w;
  }

  /**
   * Merges the ascending (unsigned) {@code y[0 .. yn)} into the ascending {@code x[0 .. xn)},
   * in place: {@code x} must hold {@code xn + yn}. Equal values keep {@code x}'s first. From the
   * back: each value of {@code y} finds its place by a search back from the last one's, and the
   * run of {@code x} after it moves in bulk, so a few values merged into a large ring cost a
   * move of the ring, not a comparison for each of its values.
   *
   * @param x the first run, with room for both
   * @param xn the first run's length
   * @param y the second run
   * @param yn the second run's length
   */
  static void mergeFromTheBack(long[] x, int xn, long[] y, int yn) {
    int end = xn;
    int w = xn + yn;
    for (int j = yn - 1; j >= 0; j--) {
      long v = y[j];
      // The first index in x[0 .. end) whose value is above v: gallop back from end, then bisect.
      int hi = end;
      int lo = end;
      int step = 1;
      while (lo > 0 && Long.compareUnsigned(x[lo - 1], v) > 0) {
        hi = lo - 1;
        lo = Math.max(0, lo - step);
        step <<= 1;
      }
      // Every value from hi on is above v; every value before lo is not.
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (Long.compareUnsigned(x[mid], v) > 0) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      int run = end - lo;
      w -= run;
      System.arraycopy(x, lo, x, w, run);
      x[--w] = v;
      end = lo;
    }
  }

  /**
   * The index of the first token at or clockwise after {@code key}'s position (past the last
   * token, the first).
   *
   * @param key a hash; its id bits are ignored
   * @return a token index, from 0 to {@link #size()} - 1
   */
  int tokenIndex(long key) {
    long q = key & POSITION_MASK;
    int n = count;
    if (n == 0) {
      return 0;
    }
    // The positions are uniform over the ring: start where the key's fraction of the ring says,
    // gallop to a bracket, then bisect it. About four reads where a plain bisection of a ring of
    // 200,000 tokens takes eighteen, and the first lands near the rest (fewer cache misses).
    int lo;
    int hi;
    int guess = (int) Math.min(n - 1L, Math.max(0L,
        (long) (((q >>> 11) * 0x1.0p-53) * n)));
    if (Long.compareUnsigned(tokens[guess] & POSITION_MASK, q) < 0) {
      lo = guess + 1;
      int step = 1;
      hi = lo;
      while (hi < n && Long.compareUnsigned(tokens[hi] & POSITION_MASK, q) < 0) {
        lo = hi + 1;
        hi += step;
        step <<= 1;
      }
      hi = Math.min(hi, n);
    } else {
      hi = guess;
      int step = 1;
      lo = hi;
      while (lo > 0 && Long.compareUnsigned(tokens[lo - 1] & POSITION_MASK, q) >= 0) {
        hi = lo - 1;
        lo -= step;
        step <<= 1;
        lo = Math.max(lo, 0);
      }
    }
    // Invariant: every token before lo is below q; every token from hi on is at or above it.
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (Long.compareUnsigned(tokens[mid] & POSITION_MASK, q) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo == n ? 0 : lo;
  }

  /**
   * How many tokens the ring has.
   *
   * @return the count
   */
  int size() {
    return count;
  }

  /**
   * The length of the token buffer: at least {@link #size()}, with room for a few more members.
   *
   * @return the length
   */
  int bufferLength() {
    return tokens.length;
  }

  /**
   * The member id of token {@code t}.
   *
   * @param t from 0 to {@link #size()} - 1
   * @return the id
   */
  int idAt(int t) {
    return (int) (tokens[t] & ID_MASK);
  }

  /**
   * The ring position of token {@code t}: its high bits, the id bits clear.
   *
   * @param t from 0 to {@link #size()} - 1
   * @return the position
   */
  long positionAt(int t) {
    return tokens[t] & POSITION_MASK;
  }

  /**
   * One more than the largest member id seen: the length the placer's arrays by member id need.
   *
   * @return the length
   */
  int idSpan() {
    return byId.length;
  }

  /**
   * The member of the last {@link #update} with {@code id}.
   *
   * @param id a member id below {@link #idSpan()}
   * @return the member, or null
   */
  Member member(int id) {
    return byId[id];
  }
}
