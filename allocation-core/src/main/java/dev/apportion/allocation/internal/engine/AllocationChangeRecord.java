package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import java.util.List;

/**
 * The {@link AllocationChange} the engine hands to listeners: the allocation's change.
 *
 * @param cause the call that caused it
 * @param strategy the strategy's name
 * @param before the snapshot before
 * @param after the snapshot after
 * @param moves every placement that changed
 * @param relabeled targets that kept their collector with new labels
 * @param reassigned moves from one collector to another
 * @param durationNanos how long the change took
 */
public record AllocationChangeRecord(Cause cause, String strategy, Allocation before, Allocation after,
    List<Move> moves, List<Target> relabeled, int reassigned, long durationNanos)
    implements AllocationChange {}
