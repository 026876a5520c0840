package dev.apportion.allocation.internal.engine;

import java.util.AbstractList;
import java.util.Arrays;
import java.util.List;
import java.util.RandomAccess;

/**
 * An immutable, name-ordered set of {@link Member}s: the collector set of one moment, with their
 * capacities as of that moment (read once here, so a placement loop reads flat arrays).
 */
public final class Members extends AbstractList<Member> implements RandomAccess {
  public static final Members EMPTY = new Members(new Member[0]);

  private final Member[] members;
  private final long[] hashes;
  /** Every member's id, in index order. */
  private final int[] ids;
  private final double[] capacities;
  private final double totalCapacity;
  private final boolean uniformCapacity;
  /** By index: the position of its capacity in {@link #classCapacities}. */
  private final int[] capacityClass;
  /** The distinct capacities, ascending. */
  private final double[] classCapacities;
  /** The largest id, or -1 when empty. */
  private final int maxId;

  public Members(Member[] sortedByName) {
    this.members = sortedByName;
    int n = sortedByName.length;
    this.hashes = new long[n];
    this.ids = new int[n];
    this.capacities = new double[n];
    double total = 0;
    int max = -1;
    boolean uniform = true;
    // Few calls a member (Passes). Capacities are finite and positive, so == is
    // Double.compare's equality.
    for (int i = 0; i < n; i++) {
      Member m = sortedByName[i];
      hashes[i] = m.hash();
      int id = m.id();
      ids[i] = id;
      if (id > max) {
        max = id;
      }
      double capacity = m.capacity();
      capacities[i] = capacity;
      total += capacity;
      uniform &= capacity == capacities[0];
    }
    this.totalCapacity = total;
    this.maxId = max;
    this.uniformCapacity = uniform;
    if (uniform) {
      // One class (or none), which every member is in: the usual set, with no sort.
      this.classCapacities = n == 0 ? new double[0] : new double[] {capacities[0]};
      this.capacityClass = new int[n];
      return;
    }
    // Sorted, then each value once: no boxing stream on every collector change.
    double[] sorted = capacities.clone();
    Arrays.sort(sorted);
    int d = 0;
    for (int i = 0; i < n; i++) {
      if (d == 0 || Double.compare(sorted[d - 1], sorted[i]) != 0) {
        sorted[d++] = sorted[i];
      }
    }
    double[] distinct = Arrays.copyOf(sorted, d);
    this.classCapacities = distinct;
    this.capacityClass = new int[n];
    for (int i = 0; i < n; i++) {
      capacityClass[i] = Arrays.binarySearch(distinct, capacities[i]);
    }
  }

  /**
   * Every member's capacity ({@link Member#capacity()}), in index order. Must not be modified.
   *
   * @return the capacities
   */
  public double[] capacities() {
    return capacities;
  }

  /**
   * The sum of the capacities, added in name order (so every replica gets the same double).
   *
   * @return the sum; 0 when empty
   */
  public double totalCapacity() {
    return totalCapacity;
  }

  /**
   * Whether every member has the same capacity (always, unless the caller set capacities): a
   * strategy then places exactly as it would without capacities.
   *
   * @return true when uniform (or empty)
   */
  public boolean uniformCapacity() {
    return uniformCapacity;
  }

  /**
   * By index, the position of the member's capacity among {@link #classCapacities()}. Must not be
   * modified.
   *
   * @return the classes
   */
  public int[] capacityClass() {
    return capacityClass;
  }

  /**
   * The distinct capacities, ascending. Must not be modified.
   *
   * @return the capacities
   */
  public double[] classCapacities() {
    return classCapacities;
  }

  /**
   * This set without some of its members: {@code next}, the members {@code kept} marks (by index
   * in this set), in index order, their collectors unchanged since this set was made. When the
   * capacities are uniform the arrays are copied from this set's (a pass over arrays, no call a
   * member: {@link dev.apportion.allocation.internal.collections.Passes}); otherwise the set is
   * built from the members.
   *
   * @param kept by index in this set, whether the member stays
   * @param next the members that stay, in index order
   * @return the set
   * @throws IllegalArgumentException if {@code next} and {@code kept} disagree on the count
   */
  Members keeping(boolean[] kept, Member[] next) {
    return uniformCapacity ? new Members(this, kept, next) : new Members(next);
  }

  private Members(Members from, boolean[] kept, Member[] next) {
    int n = next.length;
    this.members = next;
    this.hashes = new long[n];
    this.ids = new int[n];
    this.capacities = new double[n];
    int w = 0;
    int max = -1;
    double total = 0;
    for (int i = 0; i < from.members.length; i++) {
      if (kept[i]) {
        if (w == n) {
          throw new IllegalArgumentException("more members kept than given");
        }
        hashes[w] = from.hashes[i];
        int id = from.ids[i];
        ids[w] = id;
        if (id > max) {
          max = id;
        }
        capacities[w] = from.capacities[i];
        // Added in name order, as the constructor adds them: the same double.
        total += capacities[w];
        w++;
      }
    }
    if (w != n) {
      throw new IllegalArgumentException(n + " members given, " + w + " kept");
    }
    this.totalCapacity = total;
    this.maxId = max;
    this.uniformCapacity = true;
    this.classCapacities = n == 0 ? new double[0] : new double[] {from.classCapacities[0]};
    this.capacityClass = new int[n];
  }

  /**
   * The members in index order, as an array a pass reads without a call per member. Must not be
   * modified.
   *
   * @return the members
   */
  public Member[] array() {
    return members;
  }

  /**
   * Every member's {@link Member#id}, in index order: what a pass over the members by id reads
   * instead of two calls a member ({@link dev.apportion.allocation.internal.collections.Passes}).
   * Must not be modified.
   *
   * @return the ids
   */
  public int[] ids() {
    return ids;
  }

  /**
   * The largest member id, or -1 when empty: the length an array by id needs, less one.
   *
   * @return the id
   */
  public int maxId() {
    return maxId;
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
