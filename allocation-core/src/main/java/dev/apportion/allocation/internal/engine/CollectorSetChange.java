package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.internal.collections.IntList;
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
 *     removed members, or, on the first non-empty set, every target, and in a partition's or
 *     per-node's pool view the targets that came into the view in this call; already unassigned
 * @param arrivals of the orphans, the slots new to the view in this call (identity-hash order),
 *     or null when the view's targets may have changed in ways the caller does not say
 * @param departures slots that left the view in this call (their hashes still readable), or
 *     null as for {@code arrivals}
 */
public record CollectorSetChange(Members before, Members after, List<Member> added,
    List<Member> removed, List<Member> renoded, List<Member> reweighted, IntList orphans,
    IntList arrivals, IntList departures) {

  /**
   * A change of the engine's own view, whose targets never change in a collector change.
   *
   * @param before the previous members
   * @param after the new members
   * @param added members new to the set
   * @param removed members gone from the set
   * @param renoded members whose node changed
   * @param reweighted members whose capacity changed
   * @param orphans the slots to place again
   */
  CollectorSetChange(Members before, Members after, List<Member> added, List<Member> removed,
      List<Member> renoded, List<Member> reweighted, IntList orphans) {
    this(before, after, added, removed, renoded, reweighted, orphans, new IntList(),
        new IntList());
  }

  /**
   * A copy of this change for another view of the targets, whose arrivals and departures are
   * not said (null).
   *
   * @param viewOrphans the orphans that belong to that view
   * @return the copy
   */
  public CollectorSetChange withOrphans(IntList viewOrphans) {
    return new CollectorSetChange(before, after, added, removed, renoded, reweighted,
        viewOrphans, null, null);
  }

  /** Whether the view's arrivals and departures are known (none for the engine's own view). */
  public boolean viewChangeKnown() {
    return arrivals != null && departures != null;
  }
}
