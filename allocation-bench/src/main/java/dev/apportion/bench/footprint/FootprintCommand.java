package dev.apportion.bench.footprint;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Target;
import dev.apportion.bench.sim.Cluster;
import dev.apportion.bench.sim.ClusterGenerator;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code apportion footprint}: how much heap an allocator retains, and how much a {@link Target}
 * retains, in bytes per target.
 *
 * <pre>
 * java -jar allocation-bench/target/apportion.jar footprint
 * </pre>
 *
 * <p><b>How.</b> Each figure is a difference of the used heap measured after full collections
 * ({@code System.gc()}, repeated until the figure settles), with everything that is not measured
 * alive in both measurements, and it is taken several times ({@code --repeats}) and the median
 * printed:
 *
 * <ul>
 *   <li><i>allocator</i>: the cluster's collectors and targets are alive in both; the second
 *       measurement adds an allocator of the strategy that has placed them. The difference is
 *       what the allocator holds, the targets themselves excluded;
 *   <li><i>target</i>: targets with twelve labels (four identity labels, eight
 *       {@code __meta_kubernetes_*} ones), built from label names and values that exist before
 *       the first measurement and are shared, as interned strings are, so that strings are
 *       excluded; the array that holds the targets exists before too. The difference is the
 *       targets' own objects: the target, its label map, and what it derives.
 * </ul>
 *
 * <p>A figure from one JVM, not a guarantee: it depends on the collector, the object layout
 * (compressed references are on below a 32 GB heap) and the JDK. Run it on G1 (the default) with
 * the default heap, as an embedding process runs: G1 gives an array of half a region or more
 * (humongous) whole regions of its own, so the figure includes the unused tail of their last
 * region, and the region size follows the heap (4 MB for the default heap of a 24 GB machine, 1
 * MB for {@code -Xmx2g}, where every array of 100k longs is humongous and the figures come out
 * 10-15 bytes a target higher). Under the serial collector on JDK 17
 * the used heap after {@code System.gc()} was measured to come out unchanged now and then (the
 * median then read 0 bytes), so its figures are not to be trusted here.
 */
@Command(name = "footprint", mixinStandardHelpOptions = true, sortOptions = false,
    description = {
      "Measures the heap an allocator retains holding placed targets, and the heap a Target "
          + "retains, in bytes per target (median of several measurements of the used heap "
          + "after System.gc())."},
    exitCodeOnInvalidInput = 2)
public final class FootprintCommand implements Callable<Integer> {
  private static final int LABELS = 12;

  @Option(names = "--targets", defaultValue = "100000",
      description = "Targets placed, and targets built. Default: ${DEFAULT-VALUE}.")
  int targets;

  @Option(names = "--collectors", defaultValue = "1000",
      description = "Collectors (one per node). Default: ${DEFAULT-VALUE}.")
  int collectors;

  @Option(names = "--strategy", paramLabel = "NAME",
      description = "A strategy to measure; repeat for several. Default: all.")
  List<String> strategies = new ArrayList<>();

  @Option(names = "--repeats", defaultValue = "5",
      description = "Measurements per figure; the median is printed. Default: ${DEFAULT-VALUE}.")
  int repeats;

  private PrintStream out = System.out;

  /**
   * Runs the command.
   *
   * @param args the arguments after {@code footprint}
   * @param out where the figures go
   * @param err where errors go
   * @return the exit code: 0, or 2 for bad input
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    FootprintCommand command = new FootprintCommand();
    command.out = out;
    CommandLine cli = new CommandLine(command);
    cli.setOut(new PrintWriter(out, true, Charset.defaultCharset()));
    cli.setErr(new PrintWriter(err, true, Charset.defaultCharset()));
    cli.setParameterExceptionHandler((e, a) -> {
      err.println("apportion footprint: " + e.getMessage() + " (see footprint --help)");
      return 2;
    });
    cli.setExecutionExceptionHandler((e, c, p) -> {
      if (e instanceof IllegalArgumentException) {
        err.println("apportion footprint: " + e.getMessage());
        return 2;
      }
      throw e;
    });
    return cli.execute(args);
  }

  @Override
  public Integer call() {
    if (targets < 1 || collectors < 1 || repeats < 1) {
      throw new IllegalArgumentException("--targets, --collectors and --repeats must be at "
          + "least 1");
    }
    SortedSet<String> known = Allocators.strategies();
    for (String s : strategies) {
      if (!known.contains(s)) {
        throw new IllegalArgumentException("--strategy: unknown strategy '" + s + "'; known: "
            + String.join(", ", known));
      }
    }
    List<String> which = strategies.isEmpty() ? new ArrayList<>(known) : strategies;
    out.printf("heap used after System.gc(), median of %d; collector: %s%n", repeats, gcNames());

    Cluster cluster = ClusterGenerator.generate(
        new ClusterGenerator.Shape(3, collectors, targets, 12, 0.03), 42);
    out.printf("allocator holding %d placed targets on %d collectors (targets excluded):%n",
        targets, collectors);
    out.printf("  %-20s %14s %16s %10s%n", "strategy", "bytes/target", "min-max", "MB");
    for (String strategy : which) {
      long[] bytes = measure(() -> allocatorBytes(strategy, cluster));
      out.printf("  %-20s %14.1f %16s %10.1f%n", strategy, perTarget(bytes[repeats / 2]),
          range(bytes), bytes[repeats / 2] / 1e6);
    }

    long[] bytes = measure(this::targetBytes);
    out.printf("Target with %d labels, %d built (label strings excluded): %.1f bytes/target "
        + "(min-max %s)%n", LABELS, targets, perTarget(bytes[repeats / 2]), range(bytes));
    return 0;
  }

  private double perTarget(long bytes) {
    return (double) bytes / targets;
  }

  private String range(long[] sorted) {
    return String.format("%.1f-%.1f", perTarget(sorted[0]), perTarget(sorted[repeats - 1]));
  }

  /** Keeps the allocator being measured reachable. */
  // Written, never read: holding the allocator is its whole purpose.
  @SuppressWarnings("UnusedVariable")
  private static volatile Object held;

