package dev.apportion.allocation;

import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * The allocation engine: it holds the current targets and collectors and decides which collector
 * scrapes which target. Create one with {@link Allocators#builder(String)}; every instance has its
 * own state, nothing is shared between instances.
 *
 * <h2>Thread-safety</h2>
 * <ul>
 *   <li><b>Writers</b> ({@link #setTargets}, {@link #setCollectors}) may be called from several
 *       threads; they are serialized by a lock private to the instance and may block behind one
 *       another. Each call is atomic: bad input is rejected before anything changes, and a valid
 *       call is applied completely and published at once. (An exception from an
 *       {@link AllocationListener} reaches the caller after the change was applied and every
 *       listener was told.) A listener must not call them: that is an
 *       {@link IllegalStateException}.
 *   <li><b>Readers</b> ({@link #targetsFor}, {@link #snapshot}, {@link #strategy}) never block and
 *       never take a lock: they read the last published {@link Allocation}, an immutable snapshot
 *       that is replaced atomically at the end of each write. A reader never sees a half-applied
 *       change.
 * </ul>
 *
 * <h2>Completeness</h2>
 * After every call, every target of the last {@link #setTargets} is either assigned to exactly one
 * collector of the current set or listed in {@link Allocation#unassigned()}; never both, never
 * neither.
 *
 * <h2>An empty collector set</h2>
 * {@code setCollectors} with an empty collection is treated as a transient blip (a watch that
 * reconnected, a rollout that briefly had no ready pod): the last non-empty collector set and its
 * assignment stand until the next non-empty set arrives. Targets set meanwhile are placed on that
 * last set. Before any non-empty collector set, every target is unassigned.
 *
 * @since 0.1.0
 */
public interface Allocator {

  /**
   * Replaces the set of targets. Targets no longer present are dropped, new ones are placed, and
   * targets already known stay where their strategy keeps them; a known target whose only change
   * is in {@code __meta_*} labels keeps its collector and carries the new labels (except under
   * {@code per-node} when the change names another node: the target follows its node). Duplicates by
   * identity collapse to the last one given (its labels win).
   *
   * <p>Cost: proportional to the size of {@code targets} to find the difference, plus the
   * strategy's cost for what changed. Finding the difference is cheapest when the targets come in
   * the order of the last call (as a discovery refresh lists them): each is compared with the one
   * given at its place, reading memory in order; the order never changes the result. Blocks
   * behind other writers; notifies listeners before returning.
   *
   * @param targets the full current target set; not null, no null elements
   * @throws NullPointerException if {@code targets} or one of its elements is null
   */
  void setTargets(Collection<Target> targets);

  /**
   * Replaces the set of collectors. Collectors no longer present lose their targets, which are
   * re-placed; new collectors receive what their strategy gives them. An empty collection is a
   * transient blip (see the class documentation).
   *
   * <p>Cost: depends on the strategy and is documented on it; for most it is proportional to the
   * targets that move. Blocks behind other writers; notifies listeners before returning.
   *
   * @param collectors the full current collector set; not null, no null elements, unique names
   * @throws NullPointerException if {@code collectors} or one of its elements is null
   * @throws IllegalArgumentException if two collectors share a name; the allocator's state is
   *     then left exactly as it was
   */
  void setCollectors(Collection<Collector> collectors);

  /**
   * Replaces the node-to-zone topology the caller knows (for Kubernetes, each Node's {@code
   * topology.kubernetes.io/zone} label; {@code allocation-kubernetes}' {@code
   * KubernetesNodeZones} watches it). A target whose labels name no zone takes its node's zone
   * from here first, then from the collectors on its node (docs/api.md gives the order). Only
   * allocators that partition by zone read it ({@code per-node}'s fallback by default, the
   * others after {@link Allocators.Builder#zoneAware()}); the others only store it.
   *
   * <p>Cost: O(nodes) to copy the map, plus, when the zone of a node with targets changed, the
   * strategy's cost of re-placing the targets whose partition changed. Blocks behind other
   * writers; listeners hear it as a {@link AllocationChange.Cause#SET_COLLECTORS} change.
   *
   * @param zoneByNode node name to zone; not null, no null key or value (blank values mean "no
   *     zone"); copied
   * @throws NullPointerException if {@code zoneByNode}, a key or a value is null
   * @throws UnsupportedOperationException if this implementation takes no topology (the built-in
   *     allocators all do)
   */
  default void setNodeZones(Map<String, String> zoneByNode) {
    throw new UnsupportedOperationException(getClass().getName() + " takes no node topology");
  }

  /**
   * The targets of {@code job} assigned to {@code collector}, in identity-hash order. Equivalent to
   * {@code snapshot().targetsFor(collector, job)}.
   *
   * <p>Never blocks, does not copy: the list returned is an immutable part of the current
   * snapshot.
   *
   * @param collector a collector's name
   * @param job a job's name
   * @return the targets; empty, never null, for an unknown collector or job
   * @throws NullPointerException if {@code collector} or {@code job} is null
   */
  List<Target> targetsFor(String collector, String job);

  /**
   * The current state as one immutable, internally consistent snapshot. Never blocks; does not
   * copy (the snapshot is the one readers share).
   *
   * @return the snapshot
   */
  Allocation snapshot();

  /**
   * The strategy's name, as given to {@link Allocators#builder(String)}.
   *
   * @return the name
   */
  String strategy();
}
