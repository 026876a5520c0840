package dev.apportion.allocation;

import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * An immutable, internally consistent view of an {@link Allocator}'s whole state at one moment:
 * its collectors, its targets, and which collector each target is assigned to. Safe to share
 * between threads; every method is non-blocking and none copies the state.
 *
 * <h2>Unassigned targets</h2>
 * {@link #unassigned()} holds the targets that are known but placed nowhere. A target is
 * unassigned for one of these reasons only:
 * <ol>
 *   <li>no collector has been set yet (the allocator has never seen a non-empty collector set);
 *   <li>the {@code per-node} strategy runs without a fallback and the target has no node, or no
 *       collector runs on its node;
 *   <li>a per-collector limit is set ({@code maxTargetsPerCollector}, {@code maxCostPerCollector})
 *       and the target fits on no collector;
 *   <li>{@linkplain Allocators.Builder#replicas replicas} are asked for and the target has fewer
 *       than {@link #replicas()} owners (fewer collectors than replicas, or limits):
 *       {@link #ownersOf} says which it has.
 * </ol>
 *
 * <h2>Replicas</h2>
 * With {@link #replicas()} k &gt; 1 each target has up to k owners. {@link #collectorOf} is the
 * primary, {@link #ownersOf} lists them all, and {@link #targetsFor}, {@link #jobsFor},
 * {@link #targetCount} and {@link #costOf} count every replica a collector holds.
 *
 * @since 0.1.0
 */
public interface Allocation {

  /**
   * The collectors, ordered by name.
   *
   * @return an unmodifiable set
   */
  Set<Collector> collectors();

  /**
   * Every known target, assigned or not, in identity-hash order.
   *
   * @return an unmodifiable set
   */
  Set<Target> targets();

  /**
   * The collector {@code target} is assigned to. Looks up by identity, so a target equal to a
   * known one (differing only in {@code __meta_*} labels) finds it. Cost: a hash lookup.
   *
   * @param target a target
   * @return the collector's name; empty when the target is unknown or unassigned
   * @throws NullPointerException if {@code target} is null
   */
  Optional<String> collectorOf(Target target);

  /**
   * Every collector that holds {@code target}: its primary ({@link #collectorOf}) first, then its
   * further replicas in the order they were placed. Looks up as {@link #collectorOf} does.
   *
   * <p>The default implementation answers {@link #collectorOf} as a list, for allocators with one
   * replica.
   *
   * @param target a target
   * @return an unmodifiable list of distinct names, at most {@link #replicas()} long; empty when
   *     the target is unknown or unassigned
   * @throws NullPointerException if {@code target} is null
   */
  default List<String> ownersOf(Target target) {
    return collectorOf(target).map(List::of).orElse(List.of());
  }

  /**
   * How many collectors each target is placed on when there are enough of them: the allocator's
   * {@linkplain Allocators.Builder#replicas replicas}. Cost: constant.
   *
   * @return 1 (the default) or more
   */
  default int replicas() {
    return 1;
  }

  /**
   * The known targets that are assigned to no collector, or with replicas to fewer than
   * {@link #replicas()} (see the class documentation for why).
   *
   * @return an unmodifiable set, in identity-hash order
   */
  Set<Target> unassigned();

  /**
   * The targets of {@code job} assigned to {@code collector}, in identity-hash order. Does not
   * copy.
   *
   * @param collector a collector's name
   * @param job a job's name
   * @return an unmodifiable list; empty for an unknown collector or job
   * @throws NullPointerException if {@code collector} or {@code job} is null
   */
  List<Target> targetsFor(String collector, String job);

  /**
   * The jobs that have at least one target on {@code collector}.
   *
   * @param collector a collector's name
   * @return an unmodifiable set, in name order; empty for an unknown collector
   * @throws NullPointerException if {@code collector} is null
   */
  Set<String> jobsFor(String collector);

  /**
   * How many targets {@code collector} holds, all jobs together. Cost: constant.
   *
   * @param collector a collector's name
   * @return the count; 0 for an unknown collector
   * @throws NullPointerException if {@code collector} is null
   */
  int targetCount(String collector);

  /**
   * How many targets are placed outside their partition: under a zone-aware {@code per-node}
   * fallback or a {@linkplain Allocators.Builder#partitionBy partitioned} strategy, the targets
   * whose partition (zone) has no collector, plus those spilled over the skew limit; with zones,
   * these are the cross-zone scrapes the allocator knows of. Targets whose partition is unknown
   * are not counted. Cost: constant; never blocks.
   *
   * @return the count; 0 for an allocator that does not partition
   */
  default int outsidePartition() {
    return 0;
  }

  /**
   * The total {@linkplain Target#cost() cost} of the targets {@code collector} holds, as of this
   * snapshot. Cost: constant.
   *
   * <p>The default implementation counts targets (every target costing
   * {@value Target#DEFAULT_COST}); the built-in allocators return the sum of the costs last given
   * to {@code setTargets}.
   *
   * @param collector a collector's name
   * @return the total; 0 for an unknown collector
   * @throws NullPointerException if {@code collector} is null
   * @since 0.1.0
   */
  default long costOf(String collector) {
    return targetCount(collector);
  }
}
