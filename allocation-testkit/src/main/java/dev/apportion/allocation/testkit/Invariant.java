package dev.apportion.allocation.testkit;

import java.util.Objects;
import java.util.function.Function;

/**
 * A named property an allocator must keep after every step of a {@link Scenario}. The
 * {@link PropertyRunner} calls {@link #check} once per step, after the step's call and the
 * runner's repeat of it, with everything it observed in a {@link Transition}.
 *
 * <p>Implementations must be stateless and thread-safe (one instance serves every try), must not
 * call the allocator's write methods (the transition gives read-only snapshots), and must describe
 * a failure deterministically (for example, in target order, never in {@code HashMap} order), so
 * that a seed reproduces the same report. {@link Invariants} holds the kit's own; write yours with
 * {@link #of}.
 *
 * @since 0.1.0
 */
public interface Invariant {

  /**
   * The invariant's name, as reports print it ({@code completeness}, {@code node-locality}, ...).
   * The shrinker keeps only smaller scenarios that fail the invariant of the same name.
   *
   * @return the name; not blank
   */
  String name();

  /**
   * Checks one step.
   *
   * @param transition what the step changed and what the allocator published
   * @return null when the invariant holds; otherwise a description of the violation naming the
   *     targets and collectors involved
   */
  String check(Transition transition);

  /**
   * An invariant from a name and a check function, for user-defined properties.
   *
   * @param name the name; not null, not blank
   * @param check returns null when the invariant holds, a description otherwise
   * @return the invariant
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code name} is blank
   */
  static Invariant of(String name, Function<Transition, String> check) {
    Objects.requireNonNull(name, "name must not be null");
    Objects.requireNonNull(check, "check must not be null");
    if (name.isBlank()) {
      throw new IllegalArgumentException("invariant name must not be blank");
    }
    return new Invariant() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public String check(Transition transition) {
        return check.apply(transition);
      }

      @Override
      public String toString() {
        return name;
      }
    };
  }
}
