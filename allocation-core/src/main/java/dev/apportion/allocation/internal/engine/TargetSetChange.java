package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.IntList;
import java.util.List;

/**
 * What one {@code setTargets} call changed, found once by {@link TargetIntake} before any placer
 * runs: the value the engine hands, part by part, to the {@link Placer}. Its lists belong to the
 * operation's {@link Journal} (or the intake) and hold while the operation lasts; nobody modifies
 * them, and every slot list is in {@link TargetOrder} but {@code relabeled}.
 *
 * @param added new targets' slots, unassigned, in {@link TargetOrder}
 * @param removed dropped targets' slots, already unassigned and out of the order
 * @param relabeled known targets whose labels changed (in the order first relabeled)
 * @param relabeledFrom the instance each {@code relabeled} slot had before the call
 * @param renoded of the relabeled, those whose new labels may change where the placer places
 *     them ({@link Placer#placementLabelsChanged})
 * @param recosted known targets whose cost changed (their owners' totals already updated)
 * @param duplicates how many targets given repeated one given earlier in the call
 */
record TargetSetChange(IntList added, IntList removed, IntList relabeled,
    List<Target> relabeledFrom, IntList renoded, IntList recosted, int duplicates) {}
