package dev.apportion.allocation.internal;

import java.util.AbstractList;
import java.util.Arrays;
import java.util.List;
import java.util.RandomAccess;

/** An immutable, name-ordered set of {@link Member}s: the collector set of one moment. */
final class Members extends AbstractList<Member> implements RandomAccess {
  static final Members EMPTY = new Members(new Member[0]);

  private final Member[] members;
  private final long[] hashes;

  Members(Member[] sortedByName) {
    this.members = sortedByName;
    this.hashes = new long[sortedByName.length];
    for (int i = 0; i < sortedByName.length; i++) {
      hashes[i] = sortedByName[i].hash();
    }
  }

  @Override
  public Member get(int index) {
    return members[index];
  }

  @Override
  public int size() {
    return members.length;
  }

  /**
   * Every member's {@link Member#hash}, in index order: what a placement loop reads instead of
   * calling a method per member. Must not be modified.
   *
   * @return the hashes
   */
  public long[] hashes() {
    return hashes;
  }

  /**
   * The member with {@code name}, or null.
   *
   * @param name a name
   * @return the member
   */
  public Member byName(String name) {
    int lo = 0;
    int hi = members.length - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      int c = members[mid].name().compareTo(name);
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return members[mid];
      }
    }
    return null;
  }

  /** The names, in order. @return a new list */
  public List<String> names() {
    return Arrays.stream(members).map(Member::name).toList();
  }
}
