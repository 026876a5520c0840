package dev.apportion.bench.sim;

import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code apportion simulate}: shows what each strategy would do to a cluster before it is
 * deployed. With no arguments it simulates a generated default cluster; {@code --targets} and
 * {@code --collectors} read a real one.
 */
@Command(name = "simulate", mixinStandardHelpOptions = true, sortOptions = false,
    description = {
      "Runs every allocation strategy through initial placement, scale out, scale in, a "
          + "DaemonSet rolling restart and a lost node, and prints balance, locality and "
          + "movement for each.",
      "Without --targets it generates a cluster (one collector per node, as a DaemonSet).",
      "Prints a verdict per scenario (balance, locality, movement); --table prints every "
          + "figure."},
    exitCodeOnInvalidInput = 2)
public final class SimulateCommand implements Callable<Integer> {
  @Option(names = "--targets", paramLabel = "FILE",
      description = "A Prometheus /api/v1/targets JSON response to read the targets from "
          + "(streamed; give the JVM about twice its size in heap).")
  Path targetsFile;

  @Option(names = "--collectors", paramLabel = "FILE",
      description = "Collectors, one a line: name node [zone]. Default: one per node seen in "
          + "the targets.")
  Path collectorsFile;

  @Option(names = "--costs", paramLabel = "FILE",
      description = "Target costs from a Prometheus instant-query response (/api/v1/query), e.g. "
          + "of scrape_samples_scraped or scrape_series_added, matched on --cost-labels. "
          + "Default: generated heavy-tailed (Pareto) costs for a generated cluster, 1 for a "
          + "--targets file.")
  Path costsFile;

  @Option(names = "--cost-labels", paramLabel = "LABELS", split = ",",
      description = "The labels --costs samples are matched on, comma-separated, against each "
          + "target's labels after relabelling (a --targets file's labels object); a target "
          + "lacking one matches nothing. Default: job,instance. Unmatched targets cost the "
          + "median of the matched.")
  List<String> costLabels = new ArrayList<>(CostInputs.DEFAULT_MATCH);

  @Option(names = "--unit-costs",
      description = "Every target costs 1 (balance by target count only).")
  boolean unitCosts;

  @Option(names = "--capacities", paramLabel = "LIST", split = ",",
      description = "Collector capacities, given in turn to the collectors in name order, e.g. "
          + "1,2,4; 1 makes them uniform. Default: 1,2,4 for a generated cluster (its pod "
          + "names are drawn from the seed, so which collector gets which is too), 1 for all "
          + "with --targets.")
  List<Double> capacities = new ArrayList<>();

  @Option(names = {"--table", "--full"},
      description = "Print every figure per strategy and scenario (a 15-column table) instead "
          + "of the verdicts.")
  boolean table;

  @Option(names = "--plot", paramLabel = "DIR",
      description = "Write charts (PNG) to this directory.")
  Path plotDir;

  @Option(names = "--strategy", paramLabel = "NAME",
      description = "A strategy to simulate; repeat for several. Besides the strategies, the "
          + "variants consistent-hashing:zones, least-weighted:zones, rendezvous:zones "
          + "(zone-aware, skew limit 2) and per-node:no-zones (fallback cluster-wide); "
          + "NAME@F sets the load factor, e.g. consistent-hashing@1.15. Default: all.")
  List<String> strategies = new ArrayList<>();

  @Option(names = "--scenario", paramLabel = "NAME", converter = ScenarioConverter.class,
      description = "A scenario to run (initial, scale-out, scale-in, rolling-restart, "
          + "node-lost, zone-half-lost, sweep); repeat for several. Default: all.")
  List<ClusterScenario> scenarios = new ArrayList<>();

  @Option(names = "--mode", defaultValue = "central",
      description = "How ownership is decided: ${COMPLETION-CANDIDATES} (central: one "
          + "allocator per strategy; local: every replica decides for itself, see "
          + "docs/ownership.md). Default: ${DEFAULT-VALUE}.")
  Mode mode;

  @Option(names = "--replicas", paramLabel = "K", defaultValue = "1",
      description = "Every target on K distinct collectors (1 to 8): peak/mean, cost, moved and "
          + "minimum count every replica, and a crash table compares the targets a crash "
          + "leaves with no live owner at 1 replica and at K. Default: ${DEFAULT-VALUE}.")
  int replicas;

  @Option(names = "--seed", defaultValue = "1", description = "Random seed. Default: 1.")
  long seed;

