package dev.apportion.allocation.ring;

import dev.apportion.allocation.internal.collections.LongSort;
import dev.apportion.allocation.internal.hash.RingTokens;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;

/**
 * Consistent hashing with virtual nodes (Karger et al., "Consistent hashing and random trees",
 * STOC 1997), with a bucket index for constant-time lookup.
 *
 * <p><b>Design.</b> Member {@code i} places {@code max(1, round(w_i * v))} tokens on a 64-bit
 * circle, token {@code j} at {@code mix(memberHash + (j + 1) * golden)} (the engine's
 * consistent-hashing strategy places its tokens at the same positions); a key belongs to the
 * first token at or after it, wrapping around. A token is stored as one {@code long}: its
 * position in the high {@value #POSITION_BITS} bits, its member's index (name order) in the low
 * {@value #INDEX_BITS}, so one primitive sort orders tokens by position and breaks the (rare)
 * ties by name, and a lookup never leaves the array. A table of {@code 2^b} bucket starts
 * ({@code b = floor(log2(tokens)) + 1}, at most 24) sends a key straight to the first token of its bucket, so a
 * lookup inspects about one token.
 *
 * <p><b>Guarantees.</b> Placement is a function of the member set; a member's tokens depend on
 * its name alone, so removing a member moves only its keys and adding one moves only the keys
 * its tokens cover. Balance: each member's share deviates from its weight's share by about
 * {@code 1/sqrt(v)} (one standard deviation).
 *
 * <p><b>Cost.</b> Lookup: O(1) expected, allocation-free. {@link #ownerIndices} walks the tokens
 * clockwise and allocates only when asked for more than 16 members. Building: O(t log t) for {@code t}
 * tokens. {@link #withMembers}: one linear pass over the surviving tokens plus sorting the new
 * members' tokens. Memory: 8 bytes per token plus 4 per bucket.
 */
final class ConsistentRing extends MemberTable {
  static final int INDEX_BITS = RingTokens.ID_BITS;
  static final int POSITION_BITS = RingTokens.POSITION_BITS;
  private static final long INDEX_MASK = RingTokens.ID_MASK;
  private static final long POSITION_MASK = RingTokens.POSITION_MASK;

  private final int virtualNodes;
  private final long[] tokens;
  private final int bucketBits;
  private final int[] bucketStart;

  ConsistentRing(NavigableMap<String, Double> sortedWeights, int virtualNodes) {
    this(sortedWeights, virtualNodes, null);
  }

  private ConsistentRing(NavigableMap<String, Double> sortedWeights, int virtualNodes,
      ConsistentRing previous) {
    super(checkSize(sortedWeights), previous == null ? null : previous.hashesByName());
    this.virtualNodes = virtualNodes;
    int n = names.length;
    // Old index -> new index, for members whose tokens can be kept (same name, same count).
    int[] remap = previous == null ? new int[0] : new int[previous.names.length];
    Arrays.fill(remap, -1);
    boolean[] fresh = new boolean[n];
    int freshTokens = 0;
    for (int i = 0; i < n; i++) {
      int old = previous == null ? -1 : Arrays.binarySearch(previous.names, names[i]);
      if (old >= 0 && tokenCount(previous.weights[old]) == tokenCount(weights[i])) {
        remap[old] = i;
      } else {
        fresh[i] = true;
        freshTokens += tokenCount(weights[i]);
      }
    }
    long[] added = new long[freshTokens];
    int a = 0;
    for (int m = 0; m < n; m++) {
      if (fresh[m]) {
        int count = tokenCount(weights[m]);
        for (int j = 0; j < count; j++) {
          added[a++] = RingTokens.token(hashes[m], j, m);
        }
      }
    }
    new LongSort().sort(added, added.length);
    tokens = previous == null ? added : merge(previous.tokens, remap, added);
    bucketBits = Math.max(1, Math.min(24, 64 - Long.numberOfLeadingZeros(tokens.length)));
    bucketStart = buckets(tokens, bucketBits);
  }

