package dev.apportion.allocation.internal;

import java.util.List;

/**
 * A change of the collector set (the members), as a {@link Placer} sees it: the collector set's
 * change, where {@link dev.apportion.allocation.AllocationChange} is the allocation's.
 *
 * @param before the previous members (empty before the first non-empty set)
 * @param after the new members, never empty
 * @param added members new to the set, name order
 * @param removed members gone from the set, name order; they hold no target any more
 * @param renoded members whose name stayed but whose node changed, name order
 * @param reweighted members whose name stayed but whose {@linkplain Member#capacity() capacity}
 *     changed (possibly with the node), name order; already updated
 * @param orphans slots of the targets that must be placed again, identity-hash order: those of
 *     removed members, or, on the first non-empty set, every target; already unassigned
 */
record CollectorSetChange(Members before, Members after, List<Member> added,
    List<Member> removed, List<Member> renoded, List<Member> reweighted, IntList orphans) {

  /**
   * A copy of this change for another view of the targets.
   *
   * @param viewOrphans the orphans that belong to that view
   * @return the copy
   */
  public CollectorSetChange withOrphans(IntList viewOrphans) {
    return new CollectorSetChange(before, after, added, removed, renoded, reweighted,
        viewOrphans);
  }
}