  @Option(names = "--zones", defaultValue = "3",
      description = "Generated cluster (not with --targets): zones. Default: ${DEFAULT-VALUE}.")
  int zones;

  @Option(names = "--nodes", defaultValue = "60",
      description = "Generated cluster (not with --targets): nodes, one collector each. "
          + "Default: ${DEFAULT-VALUE}.")
  int nodes;

  @Option(names = "--target-count", defaultValue = "30000",
      description = "Generated cluster (not with --targets): targets. Default: ${DEFAULT-VALUE}.")
  int targetCount;

  @Option(names = "--jobs", defaultValue = "12",
      description = "Generated cluster (not with --targets): scrape jobs. "
          + "Default: ${DEFAULT-VALUE}.")
  int jobs;

  @Option(names = "--nodeless-percent", defaultValue = "3",
      description = "Generated cluster (not with --targets): percent of targets with no node. "
          + "Default: ${DEFAULT-VALUE}.")
  double nodelessPercent;

  @Option(names = "--bytes-per-scrape", defaultValue = "50000",
      description = "Cost estimate: bytes one scrape transfers. Default: ${DEFAULT-VALUE}.")
  long bytesPerScrape;

  @Option(names = "--scrape-interval", defaultValue = "30",
      description = "Cost estimate: seconds between two scrapes of a target. "
          + "Default: ${DEFAULT-VALUE}.")
  double scrapeIntervalSeconds;

  @Option(names = "--price-per-gb", defaultValue = "0.01",
      description = "Cost estimate: USD per GB of inter-zone transfer, charged each way (out of "
          + "one zone and into the other). Default: ${DEFAULT-VALUE}, the common public-cloud "
          + "inter-zone rate.")
  double pricePerGb;

  @Spec
  CommandSpec spec;

  /** With --targets and --costs: each target's values of --cost-labels, as its series carry. */
  private Map<Target, List<String>> costKeys = Map.of();

  private PrintStream out = System.out;
  private PrintStream err = System.err;

  /**
   * Runs the command.
   *
   * @param args the arguments after {@code simulate}
   * @param out where the tables go
   * @param err where errors and progress go
   * @return the exit code: 0; 2 for bad input (one line on {@code err}); 1 when {@code --mode
   *     local} finds gaps or duplicates in its steady run
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    SimulateCommand command = new SimulateCommand();
    command.out = out;
    command.err = err;
    CommandLine cli = new CommandLine(command);
    cli.setCaseInsensitiveEnumValuesAllowed(true);
    cli.setOut(new PrintWriter(out, true, Charset.defaultCharset()));
    cli.setErr(new PrintWriter(err, true, Charset.defaultCharset()));
    // A mistyped option is bad input like a bad file: one line and exit code 2, no usage dump.
    cli.setParameterExceptionHandler((e, a) -> {
      err.println("apportion simulate: " + e.getMessage() + " (see simulate --help)");
      return 2;
    });
    return cli.execute(args);
  }

  @Override
  public Integer call() {
    try {
      checkOptions();
      checkCostOptions();
      if (plotDir != null) {
        checkPlotDir();
      }
      return simulate();
    } catch (InputException e) {
      err.println("apportion simulate: " + e.getMessage());
      return 2;
    } catch (OutOfMemoryError e) {
      err.println("apportion simulate: " + outOfMemory());
      return 2;
    }
  }

  private int simulate() throws InputException {
    Cluster cluster = withCostsAndCapacities(cluster());
    if (mode == Mode.LOCAL) {
      List<LocalSimulation.Row> rows = LocalSimulation.run(cluster);
      LocalSimulation.print(out, cluster, rows);
      LocalSimulation.Row steady = rows.get(0);
      return steady.gaps() == 0 && steady.duplicated() == 0 ? 0 : 1;
    }
    List<String> names = strategies();
    List<ClusterScenario> which =
        scenarios.isEmpty() ? List.of(ClusterScenario.values()) : scenarios;
    List<Result> results = new Simulator(mode, seed, interactive() ? err : null, replicas)
        .run(cluster, names, which);
    CrossZoneCost cost = new CrossZoneCost(bytesPerScrape, scrapeIntervalSeconds, pricePerGb);
    if (table) {
      ReportTable.print(out, cluster, results, cost);
    } else {
      Verdicts.print(out, cluster, results, cost);
    }
    if (replicas > 1) {
      out.println("replicas: " + replicas + " per target; peak/mean, cost, moved and minimum "
          + "count every replica.");
      CrashCost.print(out, CrashCost.run(cluster, names, seed, replicas), replicas);
    }
    if (plotDir != null) {
      List<Path> written;
      try {
        written = Charts.write(plotDir, results);
      } catch (IOException e) {
        throw new InputException("--plot " + plotDir + ": cannot write the charts: "
            + describe(e));
      }
      for (Path p : written) {
        out.println("wrote " + p);
      }
    }
    return 0;
  }

  /**
   * Whether a person is watching: progress lines go to stderr only then, never into a file or a
   * pipe. On JDK 22 and later {@code System.console()} is not null when the output is redirected
   * either; progress then still goes to stderr only, apart from the results on stdout.
   */
  @SuppressWarnings("SystemConsoleNull")
  private static boolean interactive() {
    return System.console() != null;
  }

