package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.AllocationListener;
import java.util.List;

/**
 * An engine's listeners, told of each change in registration order. Every listener hears every
 * change, whatever an earlier one threw; what they threw is rethrown, as it is, once all have
 * heard (the first, with the rest suppressed in it). Only an {@link OutOfMemoryError} or an
 * internal error stops the round at once: the JVM may be in no state to run more code.
 */
public final class Listeners {
  private final List<AllocationListener> listeners;

  public Listeners(List<AllocationListener> listeners) {
    this.listeners = List.copyOf(listeners);
  }

  /** Whether there is none (then nobody needs moves built). */
  public boolean isEmpty() {
    return listeners.isEmpty();
  }

  /** Tells every listener of {@code change}; called on the writer thread, under its lock. */
  public void tell(AllocationChange change) {
    Throwable failure = null;
    for (AllocationListener l : listeners) {
      try {
        l.onChange(change);
      } catch (VirtualMachineError e) {
        if (!(e instanceof StackOverflowError)) {
          // Out of memory, or an internal error: the JVM may be in no state to run more code.
          throw e;
        }
        failure = collect(failure, e);
      } catch (Throwable e) {
        // Every listener hears every change, whatever an earlier one threw: an exception, an
        // AssertionError, a sneaky checked exception, a stack overflow (unwound by now).
        failure = collect(failure, e);
      }
    }
    if (failure != null) {
      throw Listeners.<RuntimeException>sneaky(failure);
    }
  }

  private static Throwable collect(Throwable first, Throwable next) {
    if (first == null) {
      return next;
    }
    if (first != next) {
      first.addSuppressed(next);
    }
    return first;
  }

  /**
   * Rethrows {@code t} as it is, checked or not, after every listener ran. The type parameter is
   * the idiom's point (the compiler infers an unchecked type, so no checked exception need be
   * declared), which TypeParameterUnusedInFormals flags in general.
   */
  @SuppressWarnings({"unchecked", "TypeParameterUnusedInFormals"})
  private static <T extends Throwable> T sneaky(Throwable t) throws T {
    throw (T) t;
  }
}
