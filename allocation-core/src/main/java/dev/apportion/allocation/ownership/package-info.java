/**
 * Decentralized ownership: every replica decides locally which targets are its own, from its
 * own name and the current member list, with no central allocator (the mode of Grafana Alloy's
 * clustering). {@link dev.apportion.allocation.ownership.Ownership} is the view,
 * {@link dev.apportion.allocation.ownership.TargetKey} the pinned key it places targets by, and
 * {@link dev.apportion.allocation.ownership.OwnershipChange} what a member-list change gained
 * and lost. See {@code docs/ownership.md} for when to choose this over a central allocator.
 */
package dev.apportion.allocation.ownership;
