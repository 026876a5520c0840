package dev.apportion.bench.movement;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.testkit.Movement;
import dev.apportion.bench.sim.CostInputs;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SortedSet;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.annotations.XYTextAnnotation;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code apportion movement}: balance against movement, for each strategy and, for
 * {@code consistent-hashing}, each load factor: the frontier of docs/strategies.md.
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar movement --plot docs/img/movement
 * </pre>
 *
 * <p>The figures are {@link Movement}'s (the same code as the unit tests' goals): counts that
 * depend on the strategy and the shape, not on the machine.
 */
@Command(name = "movement", mixinStandardHelpOptions = true, sortOptions = false,
    description = {
      "Measures balance (peak/mean) against movement: ten single removals and ten single "
          + "additions against their minimum, a sweep of collector counts (each single change "
          + "against its minimum), and the moves that replacing 1%% of the targets causes among "
          + "the others; for each strategy and each load factor of consistent-hashing."},
    exitCodeOnInvalidInput = 2)
public final class MovementCommand implements Callable<Integer> {
  @Option(names = "--target-count", defaultValue = "100000",
      description = "Targets. Default: ${DEFAULT-VALUE}.")
  int targets;

  @Option(names = "--collector-count", defaultValue = "1000",
      description = "Collectors. Default: ${DEFAULT-VALUE}.")
  int collectors;

  @Option(names = "--load-factor", paramLabel = "F", split = ",",
      description = "consistent-hashing's load factors to measure. Default: 1.05,1.1,1.15,1.2,"
          + "1.3.")
  List<Double> loadFactors = new ArrayList<>();

  @Option(names = "--strategy", paramLabel = "NAME",
      description = "A strategy to measure; repeat for several. Default: consistent-hashing, "
          + "rendezvous, least-weighted.")
  List<String> strategies = new ArrayList<>();

  @Option(names = "--sweep", defaultValue = "5", paramLabel = "PERCENT",
      description = "Sweep the collector count from PERCENT below to PERCENT above, one "
          + "collector at a time; 0 for no sweep. Default: ${DEFAULT-VALUE}.")
  double sweepPercent;

  @Option(names = "--costs", paramLabel = "KIND", defaultValue = "unit",
      description = "unit: every target costs 1 (balance by count); pareto: the simulator's "
          + "heavy-tailed costs (Pareto from 50 to 5000, shape 1.2), so peak/mean and min/mean "
          + "are of cost and consistent-hashing keeps its cost band. Default: ${DEFAULT-VALUE}.")
  String costs;

  @Option(names = "--plot", paramLabel = "DIR",
      description = "Write frontier.png and sweep.png to this directory.")
  Path plotDir;

  @Option(names = "--csv", paramLabel = "FILE",
      description = "Also write the figures to this CSV file.")
  Path csvFile;

  @Option(names = "--compare", paramLabel = "FILE",
      description = "A CSV file written by --csv (say, by an earlier version): its rows are "
          + "drawn in frontier.png beside this run's, labelled with --compare-label.")
  Path compareFile;

  @Option(names = "--compare-label", paramLabel = "TEXT", defaultValue = "earlier",
      description = "The legend of --compare's points. Default: ${DEFAULT-VALUE}.")
  String compareLabel;

  private PrintStream out = System.out;

  /**
   * One measured configuration, as the frontier chart and the CSV file need it.
   *
   * @param label the strategy, with its load factor when it takes one
   * @param peakToMean the balance
   * @param movedOverMinimum the ten removals and ten additions, moves summed over minimum summed
   * @param figures everything measured, or null for a row read from a CSV file
   */
  record Row(String label, double peakToMean, double movedOverMinimum, Movement.Figures figures) {
    static Row of(String label, Movement.Figures f) {
      return new Row(label, f.peakToMean(), (double) (f.removalsMoved() + f.additionsMoved())
          / (f.removalsMinimum() + f.additionsMinimum()), f);
    }
  }

  private static final String CSV_HEADER = "label,peak_to_mean,moved_over_minimum,"
      + "removals_moved,removals_minimum,additions_moved,additions_minimum,worst_sweep_ratio,"
      + "worst_sweep_collectors,replaced_others_moved";

