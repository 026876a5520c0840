package dev.apportion.allocation;

import java.util.Objects;
import java.util.Optional;

/**
 * One target's change of collector within an {@link AllocationChange}. Immutable.
 *
 * @since 0.1.0
 */
public final class Move {
  private final Target target;
  private final String from;
  private final String to;
  private final int replica;

  /**
   * A move.
   *
   * @param target the target; not null
   * @param from the collector it was on, or null when it was new or unassigned
   * @param to the collector it is on now, or null when it was removed or is now unassigned
   * @throws NullPointerException if {@code target} is null
   * @throws IllegalArgumentException if {@code from} equals {@code to}
   */
  public Move(Target target, String from, String to) {
    this(target, from, to, 0);
  }

  /**
   * A move of one of a target's replicas (see {@link Allocators.Builder#replicas}).
   *
   * @param target the target; not null
   * @param from the collector the replica was on, or null when it was new or unassigned
   * @param to the collector it is on now, or null when it was removed or is now unassigned
   * @param replica which replica moved: 0 for the primary, 1 for the second, ...
   * @throws NullPointerException if {@code target} is null
   * @throws IllegalArgumentException if {@code from} equals {@code to}, or {@code replica} is
   *     negative
   */
  public Move(Target target, String from, String to, int replica) {
    this.target = Objects.requireNonNull(target, "target must not be null");
    if (Objects.equals(from, to)) {
      throw new IllegalArgumentException("a move must change the collector: " + from);
    }
    if (replica < 0) {
      throw new IllegalArgumentException("replica must be >= 0: " + replica);
    }
    this.from = from;
    this.to = to;
    this.replica = replica;
  }

  /**
   * The target, with its labels as they are after the change (or as they were, for a target
   * that was removed).
   *
   * @return the target
   */
  public Target target() {
    return target;
  }

  /**
   * The collector the target was on.
   *
   * @return its name; empty when the target was new or unassigned
   */
  public Optional<String> from() {
    return Optional.ofNullable(from);
  }

  /**
   * The collector the target is on now.
   *
   * @return its name; empty when the target was removed or is now unassigned
   */
  public Optional<String> to() {
    return Optional.ofNullable(to);
  }

  /**
   * Which of the target's replicas moved: 0 for its primary (the only one with one replica).
   *
   * @return the replica's rank, from 0
   */
  public int replica() {
    return replica;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Move other)) {
      return false;
    }
    return target.equals(other.target) && Objects.equals(from, other.from)
        && Objects.equals(to, other.to) && replica == other.replica;
  }

  @Override
  public int hashCode() {
    return Objects.hash(target, from, to, replica);
  }

  @Override
  public String toString() {
    return target + (replica == 0 ? "" : " (replica " + replica + ")") + ": "
        + (from == null ? "-" : from) + " -> " + (to == null ? "-" : to);
  }
}
