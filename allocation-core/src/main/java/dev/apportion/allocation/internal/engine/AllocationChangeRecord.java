package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import java.util.List;

/** The {@link AllocationChange} the engine hands to listeners: the allocation's change. */
record AllocationChangeRecord(Cause cause, String strategy, Allocation before, Allocation after,
    List<Move> moves, List<Target> relabeled, int reassigned, long durationNanos)
    implements AllocationChange {}
