package dev.apportion.allocation.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Shrinks a failing scenario to a minimal one that fails the same invariant.
 *
 * <p>Why this order: steps after the failing one never ran, so they go first, for free. Then
 * whole steps are dropped in chunks (halves, quarters, ... single steps: delta debugging, Zeller
 * and Hildebrandt 2002), which removes most of a long sequence in few runs; then each remaining
 * step is made smaller (fewer targets or collectors in it). The passes repeat until none makes
 * progress or the run budget is spent. A candidate is kept only when it fails the same invariant,
 * so the shrinker never trades the bug it was given for another one.
 */
final class Shrinker {
  private Shrinker() {}

  /** The minimal scenario found and how it fails. */
  static final class Result {
    final Scenario minimal;
    final Execution.Outcome outcome;
    final int runs;

    Result(Scenario minimal, Execution.Outcome outcome, int runs) {
      this.minimal = minimal;
      this.outcome = outcome;
      this.runs = runs;
    }
  }

  static Result shrink(Scenario failing, Execution.Outcome outcome,
      Function<Scenario, Execution.Outcome> oracle, int budget) {
    String name = outcome.invariant;
    Scenario best = truncate(failing, outcome);
    Execution.Outcome bestOutcome = outcome;
    int runs = 0;
    boolean progress = true;
    while (progress && runs < budget) {
      progress = false;
      for (int chunk = Math.max(1, best.size() / 2); chunk >= 1 && runs < budget; chunk /= 2) {
        int start = 0;
        while (start < best.size() && runs < budget) {
          List<Step> steps = new ArrayList<>(best.steps());
          steps.subList(start, Math.min(steps.size(), start + chunk)).clear();
          Scenario candidate = best.withSteps(steps);
          Execution.Outcome o = oracle.apply(candidate);
          runs++;
          if (o != null && o.invariant.equals(name)) {
            best = truncate(candidate, o);
            bestOutcome = o;
            progress = true;
          } else {
            start += chunk;
          }
        }
      }
      for (int i = 0; i < best.size() && runs < budget; i++) {
        boolean smaller = true;
        while (smaller && i < best.size() && runs < budget) {
          smaller = false;
          for (Step s : best.steps().get(i).shrinks()) {
            List<Step> steps = new ArrayList<>(best.steps());
            steps.set(i, s);
            Scenario candidate = best.withSteps(steps);
            Execution.Outcome o = oracle.apply(candidate);
            runs++;
            if (o != null && o.invariant.equals(name)) {
              best = truncate(candidate, o);
              bestOutcome = o;
              progress = true;
              smaller = true;
              break;
            }
            if (runs >= budget) {
              break;
            }
          }
        }
      }
    }
    return new Result(best, bestOutcome, runs);
  }

  private static Scenario truncate(Scenario s, Execution.Outcome o) {
    if (o.step < 0 || o.step + 1 >= s.size()) {
      return s;
    }
    return s.withSteps(s.steps().subList(0, o.step + 1));
  }
}
