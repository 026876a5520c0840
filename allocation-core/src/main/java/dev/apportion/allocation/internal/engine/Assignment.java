package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import java.util.List;

/**
 * What a {@link Placer} reads and writes: the current owner of each target in its view. The
 * engine's view holds every target; {@code per-node} gives its fallback a view of the targets it
 * cannot place itself. Writer-thread only.
 */
public interface Assignment {

  /**
   * The current owner.
   *
   * @param target a target in this view
   * @return its member, or null when unassigned
   */
  Member ownerOf(Target target);

  /**
   * Assigns {@code target} to {@code member}, or unassigns it when {@code member} is null.
   *
   * @param target a target in this view
   * @param member a member of the current set, or null
   */
  void place(Target target, Member member);

  /**
   * The targets of this view that {@code member} holds. A copy: safe to iterate while placing.
   *
   * @param member a member
   * @return the targets, in no particular order (sort them where order matters)
   */
  List<Target> targetsOf(Member member);

  /**
   * Every target of this view, in identity-hash order. Must not be modified.
   *
   * @return the targets
   */
  List<Target> sortedTargets();

  /**
   * How many targets this view holds.
   *
   * @return the count
   */
  default int size() {
    return sortedTargets().size();
  }
}
