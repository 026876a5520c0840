/**
 * Hash rings usable on their own: {@link dev.apportion.allocation.ring.HashRings#rendezvous
 * rendezvous} and {@link dev.apportion.allocation.ring.HashRings#consistent consistent} hashing
 * behind one small interface, {@link dev.apportion.allocation.ring.HashRing}.
 */
package dev.apportion.allocation.ring;
