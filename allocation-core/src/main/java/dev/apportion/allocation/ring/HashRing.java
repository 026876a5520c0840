package dev.apportion.allocation.ring;

import java.util.List;
import java.util.Map;

/**
 * Maps 64-bit keys to members. A ring is immutable and thread-safe; a membership change builds
 * a new ring ({@link #withMembers}), which may share work with this one.
 *
 * <p>Placement depends only on the key and on the member set (names and weights): never on the
 * order members were given in, never on a ring's history, and never on the JVM. Members are
 * indexed {@code 0 .. size() - 1} in name order, so an index is stable for a given member set.
 *
 * <p>Keys are expected to be well-mixed 64-bit hashes, such as
 * {@link dev.apportion.allocation.Target#hash()}; a ring never hashes a key again, and hashes each
 * member once, when it is built.
 *
 * @since 0.1.0
 */
public interface HashRing {

  /**
   * The number of members.
   *
   * @return the count, at least 1
   */
  int size();

  /**
   * The members' names, in name order (index order).
   *
   * @return an unmodifiable list
   */
  List<String> members();

  /**
   * The name of member {@code index}.
   *
   * @param index from 0 to {@code size() - 1}
   * @return the name
   * @throws IndexOutOfBoundsException if {@code index} is out of range
   */
  String member(int index);

  /**
   * The weight of member {@code index}, as given when the ring was built (1 when unweighted).
   *
   * @param index from 0 to {@code size() - 1}
   * @return the weight, a finite number &gt; 0
   * @throws IndexOutOfBoundsException if {@code index} is out of range
   */
  double weight(int index);

  /**
   * The index of the member that owns {@code key}. Allocation-free; the cost of one lookup is
   * documented on each implementation.
   *
   * @param key a 64-bit hash
   * @return the owner's index
   */
  int ownerIndex(long key);

  /**
   * The name of the member that owns {@code key}: {@code member(ownerIndex(key))}.
   *
   * @param key a 64-bit hash
   * @return the owner's name
   */
  default String owner(long key) {
    return member(ownerIndex(key));
  }

  /**
   * The first {@code k} distinct members for {@code key}, in preference order (the first is
   * {@link #owner}); for replication, or for a fallback when the owner cannot take the key.
   * Allocates the returned list.
   *
   * @param key a 64-bit hash
   * @param k how many; capped at {@link #size()}
   * @return the owners' names, most preferred first
   * @throws IllegalArgumentException if {@code k} is negative
   */
  List<String> owners(long key, int k);

  /**
   * Fills {@code out} with the indices of the first {@code out.length} distinct members for
   * {@code key}, in preference order (the first is {@link #ownerIndex}). The allocation-free form
   * of {@link #owners}; bounded-load placement walks this list when the owner is full.
   *
   * @param key a 64-bit hash
   * @param out where to write the indices
   * @return how many were written: {@code min(out.length, size())}
   */
  int ownerIndices(long key, int[] out);

  /**
   * A ring of the same kind and configuration over another member set. Members present in both
   * keep their placement work where the implementation allows (a consistent-hash ring keeps their
   * tokens, so the cost is proportional to the tokens of members added, plus one linear pass).
   *
   * @param weights the new members and their weights (finite, &gt; 0); at least one
   * @return the new ring
   * @throws IllegalArgumentException if {@code weights} is empty or a weight is out of range
   */
  HashRing withMembers(Map<String, Double> weights);
}
