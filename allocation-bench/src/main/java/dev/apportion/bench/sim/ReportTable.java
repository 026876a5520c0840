package dev.apportion.bench.sim;

import java.io.PrintStream;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** Prints the simulator's results as one plain-text table per scenario. */
final class ReportTable {
  private static final String ROW =
      "%-24s %9s %9s %9s %9s %5s %16s %16s %8s %9s %7s %8s %10s %10s %9s%n";

  private ReportTable() {}

  /** The first line of both outputs: the cluster simulated. */
  static String header(Cluster cluster) {
    return String.format(Locale.ROOT, "cluster: %d nodes in %d zones, %s", distinctNodes(cluster),
        cluster.zones().values().stream().distinct().count(), cluster);
  }

  static void print(PrintStream out, Cluster cluster, List<Result> results, CrossZoneCost cost) {
    out.println(header(cluster));
    ClusterScenario current = null;
    for (Result r : results) {
      if (r.scenario() != current) {
        current = r.scenario();
        out.println();
        out.printf(Locale.ROOT, "== %s ==%n", current.title());
        out.printf(Locale.ROOT, ROW, "strategy", "peak/mean", "min/mean", "cost p/m",
            "cost m/m", "idle", "cross-node", "cross-zone", "xz GB/h", "xz $/mo", "moved",
            "minimum", "worst step", "unassigned", "time");
      }
      out.printf(Locale.ROOT, ROW, r.strategy(), ratio(r.peakOverMean()),
          ratio(r.minOverMean()), ratio(r.costPeakOverMean()), ratio(r.costMinOverMean()),
          r.idle(), share(r.crossNode(), r.nodeKnown()),
          share(r.crossZone(), r.zoneKnown()),
          String.format(Locale.ROOT, "%.2f", cost.gigabytesPerHour(r.crossZone())),
          String.format(Locale.ROOT, "%.0f", cost.dollarsPerMonth(r.crossZone())), r.moved(),
          r.minimumMoved(), Double.isNaN(r.worstStep()) ? "-" : ratio(r.worstStep()) + "x",
          r.unassigned(), millis(r.nanos()));
    }
    out.println();
    out.println("peak/mean, min/mean: targets per collector, relative to each collector's "
        + "capacity share; cost p/m, cost m/m: the same for cost (e.g. series per scrape).");
    out.println("cross-node, cross-zone: scrapes whose target and collector are on different "
        + "nodes (zones), of those where both are known.");
    out.printf(Locale.ROOT, "xz GB/h, xz $/mo: the cross-zone scrapes' transfer at %d bytes a "
        + "scrape every %s s, and its price at %s USD/GB each way (730 h a month); see --help.%n",
        cost.bytesPerScrape(), ratio(cost.scrapeIntervalSeconds()), cost.pricePerGb());
    out.println("strategy:zones: zone-aware (skew limit 2); per-node falls back within the zone "
        + "unless :no-zones.");
    out.println("moved: targets reassigned, summed over the scenario's steps; minimum: targets "
        + "whose collector is gone, which had to move;");
    out.println("worst step: over the steps that remove or add one collector, the largest of "
        + "moved / that step's minimum (what the leaver held; for a join, its capacity share of "
        + "the targets).");
    out.println("time: the scenario's allocator calls in this JVM, JIT warm-up included "
        + "(steady-state figures: docs/benchmarks.md).");
  }

  private static long distinctNodes(Cluster cluster) {
    Set<String> nodes = new HashSet<>(cluster.zones().keySet());
    cluster.collectors().forEach(c -> c.node().ifPresent(nodes::add));
    cluster.targets().forEach(t -> t.node().ifPresent(nodes::add));
    return nodes.size();
  }

  static String ratio(double r) {
    return String.format(Locale.ROOT, "%.2f", r);
  }

  static String share(int count, int base) {
    if (base == 0) {
      return count + " (n/a)";
    }
    return String.format(Locale.ROOT, "%d (%.1f%%)", count, 100.0 * count / base);
  }

  static String millis(long nanos) {
    double ms = nanos / 1e6;
    return ms < 10 ? String.format(Locale.ROOT, "%.1f ms", ms)
        : String.format(Locale.ROOT, "%.0f ms", ms);
  }
}