  /** The options that shape a generated cluster; they do not apply to one read with --targets. */
  private static final List<String> SHAPE_OPTIONS =
      List.of("--zones", "--nodes", "--target-count", "--jobs", "--nodeless-percent");

  /** The most nodes a generated cluster may have (pod names are drawn from 27^5 suffixes). */
  static final int MAX_NODES = 100_000;
  /** The most targets a generated cluster may have (pod targets get distinct 10.x.y.z IPs). */
  static final int MAX_TARGETS = 1 << 24;

  /** Checks the options together, before any input is read or anything simulated. */
  private void checkOptions() throws InputException {
    CommandLine.ParseResult given = spec.commandLine().getParseResult();
    if (replicas < 1 || replicas > 8) {
      throw new InputException("--replicas must be from 1 to 8: " + replicas);
    }
    if (mode == Mode.LOCAL && replicas != 1) {
      throw new InputException("--mode local takes no --replicas: each replica of the "
          + "ownership module decides its own targets");
    }
    if (mode == Mode.LOCAL && (!strategies.isEmpty() || !scenarios.isEmpty()
        || plotDir != null)) {
      throw new InputException("--mode local takes no --strategy, --scenario or --plot: "
          + "every replica uses " + Allocators.RENDEZVOUS + " ownership, and the runs are its own");
    }
    if (targetsFile != null) {
      for (String option : SHAPE_OPTIONS) {
        if (given.hasMatchedOption(option)) {
          throw new InputException(option + " does not apply with --targets: it shapes the "
              + "generated cluster, and --targets reads a real one");
        }
      }
      if (mode == Mode.LOCAL && given.hasMatchedOption("--seed")) {
        throw new InputException("--seed does not apply with --mode local and --targets: "
            + "nothing is drawn at random");
      }
      return;
    }
    if (collectorsFile != null) {
      throw new InputException("--collectors needs --targets (the generated cluster brings "
          + "its own collectors)");
    }
    if (bytesPerScrape < 0 || !(scrapeIntervalSeconds > 0) || Double.isInfinite(
        scrapeIntervalSeconds) || !(pricePerGb >= 0) || Double.isInfinite(pricePerGb)) {
      throw new InputException("bad cost options: --bytes-per-scrape must be >= 0, "
          + "--scrape-interval > 0 and --price-per-gb >= 0");
    }
    String bad = "bad cluster options: ";
    if (nodes < 1 || nodes > MAX_NODES) {
      throw new InputException(bad + "--nodes must be from 1 to " + MAX_NODES + ": " + nodes);
    }
    if (zones < 1 || zones > nodes) {
      throw new InputException(bad + "--zones must be from 1 to the number of nodes (" + nodes
          + "): " + zones);
    }
    if (targetCount < 0 || targetCount > MAX_TARGETS) {
      throw new InputException(bad + "--target-count must be from 0 to " + MAX_TARGETS + ": "
          + targetCount);
    }
    if (jobs < 1) {
      throw new InputException(bad + "--jobs must be at least 1: " + jobs);
    }
    if (!(nodelessPercent >= 0 && nodelessPercent <= 100)) {
      throw new InputException(bad + "--nodeless-percent must be a number from 0 to 100: "
          + nodelessPercent);
    }
  }

