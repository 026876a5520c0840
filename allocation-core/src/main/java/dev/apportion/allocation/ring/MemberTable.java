package dev.apportion.allocation.ring;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;

/**
 * What both rings keep about their members: names in name order (an index is a position here),
 * each name's {@link HashRings#memberHash} computed once, and the weights.
 */
abstract class MemberTable implements HashRing {
  final String[] names;
  final long[] hashes;
  final double[] weights;
  private final List<String> members;

  /** Hashes every member. */
  MemberTable(NavigableMap<String, Double> sortedWeights) {
    this(sortedWeights, null);
  }

  /**
   * Takes the hash of a member from {@code known} when it has one, so that a ring built from
   * another does not hash the survivors again.
   */
  MemberTable(NavigableMap<String, Double> sortedWeights, Map<String, Long> known) {
    int n = sortedWeights.size();
    names = sortedWeights.keySet().toArray(new String[0]);
    hashes = new long[n];
    weights = new double[n];
    int i = 0;
    for (Map.Entry<String, Double> e : sortedWeights.entrySet()) {
      Long h = known == null ? null : known.get(e.getKey());
      hashes[i] = h != null ? h : HashRings.memberHash(e.getKey());
      weights[i++] = e.getValue();
    }
    members = Collections.unmodifiableList(Arrays.asList(names));
  }

  @Override
  public final int size() {
    return names.length;
  }

  @Override
  public final List<String> members() {
    return members;
  }

  @Override
  public final String member(int index) {
    return names[index];
  }

  @Override
  public final double weight(int index) {
    return weights[index];
  }
}
