package dev.apportion.allocation.ownership;

import dev.apportion.allocation.Target;
import java.util.Collections;
import java.util.List;

/**
 * What one member-list change did to the local member: the targets it gained and lost, with
 * the views before and after. Immutable and thread-safe; built by {@link Ownership#changesTo}
 * and {@link Ownership#update}.
 *
 * @since 0.1.0
 */
public final class OwnershipChange {
  private final Ownership before;
  private final Ownership after;
  private final List<Target> gained;
  private final List<Target> lost;

  OwnershipChange(Ownership before, Ownership after, List<Target> gained, List<Target> lost) {
    this.before = before;
    this.after = after;
    this.gained = Collections.unmodifiableList(gained);
    this.lost = Collections.unmodifiableList(lost);
  }

  /**
   * The view before the change.
   *
   * @return the old view
   */
  public Ownership before() {
    return before;
  }

  /**
   * The view after the change: the one to keep.
   *
   * @return the new view
   */
  public Ownership after() {
    return after;
  }

  /**
   * The targets the local member owns after the change and did not own before: start scraping
   * them. In the order the targets were given. Does not allocate.
   *
   * @return an unmodifiable list
   */
  public List<Target> gained() {
    return gained;
  }

  /**
   * The targets the local member owned before the change and no longer owns: stop scraping
   * them. In the order the targets were given. Does not allocate.
   *
   * @return an unmodifiable list
   */
  public List<Target> lost() {
    return lost;
  }

  /**
   * Whether the local member neither gained nor lost a target.
   *
   * @return true when both lists are empty
   */
  public boolean isEmpty() {
    return gained.isEmpty() && lost.isEmpty();
  }

  /**
   * Counts and states: {@code +gained -lost, STATE -> STATE}.
   *
   * @return the summary
   */
  @Override
  public String toString() {
    return "OwnershipChange{+" + gained.size() + " -" + lost.size() + ", " + before.state()
        + " -> " + after.state() + "}";
  }
}
