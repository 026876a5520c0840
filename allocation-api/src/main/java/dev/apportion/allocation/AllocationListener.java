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
 * notification). Every listener is told of every change: whatever one throws (an exception, an
 * {@link AssertionError}, a checked exception thrown sneakily, a {@link StackOverflowError})
 * does not stop the others; the first is rethrown as it is to the writer's caller (later ones
 * attached as suppressed), after the change was applied and every listener was called. The one
 * exception is a {@link VirtualMachineError} other than a stack overflow (an
 * {@link OutOfMemoryError}, an {@link InternalError}): it propagates at once, because the JVM may
 * be in no state to run more code; the change is applied and published even then.
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
