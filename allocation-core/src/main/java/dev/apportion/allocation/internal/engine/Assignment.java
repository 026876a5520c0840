package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;

/**
 * What a {@link Placer} reads and writes, by <em>slot</em>: the small int the engine gives each
 * target it knows, stable while the target stays known. The engine's view holds every target;
 * {@code per-node} gives its fallback a view of the targets it cannot place itself.
 * Writer-thread only. Nothing here allocates.
 */
public interface Assignment {

  /**
   * The current owner.
   *
   * @param slot a slot in this view
   * @return its member, or null when unassigned
   */
  Member ownerOf(int slot);

  /**
   * The current owner's {@link Member#id()}: {@code ownerOf(slot)}'s id without reading the
   * member, for a pass over every target that compares owners by id.
   *
   * @param slot a slot in this view
   * @return the id, or -1 when unassigned
   */
  default int holderId(int slot) {
    Member m = ownerOf(slot);
    return m == null ? -1 : m.id();
  }

  /**
   * Assigns a target to {@code member}, or unassigns it when {@code member} is null.
   *
   * @param slot a slot in this view
   * @param member a member of the current set, or null
   */
  void place(int slot, Member member);

  /**
   * The target in a slot, with its latest labels.
   *
   * @param slot a slot in this view
   * @return the target
   */
  Target target(int slot);

  /**
   * The target's identity hash ({@link Target#hash()}), read from a dense array.
   *
   * @param slot a slot in this view
   * @return the hash
   */
  long hash(int slot);

  /**
   * The target's job, as a small id shared by every target of that job.
   *
   * @param slot a slot in this view
   * @return the job id
   */
  int job(int slot);

  /**
   * The target's cost ({@link Target#cost()}, 1 unless the caller attached one), read from a
   * dense array: a non-negative {@code long}, so sums are exact and do not depend on the order
   * they are taken in. {@link Member#cost()} is the sum over a member's targets.
   *
   * @param slot a slot in this view
   * @return the cost
   */
  long cost(int slot);

  /**
   * How many targets this view holds.
   *
   * @return the count
   */
  int size();

  /**
   * The {@code i}-th target of this view in identity-hash order ({@link TargetOrder}).
   *
   * @param i from 0 to {@code size() - 1}
   * @return its slot
   */
  int slotAt(int i);

  /**
   * The identity hash of the {@code i}-th target of this view: {@code hash(slotAt(i))}, which a
   * view may keep in a dense array in view order, so that a pass over the view reads it
   * sequentially instead of once per slot.
   *
   * @param i from 0 to {@code size() - 1}
   * @return its hash
   */
  default long hashAt(int i) {
    return hash(slotAt(i));
  }

  /**
   * One past the largest slot of this view when its slots can be walked in memory order, or -1
   * when only {@link #slotAt} walks them. Every slot below the limit is either this view's or
   * has no owner. A pass whose result does not depend on the order it visits the targets in
   * (each target decided alone) reads the per-slot arrays sequentially that way, instead of at
   * random through the identity-hash order.
   *
   * @return the limit, or -1
   */
  default int slotLimit() {
    return -1;
  }

  /**
   * How many targets {@code member} holds outside this view: load its placer does not see, but
   * a skew limit counts (the partitioned layer). In {@code per-node}'s fallback view, the
   * member's node-local targets; 0 in the engine's view, which holds every target.
   *
   * @param member a member of the current set
   * @return the count, a function of the target and collector sets
   */
  default int heldOutside(Member member) {
    return 0;
  }

  /**
   * Whether every owner in this view was written by the placers, or unassigned by the engine as
   * an operation's orphans: nothing else (the engine's per-collector limit) moves or unassigns
   * a target here. A layer that left every target of the view with an owner of its choosing may
   * then find, on a collector change, what lost its owner among the change's orphans instead of
   * reading every owner. False unless the view says so.
   *
   * @return whether owners change only as the placers and the orphans say
   */
  default boolean ownersAsPlaced() {
    return false;
  }

  /**
   * Whether the current operation may have given a target of this view other labels (a target
   * known before, kept in its slot with a new instance): a layer that keys targets by their
   * labels then looks every target up again, rather than only the added ones. True unless the
   * view knows otherwise.
   *
   * @return false only when no target of this view was relabeled in this operation
   */
  default boolean mayHaveRelabeled() {
    return true;
  }
}