  /**
   * Makes sure the charts can be written before anything is simulated: creates the directory if
   * missing, then creates and deletes a file in it.
   */
  private void checkPlotDir() throws InputException {
    String option = "--plot " + plotDir + ": ";
    try {
      Files.createDirectories(plotDir);
    } catch (FileAlreadyExistsException e) {
      throw new InputException(option + "not a directory (a file is in the way: "
          + e.getFile() + ")");
    } catch (IOException | SecurityException e) {
      throw new InputException(option + "cannot create the directory: " + describe(e));
    }
    if (!Files.isDirectory(plotDir)) {
      throw new InputException(option + "not a directory");
    }
    try {
      Path probe = Files.createTempFile(plotDir, ".apportion-", ".probe");
      Files.delete(probe);
    } catch (IOException | SecurityException e) {
      throw new InputException(option + "cannot write in the directory: " + describe(e));
    }
  }

  /**
   * Heap to give per byte of a targets file. Measured (docs/simulator.md): a generated response
   * of 200,000 targets (127 MB, 667 bytes a target) read and simulated (every strategy, every
   * scenario) in a 128 MB heap, not in 112 MB, and at nearly full speed from 256 MB; 1,000,000
   * targets (667 MB) likewise. Twice the file leaves room for labels less repetitive than those.
   */
  static final int HEAP_PER_FILE_BYTE = 2;
  /**
   * Heap to give per generated target, in bytes: 200,000 generated targets ran in a 128 MB heap,
   * not in 96 MB (about 600 bytes a target); this is that with room to spare.
   */
  static final int HEAP_PER_GENERATED_TARGET = 1024;

  /** One line: how much heap there was, and how much to give. */
  private String outOfMemory() {
    long max = Runtime.getRuntime().maxMemory();
    if (targetsFile != null) {
      long size;
      try {
        size = Files.size(targetsFile);
      } catch (IOException | SecurityException e) {
        size = 0;
      }
      return outOfMemory(max, "reading or simulating " + targetsFile + " (" + megabytes(size)
          + ")", "give the JVM about " + HEAP_PER_FILE_BYTE + " times the file's size",
          size * HEAP_PER_FILE_BYTE);
    }
    return outOfMemory(max, "simulating " + targetCount + " generated targets",
        "give the JVM about " + HEAP_PER_GENERATED_TARGET / 1024 + " KB per target",
        (long) targetCount * HEAP_PER_GENERATED_TARGET);
  }

  /**
   * The out-of-memory line: what ran out, the rule, and an {@code -Xmx} to pass: the rule's
   * estimate, or twice the heap that ran out when the estimate is not more than that, rounded up
   * to 64 MB below 1 GB and to whole gigabytes above.
   */
  static String outOfMemory(long maxHeap, String what, String rule, long estimate) {
    long need = estimate > maxHeap ? estimate : 2 * maxHeap;
    long mb = (need + (1 << 20) - 1) >> 20;
    String xmx = mb < 1024 ? ((mb + 63) / 64 * 64) + "m" : ((mb + 1023) / 1024) + "g";
    return "out of memory (maximum heap " + megabytes(maxHeap) + ") " + what + ": " + rule
        + ", e.g. java -Xmx" + xmx + " -jar apportion.jar simulate ...";
  }

  private static String megabytes(long bytes) {
    return ((bytes + (1 << 20) - 1) >> 20) + " MB";
  }

  private static String describe(Exception e) {
    return SimulationInputs.describe(e);
  }

  private List<String> strategies() throws InputException {
    SortedSet<String> known = Allocators.strategies();
    known.addAll(dev.apportion.bench.Placement.variants());
    if (strategies.isEmpty()) {
      return new ArrayList<>(known);
    }
    for (String given : strategies) {
      String s = given;
      int at = s.indexOf(dev.apportion.bench.Placement.LOAD_FACTOR);
      if (at >= 0) {
        String factor = s.substring(at + 1);
        double f;
        try {
          f = Double.parseDouble(factor);
        } catch (NumberFormatException e) {
          f = Double.NaN;
        }
        if (!(f > 1) || Double.isInfinite(f)) {
          throw new InputException("--strategy " + s + ": the load factor after '@' must be a "
              + "number above 1, not '" + factor + "'");
        }
        s = s.substring(0, at);
      }
      if (!known.contains(s)) {
        throw new InputException("--strategy: unknown strategy '" + s + "'; known: "
            + String.join(", ", known));
      }
    }
    return strategies;
  }

