/**
 * The allocation engine every built-in strategy runs on: one {@link
 * dev.apportion.allocation.internal.engine.Engine} per allocator.
 *
 * <p><b>What lives here.</b> The writer's state, as dense primitive data: {@link
 * dev.apportion.allocation.internal.engine.Slots} (the store: every known target in an int slot,
 * found through {@link dev.apportion.allocation.internal.engine.SlotTable} by identity hash,
 * listed in order by {@link dev.apportion.allocation.internal.engine.LiveOrder}, with what each
 * member holds in {@link dev.apportion.allocation.internal.engine.Holdings}), the {@link
 * dev.apportion.allocation.internal.engine.Journal} of the current operation, {@link
 * dev.apportion.allocation.internal.engine.Members} (the collectors, in name order) and {@link
 * dev.apportion.allocation.internal.engine.CollectorLimits} (the optional per-collector limit).
 * What a call changed, as values computed once: {@link
 * dev.apportion.allocation.internal.engine.TargetSetChange}, which {@link
 * dev.apportion.allocation.internal.engine.TargetIntake} finds by comparing a call's input with
 * the store, and {@link dev.apportion.allocation.internal.engine.CollectorSetChange}. The
 * readers' state: the immutable {@link dev.apportion.allocation.internal.engine.Snapshot} that
 * {@link dev.apportion.allocation.internal.engine.Publisher} builds from the journal, sharing
 * every untouched part with the previous one. And the contract a strategy implements: {@link
 * dev.apportion.allocation.internal.engine.Placer} (told what changed, as slots) placing through
 * an {@link dev.apportion.allocation.internal.engine.Assignment}, with {@link
 * dev.apportion.allocation.internal.engine.Partitioned} for a layer that places by partition.
 *
 * <p><b>A {@code setTargets} call, step by step.</b> (1) The intake takes each given target into
 * the slots: compared with the target given at its place last time, else looked up by identity
 * hash; a known target is unchanged, re-costed or relabeled, an unknown one takes a new slot.
 * (2) The known targets not given are dropped, the new ones are put in identity-hash order, and
 * the intake returns all of it as one {@code TargetSetChange}. (3) The placer hears {@code
 * targetsChanged(added, removed)}, then {@code nodesChanged} for relabels that may move a target
 * and {@code costsChanged} for new costs. (4) The per-collector limit moves what is over it. (5)
 * The publisher turns the journal into the next snapshot (and moves, when a listener is
 * registered); one volatile write publishes it, and the listeners hear of it. A {@code
 * setCollectors} call: the collectors in name order, matched to the members by the writer's own
 * name index; the departed members' targets, found in the slots' holdings, unassigned (the
 * orphans); the placer hears {@code collectorsChanged} with all of it as one {@code
 * CollectorSetChange}; then steps (4) and (5).
 *
 * <p>Uses no strategy: the strategies' packages use this one. Writer-thread state is guarded by
 * the engine's lock; readers only ever read the published snapshot, and the writer never reads
 * it back.
 */
package dev.apportion.allocation.internal.engine;
