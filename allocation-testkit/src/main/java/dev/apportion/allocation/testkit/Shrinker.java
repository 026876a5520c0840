package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * Shrinks a failing scenario to a minimal one that fails the same invariant.
 *
 * <p>Why this order: steps after the failing one never ran, so they go first, for free. Then
 * whole steps are dropped in chunks (halves, quarters, ... single steps: delta debugging, Zeller
 * and Hildebrandt 2002), which removes most of a long sequence in few runs; then each remaining
 * step is made smaller (fewer targets or collectors in it, {@code __meta_*} labels that do not
 * name the node dropped); then identity labels are dropped, one name at a time from every target
 * that has it, then one label of one target. The passes repeat until none makes progress or the
 * run budget is spent. A candidate is kept only when it fails the same invariant, so the shrinker
 * never trades the bug it was given for another one.
 *
 * <p>An identity label is part of what a target is, and steps name targets by identity (a removal
 * or relabel finds the target an earlier step added), so a label is dropped from a target in every
 * step at once. A drop that would make two targets of the scenario equal (say {@code pod="a"} and
 * {@code pod="b"} at one address) is not a valid shrink: it would merge two targets into one and
 * change what the scenario does, so it is never tried.
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
      boolean dropped = true;
      while (dropped && runs < budget) {
        dropped = false;
        for (UnaryOperator<Target> drop : labelDrops(best)) {
          Scenario candidate = relabeled(best, drop);
          if (candidate == null) {
            continue;
          }
          Execution.Outcome o = oracle.apply(candidate);
          runs++;
          if (o != null && o.invariant.equals(name)) {
            best = truncate(candidate, o);
            bestOutcome = o;
            progress = true;
            dropped = true;
            break;
          }
          if (runs >= budget) {
            break;
          }
        }
      }
    }
    return new Result(best, bestOutcome, runs);
  }

  /**
   * The identity-label drops to try on {@code s}, most aggressive first: each identity label name
   * dropped from every target, then each identity label of each target dropped from that target
   * alone (in every step, as targets are named by identity).
   */
  static List<UnaryOperator<Target>> labelDrops(Scenario s) {
    Set<Target> identities = new LinkedHashSet<>();
    for (Step step : s.steps()) {
      identities.addAll(step.targets());
    }
    SortedSet<String> names = new TreeSet<>();
    for (Target t : identities) {
      names.addAll(identityLabels(t));
    }
    List<UnaryOperator<Target>> out = new ArrayList<>();
    for (String label : names) {
      out.add(t -> without(t, label));
    }
    if (!names.isEmpty() && identities.size() > 1) {
      for (Target one : identities) {
        for (String label : identityLabels(one)) {
          out.add(t -> t.equals(one) ? without(t, label) : t);
        }
      }
    }
    return out;
  }

  /**
   * {@code s} with {@code f} applied to every target of every step, or null when that changes
   * nothing or would make two distinct targets of the scenario equal.
   */
  static Scenario relabeled(Scenario s, UnaryOperator<Target> f) {
    Map<Target, Target> images = new HashMap<>();
    Set<Target> seen = new HashSet<>();
    boolean changed = false;
    for (Step step : s.steps()) {
      for (Target t : step.targets()) {
        if (images.containsKey(t)) {
          continue;
        }
        Target image = f.apply(t);
        images.put(t, image);
        changed |= !image.equals(t);
        if (!seen.add(image)) {
          return null;
        }
      }
    }
    if (!changed) {
      return null;
    }
    List<Step> steps = new ArrayList<>();
    for (Step step : s.steps()) {
      steps.add(step.mapTargets(f));
    }
    return s.withSteps(steps);
  }

  /** The names of {@code t}'s identity labels (not {@code __meta_*}), sorted. */
  private static List<String> identityLabels(Target t) {
    List<String> out = new ArrayList<>();
    for (String label : t.labels().keySet()) {
      if (!label.startsWith(Target.META_PREFIX)) {
        out.add(label);
      }
    }
    return out;
  }

  /** {@code t} without the label {@code name}, every other label kept; {@code t} if it has none. */
  private static Target without(Target t, String name) {
    if (!t.labels().containsKey(name)) {
      return t;
    }
    TreeMap<String, String> labels = new TreeMap<>(t.labels());
    labels.remove(name);
    return Target.of(t.job(), t.address(), labels);
  }

  private static Scenario truncate(Scenario s, Execution.Outcome o) {
    if (o.step < 0 || o.step + 1 >= s.size()) {
      return s;
    }
    return s.withSteps(s.steps().subList(0, o.step + 1));
  }
}