  private Cluster cluster() throws InputException {
    if (targetsFile == null) {
      return ClusterGenerator.generate(new ClusterGenerator.Shape(zones, nodes, targetCount,
          jobs, nodelessPercent / 100.0), seed);
    }
    SimulationInputs.Targets read = SimulationInputs.readTargets(targetsFile,
        costsFile == null ? List.of() : costLabels);
    costKeys = read.keys();
    if (read.targets().isEmpty()) {
      throw new InputException(targetsFile + ": the file has no active targets (field "
          + "data.activeTargets is empty), so there is nothing to simulate");
    }
    Map<String, String> zoneMap = new TreeMap<>(read.zones());
    List<Collector> collectors;
    if (collectorsFile != null) {
      SimulationInputs.Collectors c = SimulationInputs.readCollectors(collectorsFile);
      collectors = c.collectors();
      zoneMap.putAll(c.zones());
    } else {
      TreeMap<String, Boolean> seen = new TreeMap<>();
      for (Target t : read.targets()) {
        t.node().ifPresent(n -> seen.put(n, true));
      }
      if (seen.isEmpty()) {
        throw new InputException(targetsFile + ": no target names a node, so no collector can "
            + "be derived from them; give the collectors with --collectors FILE");
      }
      collectors = new ArrayList<>();
      for (String node : seen.keySet()) {
        collectors.add(Collector.of("collector-" + node, node));
      }
    }
    return new Cluster(zoneMap, collectors, read.targets());
  }

  /** The capacities a generated cluster's collectors get in turn unless --capacities is given. */
  static final List<Double> GENERATED_CAPACITIES = List.of(1.0, 2.0, 4.0);

  /** Checks the cost and capacity options, before any input is read. */
  private void checkCostOptions() throws InputException {
    CommandLine.ParseResult given = spec.commandLine().getParseResult();
    if (costsFile != null && unitCosts) {
      throw new InputException("--costs and --unit-costs exclude each other");
    }
    if (costsFile == null && given.hasMatchedOption("--cost-labels")) {
      throw new InputException("--cost-labels needs --costs (it names the labels --costs "
          + "samples are matched on)");
    }
    for (String label : costLabels) {
      if (label.isEmpty()) {
        throw new InputException("--cost-labels: a label name is empty: '"
            + String.join(",", costLabels) + "'");
      }
    }
    if (costLabels.isEmpty()) {
      throw new InputException("--cost-labels names no label");
    }
    for (double w : capacities) {
      if (!(w > 0) || Double.isInfinite(w)) {
        throw new InputException("--capacities: each must be a finite number > 0: " + w);
      }
    }
  }

  private Cluster withCostsAndCapacities(Cluster cluster) throws InputException {
    Cluster out = cluster;
    if (costsFile != null) {
      Map<List<String>, Long> read = CostInputs.read(costsFile, costLabels);
      List<String> match = List.copyOf(costLabels);
      CostInputs.Costed c = CostInputs.attach(cluster, read, t -> {
        List<String> key = costKeys.get(t);
        return key != null ? key : CostInputs.key(t, match);
      });
      err.println("costs: " + c.matched() + " of " + cluster.targets().size() + " targets "
          + "matched a sample of " + costsFile + " on " + String.join(",", costLabels)
          + "; the others cost the median, " + c.fallbackCost());
      out = c.cluster();
    } else if (!unitCosts && targetsFile == null) {
      // Generated clusters get generated costs; a real one without --costs has none to show.
      out = CostInputs.pareto(cluster, seed);
    }
    // A generated cluster mixes capacities; a real one has 1 everywhere unless told otherwise.
    List<Double> given = !capacities.isEmpty() ? capacities
        : targetsFile == null ? GENERATED_CAPACITIES : List.of();
    if (!given.isEmpty()) {
      double[] pattern = new double[given.size()];
      for (int i = 0; i < pattern.length; i++) {
        pattern[i] = given.get(i);
      }
      List<Collector> sorted = new ArrayList<>(out.collectors());
      java.util.Collections.sort(sorted);
      out = CostInputs.capacities(out.with(sorted, out.targets()), pattern);
    }
    return out;
  }

  /** Accepts a scenario's id ("rolling-restart") or its constant's name. */
  static final class ScenarioConverter implements CommandLine.ITypeConverter<ClusterScenario> {
    @Override
    public ClusterScenario convert(String value) {
      for (ClusterScenario s : ClusterScenario.values()) {
        if (s.id().equalsIgnoreCase(value) || s.name().equalsIgnoreCase(value)) {
          return s;
        }
      }
      throw new CommandLine.TypeConversionException("unknown scenario '" + value
          + "'; known: initial, scale-out, scale-in, rolling-restart, node-lost, "
          + "zone-half-lost");
    }
  }
}