  /** One measurement of the heap an allocator of {@code strategy} retains. */
  private static long allocatorBytes(String strategy, Cluster cluster) {
    long before = usedAfterGc();
    Allocator allocator = Allocators.builder(strategy).warnWhenMovedShareExceeds(1.0).build();
    allocator.setCollectors(cluster.collectors());
    allocator.setTargets(cluster.targets());
    // A static field, not only a reachability fence: with the fence alone, runs measured 0 bytes
    // now and then (the allocator collected before the second measurement).
    try {
      held = allocator;
      long after = usedAfterGc();
      held = null;
      return after - before;
    } finally {
      Reference.reachabilityFence(allocator);
      Reference.reachabilityFence(cluster);
    }
  }

  /** One measurement of the heap {@link #targets} targets retain, strings excluded. */
  private long targetBytes() {
    String[] names = {
      "namespace", "pod", "container", "app",
      "__meta_kubernetes_namespace", "__meta_kubernetes_pod_name",
      "__meta_kubernetes_pod_node_name", "__meta_kubernetes_pod_ip",
      "__meta_kubernetes_pod_ready", "__meta_kubernetes_pod_phase",
      "__meta_kubernetes_pod_container_name", "__meta_kubernetes_pod_container_port_number"};
    String job = "kubernetes-pods";
    String[] addresses = new String[targets];
    String[][] values = new String[targets][];
    String[] nodes = new String[Math.max(1, collectors)];
    for (int n = 0; n < nodes.length; n++) {
      nodes[n] = "node-" + n;
    }
    for (int i = 0; i < targets; i++) {
      String ip = "10." + ((i >>> 16) & 0xFF) + "." + ((i >>> 8) & 0xFF) + "." + (i & 0xFF);
      String namespace = ("ns-" + (i % 12)).intern();
      String app = ("app-" + (i % 40)).intern();
      String pod = app + "-" + Integer.toString(i, 36);
      addresses[i] = ip + ":8080";
      values[i] = new String[] {
        namespace, pod, "server", app,
        namespace, pod, nodes[i % nodes.length], ip, "true", "Running", "server", "8080"};
    }
    Target[] built = new Target[targets];
    long before = usedAfterGc();
    for (int i = 0; i < targets; i++) {
      Map<String, String> labels = new HashMap<>();
      for (int l = 0; l < LABELS; l++) {
        labels.put(names[l], values[i][l]);
      }
      built[i] = Target.of(job, addresses[i], labels);
    }
    try {
      return usedAfterGc() - before;
    } finally {
      Reference.reachabilityFence(built);
      Reference.reachabilityFence(values);
      Reference.reachabilityFence(addresses);
    }
  }

  /** Used heap after full collections, once two in a row agree within 1 KB (at most 5). */
  private static long usedAfterGc() {
    Runtime runtime = Runtime.getRuntime();
    long previous = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      long used = runtime.totalMemory() - runtime.freeMemory();
      if (Math.abs(previous - used) < 1024) {
        return used;
      }
      previous = used;
    }
    return previous;
  }

  /** {@link #repeats} measurements, sorted: the median is in the middle. */
  private long[] measure(Measurement measurement) {
    long[] figures = new long[repeats];
    for (int i = 0; i < repeats; i++) {
      figures[i] = measurement.bytes();
    }
    Arrays.sort(figures);
    return figures;
  }

  private static String gcNames() {
    List<String> names = new ArrayList<>();
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      names.add(gc.getName());
    }
    return String.join(", ", names);
  }

  /** One measurement, in bytes. */
  @FunctionalInterface
  private interface Measurement {
    long bytes();
  }
}
