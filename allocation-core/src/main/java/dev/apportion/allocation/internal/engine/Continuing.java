package dev.apportion.allocation.internal.engine;

/**
 * A placer that keeps state about its view between calls and continues the next change from
 * it ({@code consistent-hashing}'s incremental matching). A layer that hands it a view must say
 * when that view changed in a way its calls did not name.
 */
public interface Continuing {

  /**
   * Its view holds unassigned targets that the next call will not name as new (a caller that
   * cannot say exactly which targets came): the next change must not continue from the state
   * kept about the view.
   */
  void viewChangedUnsaid();
}
