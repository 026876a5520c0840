package dev.apportion.bench.sim;

import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

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
      "Without --targets it generates a cluster (one collector per node, as a DaemonSet)."},
    exitCodeOnInvalidInput = 2)
public final class SimulateCommand implements Callable<Integer> {
  @Option(names = "--targets", paramLabel = "FILE",
      description = "A Prometheus /api/v1/targets JSON response to read the targets from.")
  Path targetsFile;

  @Option(names = "--collectors", paramLabel = "FILE",
      description = "Collectors, one a line: name node [zone]. Default: one per node seen in "
          + "the targets.")
  Path collectorsFile;

  @Option(names = "--plot", paramLabel = "DIR",
      description = "Write charts (PNG) to this directory.")
  Path plotDir;

  @Option(names = "--strategy", paramLabel = "NAME",
      description = "A strategy to simulate; repeat for several. Default: all.")
  List<String> strategies = new ArrayList<>();

  @Option(names = "--scenario", paramLabel = "NAME", converter = ScenarioConverter.class,
      description = "A scenario to run (initial, scale-out, scale-in, rolling-restart, "
          + "node-lost); repeat for several. Default: all.")
  List<Scenario> scenarios = new ArrayList<>();

  @Option(names = "--mode", defaultValue = "central",
      description = "How ownership is decided: ${COMPLETION-CANDIDATES} (central: one "
          + "allocator per strategy; local: every replica decides for itself, see "
          + "docs/ownership.md). Default: ${DEFAULT-VALUE}.")
  Mode mode;

  @Option(names = "--seed", defaultValue = "1", description = "Random seed. Default: 1.")
  long seed;

  @Option(names = "--zones", defaultValue = "3",
      description = "Generated cluster: zones. Default: ${DEFAULT-VALUE}.")
  int zones;

  @Option(names = "--nodes", defaultValue = "60",
      description = "Generated cluster: nodes, one collector each. Default: ${DEFAULT-VALUE}.")
  int nodes;

  @Option(names = "--target-count", defaultValue = "30000",
      description = "Generated cluster: targets. Default: ${DEFAULT-VALUE}.")
  int targetCount;

  @Option(names = "--jobs", defaultValue = "12",
      description = "Generated cluster: scrape jobs. Default: ${DEFAULT-VALUE}.")
  int jobs;

  @Option(names = "--nodeless-percent", defaultValue = "3",
      description = "Generated cluster: percent of targets with no node. Default: "
          + "${DEFAULT-VALUE}.")
  double nodelessPercent;

  private PrintStream out = System.out;
  private PrintStream err = System.err;

  /**
   * Runs the command.
   *
   * @param args the arguments after {@code simulate}
   * @param out where the tables go
   * @param err where errors and progress go
   * @return the exit code: 0, or 2 for bad input
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    SimulateCommand command = new SimulateCommand();
    command.out = out;
    command.err = err;
    CommandLine cli = new CommandLine(command);
    cli.setCaseInsensitiveEnumValuesAllowed(true);
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    // A mistyped option is bad input like a bad file: one line and exit code 2, no usage dump.
    cli.setParameterExceptionHandler((e, a) -> {
      err.println("apportion simulate: " + e.getMessage() + " (see simulate --help)");
      return 2;
    });
    return cli.execute(args);
  }

  @Override
  public Integer call() throws IOException {
    try {
      Cluster cluster = cluster();
      if (mode == Mode.LOCAL) {
        if (!strategies.isEmpty() || !scenarios.isEmpty() || plotDir != null) {
          throw new InputException("--mode local takes no --strategy, --scenario or --plot: "
              + "every replica uses rendezvous ownership, and the runs are its own");
        }
        List<LocalSimulation.Row> rows = LocalSimulation.run(cluster);
        LocalSimulation.print(out, cluster, rows);
        LocalSimulation.Row steady = rows.get(0);
        return steady.gaps() == 0 && steady.duplicated() == 0 ? 0 : 1;
      }
      List<String> names = strategies();
      List<Scenario> which = scenarios.isEmpty() ? List.of(Scenario.values()) : scenarios;
      List<Result> results = new Simulator(mode, seed, err).run(cluster, names, which);
      ReportTable.print(out, cluster, results);
      if (plotDir != null) {
        for (Path p : Charts.write(plotDir, results)) {
          out.println("wrote " + p);
        }
      }
      return 0;
    } catch (InputException e) {
      err.println("apportion simulate: " + e.getMessage());
      return 2;
    }
  }

  private List<String> strategies() throws InputException {
    SortedSet<String> known = Allocators.strategies();
    if (strategies.isEmpty()) {
      return new ArrayList<>(known);
    }
    for (String s : strategies) {
      if (!known.contains(s)) {
        throw new InputException("--strategy: unknown strategy '" + s + "'; known: "
            + String.join(", ", known));
      }
    }
    return strategies;
  }

  private Cluster cluster() throws InputException {
    if (targetsFile == null) {
      if (collectorsFile != null) {
        throw new InputException("--collectors needs --targets (the generated cluster brings "
            + "its own collectors)");
      }
      try {
        return ClusterGenerator.generate(new ClusterGenerator.Shape(zones, nodes, targetCount,
            jobs, nodelessPercent / 100.0), seed);
      } catch (IllegalArgumentException e) {
        throw new InputException("bad cluster options: " + e.getMessage());
      }
    }
    Inputs.Targets read = Inputs.readTargets(targetsFile);
    Map<String, String> zoneMap = new TreeMap<>(read.zones());
    List<Collector> collectors;
    if (collectorsFile != null) {
      Inputs.Collectors c = Inputs.readCollectors(collectorsFile);
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
    if (read.targets().isEmpty()) {
      throw new InputException(targetsFile + ": field data.activeTargets is empty");
    }
    return new Cluster(zoneMap, collectors, read.targets());
  }

  /** Accepts a scenario's id ("rolling-restart") or its constant's name. */
  static final class ScenarioConverter implements CommandLine.ITypeConverter<Scenario> {
    @Override
    public Scenario convert(String value) {
      for (Scenario s : Scenario.values()) {
        if (s.id().equalsIgnoreCase(value) || s.name().equalsIgnoreCase(value)) {
          return s;
        }
      }
      throw new CommandLine.TypeConversionException("unknown scenario '" + value
          + "'; known: initial, scale-out, scale-in, rolling-restart, node-lost");
    }
  }
}
