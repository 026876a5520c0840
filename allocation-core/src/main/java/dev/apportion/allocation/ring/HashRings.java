package dev.apportion.allocation.ring;

import com.google.common.hash.Hashing;
import dev.apportion.allocation.internal.hash.SplitMix;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Factories for the two {@link HashRing}s: rendezvous (highest random weight) and consistent
 * hashing with virtual nodes. Both are pure functions of the member set and the key.
 *
 * <h2>Which one</h2>
 * <table>
 *   <caption>The two rings</caption>
 *   <tr><th></th><th>rendezvous</th><th>consistent</th></tr>
 *   <tr><td>lookup</td><td>O(members): one multiply-xorshift mix per member</td>
 *       <td>O(1) expected: a bucket index into the sorted tokens</td></tr>
 *   <tr><td>membership change</td><td>O(members) to copy the arrays</td>
 *       <td>O(tokens) merge, plus sorting the new member's tokens</td></tr>
 *   <tr><td>movement on a change</td><td>exactly minimal</td><td>minimal in expectation</td></tr>
 *   <tr><td>balance</td><td>binomial: ~1.3x peak/mean at 100 keys per member</td>
 *       <td>adds arc-length variance (~1/sqrt(virtual nodes)) to that</td></tr>
 * </table>
 *
 * <h2>Stability</h2>
 * A member is hashed once, when a ring is built, with Guava's
 * {@link Hashing#farmHashFingerprint64()} over its name's UTF-8 bytes (a fingerprint Guava
 * documents as never changing); scores and tokens are derived from that with the SplitMix64
 * finalizer. The same members and keys give the same placement on every JVM and in every
 * release; changing either function is a breaking change that the tests pin.
 *
 * @since 0.1.0
 */
public final class HashRings {
  /** Virtual nodes per unit of weight in a consistent-hash ring when none is given. */
  public static final int DEFAULT_VIRTUAL_NODES = 256;

  private HashRings() {}

  /**
   * A rendezvous ring over equally weighted members.
   *
   * @param members the members' names; at least one, no null or empty name; duplicates collapse
   * @return the ring
   * @throws NullPointerException if {@code members} or a name is null
   * @throws IllegalArgumentException if {@code members} is empty or a name is empty
   */
  public static HashRing rendezvous(Collection<String> members) {
    return new RendezvousRing(uniform(members));
  }

  /**
   * A weighted rendezvous ring: member {@code i} owns a share {@code w_i / sum(w)} of the keys in
   * expectation (logarithmic scoring, {@code -w / ln(u)}). Equal weights give the same placement
   * as {@link #rendezvous(Collection)}.
   *
   * @param weights the members and their weights (finite, &gt; 0)
   * @return the ring
   * @throws NullPointerException if {@code weights}, a name or a weight is null
   * @throws IllegalArgumentException if {@code weights} is empty, a name is empty or a weight is
   *     out of range
   */
  public static HashRing rendezvous(Map<String, Double> weights) {
    return new RendezvousRing(checked(weights));
  }

  /**
   * A consistent-hash ring over equally weighted members, with {@value #DEFAULT_VIRTUAL_NODES}
   * virtual nodes each.
   *
   * @param members the members' names; at least one, no null or empty name; duplicates collapse
   * @return the ring
   * @throws NullPointerException if {@code members} or a name is null
   * @throws IllegalArgumentException if {@code members} is empty or a name is empty
   */
  public static HashRing consistent(Collection<String> members) {
    return new ConsistentRing(uniform(members), DEFAULT_VIRTUAL_NODES);
  }

  /**
   * A weighted consistent-hash ring: member {@code i} gets {@code max(1, round(w_i * v))} virtual
   * nodes (at most 2^20), so its expected share of the keys is proportional to its weight. A ring
   * holds at most 2^20 members.
   *
   * @param weights the members and their weights (finite, &gt; 0)
   * @param virtualNodes virtual nodes per unit of weight, from 1 to 65536
   * @return the ring
   * @throws NullPointerException if {@code weights}, a name or a weight is null
   * @throws IllegalArgumentException if {@code weights} is empty, a name is empty, a weight or
   *     {@code virtualNodes} is out of range
   */
  public static HashRing consistent(Map<String, Double> weights, int virtualNodes) {
    if (virtualNodes < 1 || virtualNodes > 65536) {
      throw new IllegalArgumentException("virtual nodes must be from 1 to 65536: " + virtualNodes);
    }
    return new ConsistentRing(checked(weights), virtualNodes);
  }

  /**
   * The 64-bit hash of a member's name that both rings start from: Guava's FarmHash
   * fingerprint of the name's UTF-8 bytes. Stable across releases and JVMs.
   *
   * @param name a member's name
   * @return its hash
   */
  public static long memberHash(String name) {
    return Hashing.farmHashFingerprint64().hashString(name, StandardCharsets.UTF_8).asLong();
  }