  private static NavigableMap<String, Double> checkSize(
      NavigableMap<String, Double> sortedWeights) {
    if (sortedWeights.size() > INDEX_MASK + 1) {
      throw new IllegalArgumentException("a consistent ring holds at most " + (INDEX_MASK + 1)
          + " members: " + sortedWeights.size());
    }
    return sortedWeights;
  }

  private Map<String, Long> hashesByName() {
    Map<String, Long> out = new HashMap<>();
    for (int i = 0; i < names.length; i++) {
      out.put(names[i], hashes[i]);
    }
    return out;
  }

  private int tokenCount(double weight) {
    return RingTokens.count(weight, virtualNodes, 1, 1 << 20);
  }

  /** Keeps the surviving old tokens (re-indexed; order is preserved) and merges in the new. */
  private static long[] merge(long[] old, int[] remap, long[] added) {
    long[] out = new long[old.length + added.length];
    int o = 0;
    int a = 0;
    int w = 0;
    while (o < old.length) {
      long t = old[o++];
      int to = remap[(int) (t & INDEX_MASK)];
      if (to < 0) {
        continue;
      }
      t = (t & POSITION_MASK) | to;
      while (a < added.length && added[a] < t) {
        out[w++] = added[a++];
      }
      out[w++] = t;
    }
    while (a < added.length) {
      out[w++] = added[a++];
    }
    return w == out.length ? out : Arrays.copyOf(out, w);
  }

  private static int bucketOf(long key, int bits) {
    return (int) ((key >> (64 - bits)) + (1L << (bits - 1)));
  }

  private static int[] buckets(long[] tokens, int bits) {
    int count = 1 << bits;
    int[] start = new int[count + 1];
    int t = 0;
    for (int b = 0; b < count; b++) {
      long low = (long) (b - (1 << (bits - 1))) << (64 - bits);
      while (t < tokens.length && tokens[t] < low) {
        t++;
      }
      start[b] = t;
    }
    start[count] = tokens.length;
    return start;
  }

  /** The position in {@link #tokens} of the first token at or after {@code key}, wrapping. */
  int tokenIndex(long key) {
    long q = key & POSITION_MASK;
    int i = bucketStart[bucketOf(key, bucketBits)];
    while (i < tokens.length && tokens[i] < q) {
      i++;
    }
    return i == tokens.length ? 0 : i;
  }

  /** The number of tokens on the ring. */
  int tokenCount() {
    return tokens.length;
  }

  /** The member index of token {@code i}. */
  int tokenOwner(int i) {
    return RingTokens.id(tokens[i]);
  }

  @Override
  public int ownerIndex(long key) {
    return tokenOwner(tokenIndex(key));
  }

  @Override
  public int ownerIndices(long key, int[] out) {
    int n = Math.min(out.length, names.length);
    int found = 0;
    int start = tokenIndex(key);
    boolean[] marks = n > 16 ? new boolean[names.length] : null;
    for (int step = 0; step < tokens.length && found < n; step++) {
      int owner = tokenOwner((start + step) % tokens.length);
      boolean seen = false;
      if (marks != null) {
        seen = marks[owner];
        marks[owner] = true;
      } else {
        for (int j = 0; j < found && !seen; j++) {
          seen = out[j] == owner;
        }
      }
      if (!seen) {
        out[found++] = owner;
      }
    }
    return found;
  }

  @Override
  public List<String> owners(long key, int k) {
    if (k < 0) {
      throw new IllegalArgumentException("k must not be negative: " + k);
    }
    int n = Math.min(k, names.length);
    List<String> out = new ArrayList<>(n);
    boolean[] seen = new boolean[names.length];
    int start = tokenIndex(key);
    for (int step = 0; step < tokens.length && out.size() < n; step++) {
      int owner = tokenOwner((start + step) % tokens.length);
      if (!seen[owner]) {
        seen[owner] = true;
        out.add(names[owner]);
      }
    }
    return out;
  }

  @Override
  public HashRing withMembers(Map<String, Double> weights) {
    return new ConsistentRing(HashRings.checked(weights), virtualNodes, this);
  }
}
