package dev.apportion.allocation.testkit;

import dev.apportion.allocation.AllocationListener;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The model-based property runner: generates scenarios from seeds, applies each to a fresh
 * allocator step by step, checks every {@link Invariant} after every step, and on a failure
 * shrinks the scenario to a minimal one and reports it with its seed.
 *
 * <pre>{@code
 * // In any test framework; assertHolds throws AssertionError with the report.
 * PropertyRunner.forStrategy("my-strategy")
 *     .invariants(Invariants.forStrategy("my-strategy"))
 *     .tries(200)
 *     .assertHolds();
 * }</pre>
 *
 * <h2>Reproducibility</h2>
 * Try {@code i} runs the scenario {@link Generator#scenario(long)} makes from a seed derived from
 * a base seed (a fixed function of the runner's label) and {@code i}; the kit draws every random
 * choice from that seed with its own SplitMix64, never from an unseeded source or a hash order, so
 * the same seed gives the same run on any machine. A run with more tries explores a superset of the
 * tries of a run with fewer.
 *
 * <h2>System properties</h2>
 * <ul>
 *   <li>{@value #TRIES_PROPERTY}: the number of tries, overriding {@link #tries(int)} (a deeper
 *       search: {@code mvn verify -Dapportion.tries=5000});
 *   <li>{@value #SEED_PROPERTY}: run only the try with this seed (decimal, or hex with
 *       {@code 0x}), as a failure report prints it, overriding {@link #seed(long)}.
 * </ul>
 *
 * <p>Not thread-safe: configure and run from one thread. A run blocks the caller while it makes
 * every call and check (and, for {@link #checkConcurrentSnapshots()}, while a reader thread runs).
 *
 * @since 0.1.0
 */
public final class PropertyRunner {
  /** The system property that sets the number of tries. */
  public static final String TRIES_PROPERTY = "apportion.tries";
  /** The system property that replays one seed. */
  public static final String SEED_PROPERTY = "apportion.seed";
  /** Tries per run when neither {@link #tries(int)} nor {@value #TRIES_PROPERTY} says. */
  public static final int DEFAULT_TRIES = 100;
  /** Scenario runs the shrinker may spend when none is set. */
  public static final int DEFAULT_SHRINK_BUDGET = 2000;
  /** Writer passes per scenario of {@link #checkConcurrentSnapshots()} when none is set. */
  public static final int DEFAULT_CONCURRENT_PASSES = 20;

  private final String label;
  private Execution.Factory factory;
  private String java;
  /** How {@link #replicas(int)} rebuilds the factory; null for a runner of given allocators. */
  private IntFunction<Execution.Factory> byReplicas;
  private List<Invariant> invariants;
  private String invariantsJava = "";
  private Generator generator = Generator.defaults();
  private int tries = DEFAULT_TRIES;
  private Long seed;
  private int shrinkBudget = DEFAULT_SHRINK_BUDGET;
  private int concurrentPasses = DEFAULT_CONCURRENT_PASSES;
  private Function<String, String> properties = System::getProperty;

  private PropertyRunner(String label, Execution.Factory factory, String java,
      List<Invariant> invariants) {
    this.label = label;
    this.factory = factory;
    this.java = java;
    this.invariants = invariants;
  }

  /**
   * A runner for a strategy found by name through {@link Allocators}, built with defaults and
   * checked against {@link Invariants#forStrategy(String)}. The runner registers a listener on
   * each allocator it builds, so {@link Invariants#reportedMoves()} is checked.
   *
   * @param strategy the strategy's name
   * @return a new runner
   * @throws NullPointerException if {@code strategy} is null
   * @throws IllegalArgumentException if no provider has that name
   */
  public static PropertyRunner forStrategy(String strategy) {
    return forStrategy(strategy, b -> b, "");
  }

  /**
   * A runner for a strategy found by name, with a builder configuration (a fallback, a load
   * factor), checked against {@link Invariants#forStrategy(String)} unless told otherwise.
   *
   * @param strategy the strategy's name
   * @param configure applied to each fresh builder before the runner adds its listener
   * @return a new runner
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if no provider has that name
   */
  public static PropertyRunner forStrategy(String strategy,
      UnaryOperator<Allocators.Builder> configure) {
    return forStrategy(strategy, configure, ", b -> b /* your builder configuration */");
  }

  private static PropertyRunner forStrategy(String strategy,
      UnaryOperator<Allocators.Builder> configure, String configureJava) {
    Objects.requireNonNull(strategy, "strategy must not be null");
    Objects.requireNonNull(configure, "configure must not be null");
    Allocators.builder(strategy);
    IntFunction<Execution.Factory> byReplicas = k -> new Execution.Factory() {
      @Override
      public Allocator create(AllocationListener sink) {
        Allocators.Builder b = configure.apply(Allocators.builder(strategy));
        if (k != 1) {
          b.replicas(k); // checks k; with 1 the builder is left exactly as configured
        }
        if (sink != Execution.IGNORE) {
          b.listener(sink);
        }
        return b.build();
      }

      @Override
      public boolean observes() {
        return true;
      }
    };
    PropertyRunner runner = new PropertyRunner(strategy, byReplicas.apply(1),
        "PropertyRunner.forStrategy(" + JavaCode.string(strategy) + configureJava + ")",
        Invariants.forStrategy(strategy));
    runner.byReplicas = byReplicas;
    return runner;
  }

  /**
   * Runs the strategy with {@code k} replicas: each allocator is built with
   * {@link Allocators.Builder#replicas(int) replicas(k)} after the builder configuration. The
   * scenarios are the same as at any other {@code k} (the seeds come from the label), and the
   * invariants read the replica count from the snapshots, so {@link Invariants#forStrategy}
   * holds the strategy to its replica promises as well.
   *
   * @param k replicas per target, 1 to
   *     {@value dev.apportion.allocation.spi.AllocatorSpec#MAX_REPLICAS}
   * @return this runner
   * @throws IllegalStateException if the runner was not made by {@link #forStrategy}
   * @throws IllegalArgumentException if {@code k} is out of range or the strategy cannot place
   *     replicas
   */
  public PropertyRunner replicas(int k) {
    if (byReplicas == null) {
      throw new IllegalStateException("replicas(k) is for runners made by forStrategy; build "
          + "the replicas into your own factory");
    }
    Execution.Factory f = byReplicas.apply(k);
    f.create(Execution.IGNORE); // fails fast on a count the strategy refuses
    this.factory = f;
    this.java = java.replaceFirst("\\n    \\.replicas\\(\\d+\\)$", "")
        + (k > 1 ? "\n    .replicas(" + k + ")" : "");
    return this;
  }

  /**
   * A runner for allocators made by {@code factory}, one per scenario (and more for
   * {@link Invariants#determinism()}), checked against {@link Invariants#common()} unless told
   * otherwise. The runner cannot observe listeners here, so
   * {@link Invariants#reportedMoves()} holds vacuously; use {@link #forListeningAllocator} to
   * check it.
   *
   * @param label a name for reports
   * @param factory makes a new, independent allocator on each call
   * @return a new runner
   * @throws NullPointerException if an argument is null
   */
  public static PropertyRunner forAllocator(String label,
      Supplier<? extends Allocator> factory) {
    Objects.requireNonNull(label, "label must not be null");
    Objects.requireNonNull(factory, "factory must not be null");
    Execution.Factory f = new Execution.Factory() {
      @Override
      public Allocator create(AllocationListener sink) {
        return factory.get();
      }

      @Override
      public boolean observes() {
        return false;
      }
    };
    return new PropertyRunner(label, f, "PropertyRunner.forAllocator(" + JavaCode.string(label)
        + ", /* your factory */)", Invariants.common());
  }

  /**
   * A runner for allocators that report their changes to the listener they are made with, so
   * that {@link Invariants#reportedMoves()} is checked too.
   *
   * @param label a name for reports
   * @param factory makes a new, independent allocator that notifies the given listener
   * @return a new runner
   * @throws NullPointerException if an argument is null
   */
  public static PropertyRunner forListeningAllocator(String label,
      Function<AllocationListener, ? extends Allocator> factory) {
    Objects.requireNonNull(label, "label must not be null");
    Objects.requireNonNull(factory, "factory must not be null");
    Execution.Factory f = new Execution.Factory() {
      @Override
      public Allocator create(AllocationListener sink) {
        return factory.apply(sink);
      }

      @Override
      public boolean observes() {
        return true;
      }
    };
    return new PropertyRunner(label, f, "PropertyRunner.forListeningAllocator("
        + JavaCode.string(label) + ", /* your factory */)", Invariants.common());
  }

  /**
   * The invariants to check, in order (the first that fails is reported), replacing the default.
   *
   * @param invariants the invariants; at least one
   * @return this runner
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if none is given
   */
  public PropertyRunner invariants(Invariant... invariants) {
    return invariants(Arrays.asList(invariants));
  }

  /**
   * The invariants to check, in order, replacing the default.
   *
   * @param invariants the invariants; at least one
   * @return this runner
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the list is empty
   */
  public PropertyRunner invariants(List<Invariant> invariants) {
    List<Invariant> copy = List.copyOf(invariants);
    if (copy.isEmpty()) {
      throw new IllegalArgumentException("at least one invariant");
    }
    this.invariants = copy;
    List<String> java = new ArrayList<>();
    for (Invariant i : copy) {
      java.add(i.toString());
    }
    this.invariantsJava = "\n    .invariants(" + String.join(", ", java) + ")";
    return this;
  }

  /**
   * The generator of scenarios. Default: {@link Generator#defaults()}.
   *
   * @param generator the generator
   * @return this runner
   * @throws NullPointerException if {@code generator} is null
   */
  public PropertyRunner generator(Generator generator) {
    this.generator = Objects.requireNonNull(generator, "generator must not be null");
    return this;
  }

  /**
   * The number of tries (generated scenarios), unless {@value #TRIES_PROPERTY} is set. Default
   * {@value #DEFAULT_TRIES}.
   *
   * @param tries at least 1
   * @return this runner
   * @throws IllegalArgumentException if {@code tries} is below 1
   */
  public PropertyRunner tries(int tries) {
    if (tries < 1) {
      throw new IllegalArgumentException("tries must be at least 1: " + tries);
    }
    this.tries = tries;
    return this;
  }

  /**
   * Runs only the try with this seed (as a report prints it), unless {@value #SEED_PROPERTY} is
   * set.
   *
   * @param seed the try's seed
   * @return this runner
   */
  public PropertyRunner seed(long seed) {
    this.seed = seed;
    return this;
  }

  /**
   * How many scenario runs the shrinker may spend on a failure. Default
   * {@value #DEFAULT_SHRINK_BUDGET}; 0 reports the failure unshrunk.
   *
   * @param runs at least 0
   * @return this runner
   * @throws IllegalArgumentException if {@code runs} is negative
   */
  public PropertyRunner shrinkBudget(int runs) {
    if (runs < 0) {
      throw new IllegalArgumentException("shrink budget must be at least 0: " + runs);
    }
    this.shrinkBudget = runs;
    return this;
  }

  /**
   * How many times {@link #checkConcurrentSnapshots()}'s writer applies each scenario. Default
   * {@value #DEFAULT_CONCURRENT_PASSES}.
   *
   * @param passes at least 1
   * @return this runner
   * @throws IllegalArgumentException if {@code passes} is below 1
   */
  public PropertyRunner concurrentPasses(int passes) {
    if (passes < 1) {
      throw new IllegalArgumentException("passes must be at least 1: " + passes);
    }
    this.concurrentPasses = passes;
    return this;
  }

  /** For the kit's own tests: where system properties are read from. */
  PropertyRunner properties(Function<String, String> properties) {
    this.properties = Objects.requireNonNull(properties);
    return this;
  }

  /**
   * Runs the tries; stops at the first failure and shrinks it.
   *
   * @return the report
   * @throws IllegalArgumentException if a system property is not a number
   */
  public Report run() {
    Execution exec = new Execution(factory, invariants);
    return generated(exec::run, Integer.MAX_VALUE, 0L, ".assertHolds(scenario);", false);
  }

  /**
   * Runs the tries and throws when one fails.
   *
   * @throws AssertionError with the full report (seed, minimal scenario as Java) on a failure
   */
  public void assertHolds() {
    throwIfFailed(run());
  }

  /**
   * Runs one given scenario (a regression test's), shrinking it on a failure.
   *
   * @param scenario the scenario
   * @return the report
   * @throws NullPointerException if {@code scenario} is null
   */
  public Report check(Scenario scenario) {
    Objects.requireNonNull(scenario, "scenario must not be null");
    Execution exec = new Execution(factory, invariants);
    return given(scenario, exec::run, ".assertHolds(scenario);");
  }

  /**
   * Runs one given scenario and throws when it fails.
   *
   * @param scenario the scenario
   * @throws NullPointerException if {@code scenario} is null
   * @throws AssertionError with the full report on a failure
   */
  public void assertHolds(Scenario scenario) {
    throwIfFailed(check(scenario));
  }

  /**
   * <b>snapshot-consistency</b>: a snapshot taken while another thread applies changes
   * satisfies completeness. For each of {@code max(1, tries / 20)} generated scenarios, a writer
   * (the calling thread) makes the scenario's calls {@link #concurrentPasses(int)} times, each
   * time on a fresh allocator, while a reader thread takes snapshots as fast as it can. Every
   * snapshot must show the targets and collectors of one state the writer passed through, never a
   * mix, and be complete on its own terms. Bounded in iterations, not time. A failure is shrunk by
   * re-running smaller scenarios the same way; since interleavings vary, a shrink step can miss,
   * which only leaves the reported scenario larger.
   *
   * <p>The invariants configured on this runner are not used here.
   *
   * @return the report
   */
  public Report checkConcurrentSnapshots() {
    Function<Scenario, Execution.Outcome> oracle =
        s -> ConcurrentSnapshots.run(factory, s, concurrentPasses);
    return generated(oracle, Math.min(shrinkBudget, 200), 0xC0C0C0C0C0C0C0C0L,
        ".assertSnapshotsConsistent(scenario);", true);
  }

  /**
   * {@link #checkConcurrentSnapshots()}, throwing when it fails.
   *
   * @throws AssertionError with the full report on a failure
   */
  public void assertSnapshotsConsistent() {
    throwIfFailed(checkConcurrentSnapshots());
  }

  /**
   * The snapshot-consistency check of {@link #checkConcurrentSnapshots()} on one given scenario.
   *
   * @param scenario the scenario
   * @return the report
   * @throws NullPointerException if {@code scenario} is null
   */
  public Report checkConcurrentSnapshots(Scenario scenario) {
    Objects.requireNonNull(scenario, "scenario must not be null");
    return given(scenario, s -> ConcurrentSnapshots.run(factory, s, concurrentPasses),
        ".assertSnapshotsConsistent(scenario);");
  }

  /**
   * {@link #checkConcurrentSnapshots(Scenario)}, throwing when it fails.
   *
   * @param scenario the scenario
   * @throws NullPointerException if {@code scenario} is null
   * @throws AssertionError with the full report on a failure
   */
  public void assertSnapshotsConsistent(Scenario scenario) {
    throwIfFailed(checkConcurrentSnapshots(scenario));
  }

  private Report generated(Function<Scenario, Execution.Outcome> oracle, int budgetCap,
      long salt, String method, boolean concurrent) {
    int n = tries();
    Long replay = replaySeed();
    long base = labelSeed(label) ^ salt;
    int count = replay != null ? 1 : concurrent ? Math.max(1, n / 20) : n;
    for (int i = 0; i < count; i++) {
      long s = replay != null ? replay : SplitMix64.trySeed(base, i);
      Scenario scenario = generator.scenario(s);
      Execution.Outcome o = oracle.apply(scenario);
      if (o != null) {
        Shrinker.Result r = Shrinker.shrink(scenario, o, oracle, Math.min(shrinkBudget,
            budgetCap));
        return new Report(label, i + 1, failure(r, s, i, count, scenario, method));
      }
    }
    return new Report(label, count, null);
  }

  private Report given(Scenario scenario, Function<Scenario, Execution.Outcome> oracle,
      String method) {
    Execution.Outcome o = oracle.apply(scenario);
    if (o == null) {
      return new Report(label, 1, null);
    }
    Shrinker.Result r = Shrinker.shrink(scenario, o, oracle, shrinkBudget);
    return new Report(label, 1, failure(r, null, 0, 1, scenario, method));
  }

  private Failure failure(Shrinker.Result r, Long s, int index, int count, Scenario original,
      String method) {
    return new Failure(label, r.outcome.invariant, r.outcome.description, r.outcome.step, s,
        index, count, original, r.minimal, r.runs, java + invariantsJava + "\n    " + method);
  }

  private int tries() {
    String p = properties.apply(TRIES_PROPERTY);
    if (p == null || p.isBlank()) {
      return tries;
    }
    try {
      int n = Integer.parseInt(p.trim());
      if (n < 1) {
        throw new IllegalArgumentException(TRIES_PROPERTY + " must be at least 1: " + p);
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(TRIES_PROPERTY + " is not a number: " + p, e);
    }
  }

  private Long replaySeed() {
    String p = properties.apply(SEED_PROPERTY);
    if (p == null || p.isBlank()) {
      return seed;
    }
    return parseSeed(p);
  }

  static long parseSeed(String text) {
    String s = text.trim();
    if (s.endsWith("L") || s.endsWith("l")) {
      s = s.substring(0, s.length() - 1);
    }
    try {
      if (s.startsWith("0x") || s.startsWith("0X")) {
        return Long.parseUnsignedLong(s.substring(2), 16);
      }
      return Long.parseLong(s);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(SEED_PROPERTY + " is not a seed: " + text, e);
    }
  }

  /** FNV-1a over the label's UTF-8 bytes, mixed: a base seed that is the same on every JVM. */
  static long labelSeed(String label) {
    long h = 0xCBF29CE484222325L;
    for (byte b : label.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xFF;
      h *= 0x100000001B3L;
    }
    return SplitMix64.mix(h);
  }

  private static void throwIfFailed(Report report) {
    if (!report.passed()) {
      throw new AssertionError(report.toString());
    }
  }
}