  /**
   * The rendezvous score of a member for a key, as the unweighted rendezvous ring computes it:
   * {@code mix(key ^ memberHash)} with SplitMix64's finalizer, compared as signed longs, the
   * higher winning and ties going to the smaller name ({@link #rendezvousBeats}). Public so that
   * code holding a member's {@link #memberHash} can test "does this member beat that one for this
   * key" in constant time (what finds the keys a newly added member takes) and so that replicas
   * can check they agree.
   *
   * @param memberHash a member's {@link #memberHash}
   * @param key a 64-bit key
   * @return the score
   */
  public static long rendezvousScore(long memberHash, long key) {
    return mix(key ^ memberHash);
  }

  /**
   * SplitMix64's finalizer (Steele, Lea, Flood 2014): a bijective 64-bit mixer. Stable: its
   * output for a given input never changes, since placements are derived from it. Pure, no
   * allocation.
   *
   * @param z any value
   * @return the mixed value
   */
  public static long mix(long z) {
    return SplitMix.mix(z);
  }

  /**
   * The rendezvous rule, written once: a member whose score for a key is {@code score} beats one
   * whose score is {@code otherScore} when its score is higher, or when the scores are equal and
   * its name is the smaller ({@code nameFirst}: its name sorts before the other's by
   * {@link String#compareTo}, which is also its index being the smaller in a ring). Scores are
   * {@link #rendezvousScore}s, compared as signed longs.
   *
   * <p>Every rendezvous placement decides by this method: the rendezvous ring,
   * {@code dev.apportion.allocation.ownership.Ownership} and the central allocator's
   * {@code rendezvous} strategy all call it, so that all three pick the same owner for the same
   * members and key. Public for those callers in other packages.
   *
   * @param score a member's {@link #rendezvousScore} for a key
   * @param otherScore another member's score for the same key
   * @param nameFirst whether the first member's name sorts before the other's
   * @return true when the first member wins the key over the other
   */
  public static boolean rendezvousBeats(long score, long otherScore, boolean nameFirst) {
    return score > otherScore || (score == otherScore && nameFirst);
  }

  /**
   * {@link #rendezvousBeats(long, long, boolean)} for the weighted ring's scores (finite and
   * positive, so {@code >} and {@code ==} order them totally): the same rule, in one place.
   */
  static boolean rendezvousBeats(double score, double otherScore, boolean nameFirst) {
    return score > otherScore || (score == otherScore && nameFirst);
  }

  /**
   * Checks member names as the ring factories do and gives each weight 1, but accepts an empty
   * list: the one home of that validation, public so that
   * {@code dev.apportion.allocation.ownership.Ownership} (another package, which accepts an empty
   * member list) applies the same checks. Not needed by applications: the factories apply it.
   *
   * @param members the members' names; duplicates collapse
   * @return a new map from each name to 1, in name order; empty when {@code members} is
   * @throws NullPointerException if {@code members} or a name is null
   * @throws IllegalArgumentException if a name is empty
   */
  public static NavigableMap<String, Double> checkedMembers(Collection<String> members) {
    Objects.requireNonNull(members, "members must not be null");
    TreeMap<String, Double> weights = new TreeMap<>();
    for (String m : members) {
      weights.put(checkedName(m), 1.0);
    }
    return weights;
  }

  /**
   * Checks members and weights as the weighted ring factories do, but accepts an empty map: the
   * one home of that validation, public so that
   * {@code dev.apportion.allocation.ownership.Ownership} (another package) applies the same
   * checks. Not needed by applications: the factories apply it.
   *
   * @param weights the members and their weights (finite, &gt; 0)
   * @return a new map of the same members and weights, in name order
   * @throws NullPointerException if {@code weights}, a name or a weight is null
   * @throws IllegalArgumentException if a name is empty or a weight is out of range
   */
  public static NavigableMap<String, Double> checkedWeights(Map<String, Double> weights) {
    Objects.requireNonNull(weights, "weights must not be null");
    TreeMap<String, Double> copy = new TreeMap<>();
    for (Map.Entry<String, Double> e : weights.entrySet()) {
      String name = checkedName(e.getKey());
      double w = Objects.requireNonNull(e.getValue(), () -> "weight of '" + name + "' is null");
      if (!(w > 0) || Double.isInfinite(w)) {
        throw new IllegalArgumentException(
            "weight of '" + name + "' must be a finite number > 0: " + w);
      }
      copy.put(name, w);
    }
    return copy;
  }

  /**
   * Checks a member's name as the ring factories do: the one home of that validation, public so
   * that {@code dev.apportion.allocation.ownership.Ownership} (another package) applies it to its
   * local member's name. Not needed by applications.
   *
   * @param name a member's name
   * @return {@code name}
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is empty
   */
  public static String checkedName(String name) {
    Objects.requireNonNull(name, "member name must not be null");
    if (name.isEmpty()) {
      throw new IllegalArgumentException("member name must not be empty");
    }
    return name;
  }

  private static NavigableMap<String, Double> uniform(Collection<String> members) {
    return nonEmpty(checkedMembers(members));
  }

  static NavigableMap<String, Double> checked(Map<String, Double> weights) {
    return nonEmpty(checkedWeights(weights));
  }

  private static NavigableMap<String, Double> nonEmpty(NavigableMap<String, Double> weights) {
    if (weights.isEmpty()) {
      throw new IllegalArgumentException("a ring needs at least one member");
    }
    return weights;
  }
}
