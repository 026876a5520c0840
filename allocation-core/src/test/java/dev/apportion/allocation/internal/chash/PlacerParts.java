package dev.apportion.allocation.internal.chash;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.LongSort;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Test fixtures for the parts of {@link ConsistentHashingPlacer}: members built without an
 * engine, and a view ({@link Assignment}) over plain arrays.
 */
final class PlacerParts {
  private PlacerParts() {}

  /**
   * Members named {@code c-000}, {@code c-001}, ..., with the capacities in turn and ids from 0.
   *
   * @param count how many
   * @param capacities the capacities, cycled
   * @return the members, in name order
   */
  static Members members(int count, double... capacities) {
    Member[] out = new Member[count];
    for (int i = 0; i < count; i++) {
      out[i] = new Member(Collector.of(String.format("c-%03d", i))
          .withCapacity(capacities[i % capacities.length]), i);
    }
    return new Members(out);
  }

  /**
   * The members with the given ids, named by their index in {@code all}.
   *
   * @param all the pool of members, in name order
   * @param ids which of them
   * @return a set of them, in name order
   */
  static Members subset(List<Member> all, List<Integer> ids) {
    List<Member> picked = new ArrayList<>();
    for (int id : ids) {
      picked.add(all.get(id));
    }
    picked.sort(Comparator.comparing(Member::name));
    return new Members(picked.toArray(new Member[0]));
  }

  /** Heavy-tailed costs from a seed (Pareto, shape 1.2, scale 5, at most 500). */
  static long[] paretoCosts(int n, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    long[] out = new long[n];
    for (int i = 0; i < n; i++) {
      out[i] = Math.min(500, (long) Math.floor(5.0 / Math.pow(1.0 - r.nextDouble(), 1 / 1.2)));
    }
    return out;
  }

  /** Random hashes from a seed. */
  static long[] hashes(int n, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    long[] out = new long[n];
    for (int i = 0; i < n; i++) {
      out[i] = r.nextLong();
    }
    return out;
  }

  /**
   * A view over arrays by slot, in identity-hash order (the hashes as unsigned numbers), as the
   * engine's; owners start unassigned.
   */
  static final class View implements Assignment {
    private final long[] hash;
    private final long[] cost;
    private final Member[] owner;
    private final int[] order;
    private final int[] held;

    /**
     * A view whose slot {@code s} holds the target with {@code hash[s]} and {@code cost[s]}.
     *
     * @param hash by slot
     * @param cost by slot
     */
    View(long[] hash, long[] cost) {
      this.hash = hash.clone();
      this.cost = cost.clone();
      this.owner = new Member[hash.length];
      this.held = new int[4096];
      Integer[] slots = new Integer[hash.length];
      for (int i = 0; i < slots.length; i++) {
        slots[i] = i;
      }
      Arrays.sort(slots, (a, b) -> Long.compareUnsigned(this.hash[a], this.hash[b]));
      this.order = Arrays.stream(slots).mapToInt(Integer::intValue).toArray();
    }

    /** Sets a slot's current cost. */
    void cost(int slot, long c) {
      cost[slot] = c;
    }

    /** Sets what a member holds outside this view. */
    void heldOutside(Member m, int count) {
      held[m.id()] = count;
    }

    @Override
    public Member ownerOf(int slot) {
      return owner[slot];
    }

    @Override
    public void place(int slot, Member member) {
      owner[slot] = member;
    }

    @Override
    public Target target(int slot) {
      throw new UnsupportedOperationException();
    }

    @Override
    public long hash(int slot) {
      return hash[slot];
    }

    @Override
    public int job(int slot) {
      return 0;
    }

    @Override
    public long cost(int slot) {
      return cost[slot];
    }

    @Override
    public int size() {
      return order.length;
    }

    @Override
    public int slotAt(int i) {
      return order[i];
    }

    @Override
    public int heldOutside(Member member) {
      return held[member.id()];
    }
  }

  /**
   * The ring, bounds, scratch and matching of one placer, run as {@link ConsistentHashingPlacer}
   * runs them (without the churn rule: every target is placed with its current cost).
   */
  static final class Pipeline {
    final LongSort longSort = new LongSort();
    final TokenRing ring;
    final LoadBounds bounds;
    final ViewScratch scratch = new ViewScratch();
    final BoundedMatching matching;
    final FloorPhase floorPhase;
    private final boolean twoSided;
    private boolean weighted;

    Pipeline(int virtualNodes, double loadFactor, double costLoadFactor, boolean twoSided) {
      this.ring = new TokenRing(virtualNodes);
      this.bounds = new LoadBounds(loadFactor, costLoadFactor, twoSided);
      this.matching = new BoundedMatching(ring, bounds, scratch, longSort);
      this.floorPhase = new FloorPhase(ring, bounds, scratch);
      this.twoSided = twoSided;
    }

    /**
     * The ring and bounds for the members and the view's current costs, then the matching.
     *
     * @return whether the bound is two-sided and weighted (the floor phase may run)
     */
    boolean match(Members members, Assignment view) {
      ring.update(members);
      int n = view.size();
      long total = 0;
      boolean unit = true;
      for (int i = 0; i < n; i++) {
        long c = view.cost(view.slotAt(i));
        total += c;
        unit &= c == 1;
      }
      weighted = !unit || !members.uniformCapacity();
      bounds.compute(members, total, n, view, weighted, ring.idSpan());
      bounds.clearLoads();
      scratch.ensure(n);
      scratch.ensureDistance(n);
      for (int i = 0; i < n; i++) {
        scratch.cost[i] = view.cost(view.slotAt(i));
      }
      boolean floors = weighted && twoSided && members.size() > 1;
      matching.match(members, view, total, weighted && twoSided, floors);
      return floors;
    }

    /** The member chosen for each slot, by slot. */
    Member[] bySlot(Assignment view) {
      Member[] out = new Member[view.size()];
      for (int i = 0; i < view.size(); i++) {
        out[view.slotAt(i)] = ring.member(scratch.chosen[i]);
      }
      return out;
    }
  }
}
