package dev.apportion.allocation.ring;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;

/**
 * Rendezvous, or highest-random-weight, hashing (Thaler and Ravishankar, "Using name-based
 * mappings to increase hit rates", IEEE/ACM ToN 1998).
 *
 * <p><b>Design.</b> Every member scores every key with {@code mix(key ^ memberHash)}; the highest
 * score wins, ties going to the smaller name ({@link HashRings#rendezvousBeats}, the rule's one
 * home; an index is a position in name order, so a later index never wins a tie). With weights,
 * the score becomes {@code -w / ln(u)} with {@code u} the mixed value mapped into (0, 1)
 * (Schindelhauer and Schomaker's logarithmic method), which gives member {@code i} the share
 * {@code w_i / sum(w)}.
 *
 * <p><b>Guarantees.</b> Removing a member moves exactly the keys it owned; adding one moves
 * exactly the keys it now wins. Nothing but the key and the member set enters the score.
 *
 * <p><b>Cost.</b> A lookup is one mix per member (about a nanosecond each, unweighted; a
 * logarithm each, weighted), allocation-free. {@link #owners} and {@link #ownerIndices} score
 * and sort every member, and allocate. Building is O(members log members).
 */
final class RendezvousRing extends MemberTable {
  private final boolean uniform;

  RendezvousRing(NavigableMap<String, Double> sortedWeights) {
    super(sortedWeights);
    boolean same = true;
    for (double w : weights) {
      same &= w == weights[0];
    }
    uniform = same;
  }

  @Override
  public int ownerIndex(long key) {
    if (uniform) {
      int best = 0;
      long bestScore = HashRings.mix(key ^ hashes[0]);
      for (int i = 1; i < hashes.length; i++) {
        long s = HashRings.mix(key ^ hashes[i]);
        if (HashRings.rendezvousBeats(s, bestScore, false)) {
          bestScore = s;
          best = i;
        }
      }
      return best;
    }
    int best = 0;
    double bestScore = weightedScore(0, key);
    for (int i = 1; i < hashes.length; i++) {
      double s = weightedScore(i, key);
      if (HashRings.rendezvousBeats(s, bestScore, false)) {
        bestScore = s;
        best = i;
      }
    }
    return best;
  }

  private double weightedScore(int index, long key) {
    long m = HashRings.mix(key ^ hashes[index]);
    // In the signed order of m, as the uniform ring ranks (equal weights then rank alike), and
    // with StrictMath, so every JVM computes the same owner.
    double u = (((m ^ Long.MIN_VALUE) >>> 11) + 0.5) * 0x1.0p-53;
    return -weights[index] / StrictMath.log(u);
  }

  @Override
  public int ownerIndices(long key, int[] out) {
    List<String> names = owners(key, out.length);
    for (int i = 0; i < names.size(); i++) {
      out[i] = Arrays.binarySearch(this.names, names.get(i));
    }
    return names.size();
  }

  @Override
  public List<String> owners(long key, int k) {
    if (k < 0) {
      throw new IllegalArgumentException("k must not be negative: " + k);
    }
    int n = Math.min(k, names.length);
    Integer[] order = new Integer[names.length];
    double[] weighted = uniform ? null : new double[names.length];
    long[] raw = uniform ? new long[names.length] : null;
    for (int i = 0; i < names.length; i++) {
      order[i] = i;
      if (uniform) {
        raw[i] = HashRings.mix(key ^ hashes[i]);
      } else {
        weighted[i] = weightedScore(i, key);
      }
    }
    if (uniform) {
      Arrays.sort(order, (a, b) -> HashRings.rendezvousBeats(raw[a], raw[b], a < b) ? -1
          : HashRings.rendezvousBeats(raw[b], raw[a], b < a) ? 1 : 0);
    } else {
      Arrays.sort(order, (a, b) -> HashRings.rendezvousBeats(weighted[a], weighted[b], a < b) ? -1
          : HashRings.rendezvousBeats(weighted[b], weighted[a], b < a) ? 1 : 0);
    }
    List<String> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(names[order[i]]);
    }
    return out;
  }

  @Override
  public HashRing withMembers(Map<String, Double> weights) {
    return new RendezvousRing(HashRings.checked(weights));
  }
}
