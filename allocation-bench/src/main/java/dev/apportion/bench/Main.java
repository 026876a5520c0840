package dev.apportion.bench;

import dev.apportion.bench.footprint.FootprintCommand;
import dev.apportion.bench.movement.MovementCommand;
import dev.apportion.bench.refreshheap.RefreshHeapCommand;
import dev.apportion.bench.sim.SimulateCommand;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.Set;

/**
 * The entry point of {@code apportion.jar}: the simulator, three measurements and the JMH
 * benchmarks. With no argument, or {@code --help}, it prints {@link #USAGE}.
 */
public final class Main {
  /** What {@code java -jar apportion.jar --help} prints. */
  static final String USAGE = String.join(System.lineSeparator(),
      "Usage: java -jar apportion.jar COMMAND [OPTIONS]",
      "",
      "Commands:",
      "  simulate      What each allocation strategy does to a cluster: balance, locality and",
      "                movement through placement, scaling, a rolling restart and lost nodes,",
      "                on a generated cluster or on yours (--targets FILE).",
      "  footprint     The heap an allocator retains between calls, in bytes a target.",
      "  movement      Balance against movement, per strategy and load factor.",
      "  refresh-heap  The heap growth while allocation-server refreshes one HTTP SD source.",
      "  bench [JMH options] [BENCHMARK...]",
      "                The JMH benchmarks: 'bench -l' lists them, 'bench -h' lists JMH's",
      "                options, e.g. 'bench ReassignmentTimeChange -p contender=PER_NODE'.",
      "                Arguments that start with a benchmark's name or a JMH option go to JMH",
      "                as well, without 'bench'.",
      "",
      "'COMMAND --help' lists a command's options. docs/benchmarks.md says what each benchmark",
      "measures and how to run it; docs/simulator.md explains the simulator's figures.");

  private static final Set<String> HELP = Set.of("-h", "--help", "help", "-help");

  private Main() {}

  /**
   * Dispatches to the simulator, the footprint, movement or refresh-heap measurement, or JMH;
   * prints the usage for no argument or a help option.
   *
   * @param args the command line
   * @throws Exception when JMH fails to start
   */
  public static void main(String[] args) throws Exception {
    System.setProperty("java.awt.headless", "true");
    System.exit(dispatch(args, System.out, System.err));
  }

  /**
   * Runs one of the jar's own commands or JMH, or prints the usage.
   *
   * @return the exit code: 0, or what the command returned; 2 for no argument (the usage on
   *     {@code err}); JMH exits by itself when it fails
   */
  static int dispatch(String[] args, PrintStream out, PrintStream err) throws Exception {
    if (args.length == 0) {
      err.println(USAGE);
      return 2;
    }
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    return switch (args[0]) {
      case "simulate" -> SimulateCommand.run(rest, out, err);
      case "footprint" -> FootprintCommand.run(rest, out, err);
      case "refresh-heap" -> RefreshHeapCommand.run(rest, out, err);
      case "movement" -> MovementCommand.run(rest, out, err);
      case "bench" -> jmh(rest);
      default -> {
        if (HELP.contains(args[0])) {
          out.println(USAGE);
          yield 0;
        }
        yield jmh(args);
      }
    };
  }

  /** Runs JMH with {@code args}, as its own {@code Main} would; it exits by itself on failure. */
  private static int jmh(String[] args) throws Exception {
    org.openjdk.jmh.Main.main(args);
    return 0;
  }
}