  /**
   * Runs the command.
   *
   * @param args the arguments after {@code movement}
   * @param out where the table goes
   * @param err where errors go
   * @return the exit code: 0, or 2 for bad input
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    MovementCommand command = new MovementCommand();
    command.out = out;
    CommandLine cli = new CommandLine(command);
    cli.setOut(new PrintWriter(out, true, Charset.defaultCharset()));
    cli.setErr(new PrintWriter(err, true, Charset.defaultCharset()));
    cli.setParameterExceptionHandler((e, a) -> {
      err.println("apportion movement: " + e.getMessage() + " (see movement --help)");
      return 2;
    });
    cli.setExecutionExceptionHandler((e, c, p) -> {
      if (e instanceof IllegalArgumentException) {
        err.println("apportion movement: " + e.getMessage());
        return 2;
      }
      throw e;
    });
    return cli.execute(args);
  }

  @Override
  public Integer call() throws IOException {
    if (sweepPercent < 0 || sweepPercent >= 50) {
      throw new IllegalArgumentException("--sweep must be from 0 to under 50: " + sweepPercent);
    }
    SortedSet<String> known = Allocators.strategies();
    List<String> which = strategies.isEmpty()
        ? List.of(Allocators.CONSISTENT_HASHING, Allocators.RENDEZVOUS, Allocators.LEAST_WEIGHTED)
        : strategies;
    for (String s : which) {
      if (!known.contains(s)) {
        throw new IllegalArgumentException("--strategy: unknown strategy '" + s + "'; known: "
            + String.join(", ", known));
      }
    }
    List<Double> factors = loadFactors.isEmpty() ? List.of(1.05, 1.1, 1.15, 1.2, 1.3)
        : loadFactors;
    for (double f : factors) {
      if (!(f > 1.0)) {
        throw new IllegalArgumentException("--load-factor must be above 1: " + f);
      }
    }
    if (!costs.equals("unit") && !costs.equals("pareto")) {
      throw new IllegalArgumentException("--costs must be unit or pareto: " + costs);
    }
    long[] paretoCosts = costs.equals("pareto") ? CostInputs.paretoCosts(targets, 1) : null;
    int from = (int) Math.round(collectors * (1 - sweepPercent / 100));
    int to = (int) Math.round(collectors * (1 + sweepPercent / 100));
    List<Row> rows = new ArrayList<>();
    out.printf(Locale.ROOT, "%d targets on %d collectors%s; sweep %d to %d collectors%n%n",
        targets, collectors, paretoCosts == null ? "" : ", heavy-tailed costs", from, to);
    out.printf(Locale.ROOT, "%-26s %9s %9s %5s %10s %10s %16s %12s%n", "strategy", "peak/mean",
        "min/mean", "idle", "removals", "additions", "worst sweep step", "replace 1%");
    for (String s : which) {
      boolean takesFactor = s.equals(Allocators.CONSISTENT_HASHING);
      for (double f : takesFactor ? factors : List.of(Double.NaN)) {
        Supplier<Allocator> factory = takesFactor
            ? () -> Allocators.builder(s).loadFactor(f).warnWhenMovedShareExceeds(1.0).build()
            : () -> Allocators.builder(s).warnWhenMovedShareExceeds(1.0).build();
        Movement movement = new Movement(factory, targets, collectors);
        if (paretoCosts != null) {
          movement = movement.withCosts(i -> paretoCosts[i]);
        }
        Movement.Figures fig = movement.measure(from, to);
        String label = takesFactor ? String.format(Locale.ROOT, "%s %.2f", s, f) : s;
        rows.add(Row.of(label, fig));
        Movement.SweepStep w = fig.worstSweepStep();
        out.printf(Locale.ROOT, "%-26s %9.3f %9.3f %5d %9.3fx %9.3fx %16s %11.3f%%%n", label,
            fig.peakToMean(), fig.minToMean(), fig.idle(), fig.removalRatio(),
            fig.additionRatio(),
            w == null ? "n/a" : String.format(Locale.ROOT, "%.2fx at %d", w.ratio(),
                w.collectors()), 100.0 * fig.replacedOthersMoved() / (targets - targets / 100));
      }
    }
    out.println();
    out.println("peak/mean, min/mean: the busiest and the lightest collector's targets (with "
        + "--costs pareto, cost) over the mean, after the first placement.");
    out.println("removals, additions: ten single changes from the placed state, moves summed over "
        + "their minimum (what the removed collector held; targets/(collectors+1)).");
    out.println("worst sweep step: the single change of the sweep that moved most over its "
        + "minimum (targets/collectors).");
    out.println("replace 1%: the other targets that moved when every hundredth target was "
        + "replaced, as a share of them.");
    if (csvFile != null) {
      writeCsv(csvFile, rows);
      out.println("wrote " + csvFile);
    }
    List<Row> compared = compareFile == null ? List.of() : readCsv(compareFile);
    if (plotDir != null) {
      for (Path p : plot(plotDir, rows, compared, compareLabel)) {
        out.println("wrote " + p);
      }
    }
    return 0;
  }

  private static void writeCsv(Path file, List<Row> rows) throws IOException {
    List<String> lines = new ArrayList<>();
    lines.add(CSV_HEADER);
    for (Row r : rows) {
      Movement.Figures f = r.figures();
      Movement.SweepStep w = f.worstSweepStep();
      lines.add(String.format(Locale.ROOT, "%s,%.4f,%.4f,%d,%d,%d,%d,%.4f,%d,%d", r.label(),
          r.peakToMean(), r.movedOverMinimum(), f.removalsMoved(), f.removalsMinimum(),
          f.additionsMoved(), f.additionsMinimum(), w == null ? 0.0 : w.ratio(),
          w == null ? 0 : w.collectors(), f.replacedOthersMoved()));
    }
    Files.write(file, lines);
  }

  private static List<Row> readCsv(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file);
    if (lines.isEmpty() || !lines.get(0).equals(CSV_HEADER)) {
      throw new IllegalArgumentException("--compare: " + file + " is not a CSV file written by "
          + "--csv (its first line must be the header " + CSV_HEADER + ")");
    }
    List<Row> rows = new ArrayList<>();
    for (int i = 1; i < lines.size(); i++) {
      String[] cells = lines.get(i).split(",", -1);
      try {
        rows.add(new Row(cells[0], Double.parseDouble(cells[1]), Double.parseDouble(cells[2]),
            null));
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("--compare: " + file + " line " + (i + 1)
            + " is not a row of figures: " + lines.get(i), e);
      }
    }
    return rows;
  }

  private static List<Path> plot(Path dir, List<Row> rows, List<Row> compared,
      String comparedLabel) throws IOException {
    Files.createDirectories(dir);
    List<Path> written = new ArrayList<>();

    XYSeriesCollection points = new XYSeriesCollection();
    XYSeries now = new XYSeries("this version", false);
    XYSeries before = new XYSeries(comparedLabel, false);
    NumberAxis x = new NumberAxis("targets moved over the minimum (ten removals and ten "
        + "additions)");
    x.setAutoRangeIncludesZero(false);
    x.setUpperMargin(0.2);
    NumberAxis y = new NumberAxis("peak / mean");
    y.setAutoRangeIncludesZero(false);
    XYLineAndShapeRenderer dots = new XYLineAndShapeRenderer(false, true);
    dots.setSeriesPaint(0, new Color(0x1f77b4));
    dots.setSeriesPaint(1, new Color(0xd62728));
    XYPlot plot = new XYPlot(points, x, y, dots);
    for (Row r : rows) {
      now.add(r.movedOverMinimum(), r.peakToMean());
      plot.addAnnotation(label(r));
    }
    points.addSeries(now);
    if (!compared.isEmpty()) {
      for (Row r : compared) {
        before.add(r.movedOverMinimum(), r.peakToMean());
        plot.addAnnotation(label(r));
      }
      points.addSeries(before);
    }
    style(plot);
    JFreeChart chart = new JFreeChart("Balance against movement", JFreeChart.DEFAULT_TITLE_FONT,
        plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    Path file = dir.resolve("frontier.png");
    ChartUtils.saveChartAsPNG(file.toFile(), chart, 900, 560);
    written.add(file);

    XYSeriesCollection sweeps = new XYSeriesCollection();
    for (Row r : rows) {
      if (r.figures() == null || r.figures().sweep().isEmpty()) {
        continue;
      }
      XYSeries s = new XYSeries(r.label());
      for (Movement.SweepStep step : r.figures().sweep()) {
        s.add(step.collectors(), step.ratio());
      }
      sweeps.addSeries(s);
    }
    if (sweeps.getSeriesCount() > 0) {
      XYLineAndShapeRenderer lines = new XYLineAndShapeRenderer(true, false);
      for (int i = 0; i < sweeps.getSeriesCount(); i++) {
        lines.setSeriesStroke(i, new BasicStroke(1.5f));
      }
      XYPlot sweepPlot = new XYPlot(sweeps, new NumberAxis("collectors after the change"),
          new NumberAxis("targets moved over the minimum"), lines);
      style(sweepPlot);
      JFreeChart sweepChart = new JFreeChart("One collector added at a time",
          JFreeChart.DEFAULT_TITLE_FONT, sweepPlot, true);
      sweepChart.setBackgroundPaint(Color.WHITE);
      Path sweepFile = dir.resolve("sweep.png");
      ChartUtils.saveChartAsPNG(sweepFile.toFile(), sweepChart, 900, 520);
      written.add(sweepFile);
    }
    return written;
  }

  private static XYTextAnnotation label(Row r) {
    XYTextAnnotation label = new XYTextAnnotation("  " + r.label(), r.movedOverMinimum(),
        r.peakToMean());
    label.setTextAnchor(TextAnchor.CENTER_LEFT);
    return label;
  }

  private static void style(XYPlot plot) {
    plot.setBackgroundPaint(Color.WHITE);
    plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
  }
}
