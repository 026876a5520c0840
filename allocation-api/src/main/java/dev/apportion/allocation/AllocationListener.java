package dev.apportion.allocation;

/**
 * Told what moved after every change an {@link Allocator} applies, so that an embedding
 * collector can start and stop scrapes without diffing snapshots itself. Register one with
 * {@link Allocators.Builder#listener(AllocationListener)}.
 *
 * <p>Listeners are called on the writer's thread, after the new snapshot is published and while
 * the allocator's writer lock is still held, so they see changes one at a time and in order. A
 * listener must return quickly and must not call the allocator's write methods (they throw
 * {@link IllegalStateException} when it does: the change would happen inside another's
 * notification). Every listener is told of every change: an exception from one does not stop the
 * others; the first is rethrown to the writer's caller (later ones attached as suppressed), after
 * the change was applied.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface AllocationListener {

  /**
   * Called once per applied change, including changes that moved nothing.
   *
   * @param change what happened
   */
  void onChange(AllocationChange change);
}
