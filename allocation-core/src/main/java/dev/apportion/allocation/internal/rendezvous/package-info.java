/**
 * {@code rendezvous}: {@link dev.apportion.allocation.internal.rendezvous.RendezvousPlacer} gives
 * every target to the collector with the highest (weighted) rendezvous score for its identity
 * hash. Stateless: a function of the two sets; it gives exactly the placement of the exported
 * rendezvous ring over the same names.
 */
package dev.apportion.allocation.internal.rendezvous;
