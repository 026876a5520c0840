package dev.apportion.bench.sim;

import dev.apportion.bench.Placement;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The simulator's default output: per scenario, what a user should conclude, in a line each for
 * balance, locality and movement, from the same results the full table ({@code --table}) shows.
 */
final class Verdicts {
  private Verdicts() {}

  static void print(PrintStream out, Cluster cluster, List<Result> results, CrossZoneCost cost) {
    out.println(ReportTable.header(cluster));
    List<List<Result>> byScenario = new ArrayList<>();
    for (Result r : results) {
      if (byScenario.isEmpty() || byScenario.get(byScenario.size() - 1).get(0).scenario()
          != r.scenario()) {
        byScenario.add(new ArrayList<>());
      }
      byScenario.get(byScenario.size() - 1).add(r);
    }
    for (List<Result> scenario : byScenario) {
      out.println();
      out.println(scenario.get(0).scenario().title());
      out.println("  balance   " + balance(scenario));
      out.println("  locality  " + locality(scenario, cost));
      if (scenario.get(0).scenario() != ClusterScenario.INITIAL) {
        out.println("  movement  " + movement(scenario));
      }
      String unassigned = unassigned(scenario);
      if (!unassigned.isEmpty()) {
        out.println("  warning   " + unassigned);
      }
    }
    out.println();
    out.println("peak/mean: the busiest collector's targets over its capacity's share (1.00: "
        + "perfectly even); cost: the same for cost.");
    out.println("moved: targets reassigned over the scenario's steps; minimum: those whose "
        + "collector left, which had to move.");
    out.println("--table prints every figure per strategy (15 columns); docs/simulator.md "
        + "explains them.");
  }

  /** The most and the least even strategy by target count, with their cost balance. */
  static String balance(List<Result> scenario) {
    Result best = min(scenario, Result::peakOverMean);
    Result worst = min(scenario, r -> -r.peakOverMean());
    return String.format(Locale.ROOT, "most even %s (peak/mean %s, cost %s); least even %s "
        + "(%s, cost %s)", best.strategy(), ReportTable.ratio(best.peakOverMean()),
        ReportTable.ratio(best.costPeakOverMean()), worst.strategy(),
        ReportTable.ratio(worst.peakOverMean()), ReportTable.ratio(worst.costPeakOverMean()));
  }

  /** Which strategies keep every scrape on its node, in its zone, and what the others cost. */
  static String locality(List<Result> scenario, CrossZoneCost cost) {
    List<String> onNode = new ArrayList<>();
    List<String> inZone = new ArrayList<>();
    double least = Double.POSITIVE_INFINITY;
    double most = 0;
    for (Result r : scenario) {
      if (r.crossNode() == 0 && r.nodeKnown() > 0) {
        onNode.add(r.strategy());
      } else if (r.crossZone() == 0 && r.zoneKnown() > 0) {
        inZone.add(r.strategy());
      } else {
        least = Math.min(least, cost.dollarsPerMonth(r.crossZone()));
        most = Math.max(most, cost.dollarsPerMonth(r.crossZone()));
      }
    }
    List<String> parts = new ArrayList<>();
    if (!onNode.isEmpty()) {
      parts.add("on the target's node: " + names(onNode, scenario));
    }
    if (!inZone.isEmpty()) {
      parts.add("in its zone: " + names(inZone, scenario));
    }
    if (most > 0) {
      parts.add(String.format(Locale.ROOT, "others cross zones for %s $/mo",
          least == most ? dollars(most) : dollars(least) + "-" + dollars(most)));
    }
    return parts.isEmpty() ? "no zones or nodes known" : String.join("; ", parts);
  }

  /** The strategies' names, with every zone-aware variant simulated said in three words. */
  private static String names(List<String> names, List<Result> scenario) {
    List<String> variants = new ArrayList<>();
    for (Result r : scenario) {
      if (r.strategy().endsWith(Placement.ZONES)) {
        variants.add(r.strategy());
      }
    }
    if (variants.size() < 2 || !names.containsAll(variants)) {
      return String.join(", ", names);
    }
    List<String> rest = new ArrayList<>(names);
    rest.removeAll(variants);
    rest.add("the " + Placement.ZONES + " variants");
    return String.join(", ", rest);
  }

  /** The fewest and the most targets moved, against the minimum. */
  static String movement(List<Result> scenario) {
    Result fewest = min(scenario, Result::moved);
    Result most = min(scenario, r -> -r.moved());
    return "fewest " + moved(fewest) + "; most " + moved(most);
  }

  private static String moved(Result r) {
    String against = r.minimumMoved() > 0
        ? String.format(Locale.ROOT, ", %.2fx the minimum of %d", (double) r.moved()
            / r.minimumMoved(), r.minimumMoved())
        : ", where none had to";
    return r.strategy() + " (" + r.moved() + " moved" + against + ")";
  }

  private static String unassigned(List<Result> scenario) {
    List<String> left = new ArrayList<>();
    for (Result r : scenario) {
      if (r.unassigned() > 0) {
        left.add(r.strategy() + " " + r.unassigned());
      }
    }
    return left.isEmpty() ? "" : "targets left unassigned: " + String.join(", ", left);
  }

  /** The first result with the least key: ties go to the earlier strategy. */
  private static Result min(List<Result> results, ToDoubleFunction<Result> key) {
    return results.stream().min(Comparator.comparingDouble(key)).orElseThrow();
  }

  private static String dollars(double d) {
    return String.format(Locale.ROOT, "%,.0f", d);
  }
}
