package dev.apportion.allocation.testkit;

import java.util.Optional;

/**
 * The outcome of a {@link PropertyRunner} run: how many tries ran and, when one failed, the
 * {@link Failure}. Immutable.
 *
 * @since 0.1.0
 */
public final class Report {
  private final String label;
  private final int tries;
  private final Failure failure;

  Report(String label, int tries, Failure failure) {
    this.label = label;
    this.tries = tries;
    this.failure = failure;
  }

  /**
   * Whether every try held every invariant.
   *
   * @return true when no failure was found
   */
  public boolean passed() {
    return failure == null;
  }

  /**
   * How many tries (scenarios) ran, the failing one included.
   *
   * @return the count
   */
  public int tries() {
    return tries;
  }

  /**
   * The failure, shrunk.
   *
   * @return the failure; empty when the run passed
   */
  public Optional<Failure> failure() {
    return Optional.ofNullable(failure);
  }

  /** One line when the run passed, the failure's full report otherwise. */
  @Override
  public String toString() {
    return failure == null ? label + ": " + tries + " tries passed" : failure.toString();
  }
}
