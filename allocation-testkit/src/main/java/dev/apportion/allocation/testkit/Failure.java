package dev.apportion.allocation.testkit;

import java.util.Optional;

/**
 * How a {@link PropertyRunner} run failed: the invariant, what was wrong, the seed to replay,
 * and the minimal failing {@link Scenario} the shrinker found. Immutable.
 * {@link #toString()} is the full report, with the scenario as Java code to paste into a
 * regression test.
 *
 * @since 0.1.0
 */
public final class Failure {
  private final String label;
  private final String invariant;
  private final String description;
  private final int step;
  private final Long seed;
  private final int tryNumber;
  private final int tries;
  private final Scenario original;
  private final Scenario minimal;
  private final int shrinkRuns;
  private final String runnerJava;

  Failure(String label, String invariant, String description, int step, Long seed, int tryNumber,
      int tries, Scenario original, Scenario minimal, int shrinkRuns, String runnerJava) {
    this.label = label;
    this.invariant = invariant;
    this.description = description;
    this.step = step;
    this.seed = seed;
    this.tryNumber = tryNumber;
    this.tries = tries;
    this.original = original;
    this.minimal = minimal;
    this.shrinkRuns = shrinkRuns;
    this.runnerJava = runnerJava;
  }

  /**
   * The name of the invariant that failed ({@code no-exception} when the allocator threw).
   *
   * @return the name
   */
  public String invariant() {
    return invariant;
  }

  /**
   * What was wrong, as the invariant described it for the minimal scenario.
   *
   * @return the description
   */
  public String description() {
    return description;
  }

  /**
   * The index, from 0, of the step of {@link #minimal()} after which the invariant failed.
   *
   * @return the index; -1 when no single step is to blame: creating the allocator failed, or a
   *     concurrent reader saw the failure while the writer was somewhere in the scenario
   */
  public int step() {
    return step;
  }

  /**
   * The seed of the generated try that failed; replay it with {@code -Dapportion.seed=}.
   *
   * @return the seed; empty when the failure came from a given scenario, not a generated one
   */
  public Optional<Long> seed() {
    return Optional.ofNullable(seed);
  }

  /**
   * The scenario as generated (or given), before shrinking.
   *
   * @return the scenario
   */
  public Scenario original() {
    return original;
  }

  /**
   * The smallest scenario the shrinker found that fails the same invariant.
   *
   * @return the scenario
   */
  public Scenario minimal() {
    return minimal;
  }

  /**
   * How many candidate scenarios the shrinker ran.
   *
   * @return the count
   */
  public int shrinkRuns() {
    return shrinkRuns;
  }

  /** The full report: invariant, description, seed, tries, and the minimal scenario as Java. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    sb.append("Invariant '").append(invariant).append("' failed for ").append(label)
        .append('\n');
    if (step >= 0) {
      String stepJava = minimal.steps().get(step).toJava("");
      sb.append("  after step ").append(step + 1).append(" of ").append(minimal.size())
          .append(": ").append(oneLine(stepJava)).append('\n');
    }
    sb.append("  ").append(description).append('\n');
    if (seed != null) {
      sb.append("  seed ").append(JavaCode.hex(seed)).append(" (try ").append(tryNumber + 1)
          .append(" of ").append(tries).append("); replay it with -Dapportion.seed=")
          .append(JavaCode.hex(seed)).append('\n');
    }
    sb.append("  shrunk from ").append(original.size()).append(" steps to ")
        .append(minimal.size()).append(" in ").append(shrinkRuns).append(" runs\n");
    sb.append("  minimal failing scenario, to paste into a regression test:\n\n");
    String code = "Scenario scenario = " + minimal.toJava() + ";\n" + runnerJava;
    for (String line : code.split("\n", -1)) {
      sb.append("    ").append(line).append('\n');
    }
    return sb.toString();
  }

  private static String oneLine(String s) {
    String flat = s.replaceAll("\\s*\n\\s*", " ").replace("( ", "(");
    return flat.length() <= 100 ? flat : flat.substring(0, 96) + " ...";
  }
}
