package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A sequence of operations on an allocator's inputs, applied by a {@link PropertyRunner} one
 * step at a time, with every invariant checked after each. The {@link Generator} makes them from
 * a seed; a failure report prints the minimal failing one as Java code built with the methods
 * below, ready to paste into a regression test:
 *
 * <pre>{@code
 * Scenario scenario = Scenario.of(0x5EEDL)
 *     .addCollectors(Collector.of("collector-a", "node-1"), Collector.of("collector-b", "node-2"))
 *     .addTargets(Target.of("kubernetes-pods", "10.1.0.7:8080",
 *         Map.of("__meta_kubernetes_pod_node_name", "node-1")))
 *     .removeCollectors("collector-a");
 * PropertyRunner.forStrategy("per-node").assertHolds(scenario);
 * }</pre>
 *
 * <p>Each step changes the runner's {@link Inputs} model and then makes one allocator call with
 * the <em>whole</em> current set ({@code setTargets} for target steps, {@code setCollectors} for
 * collector steps), as a discovery loop would. The order of the elements within a call is a
 * permutation drawn from {@link #seed()} and the step's position, so that input order is
 * exercised and yet reproducible.
 *
 * <p>Immutable and thread-safe: every method returns a new scenario. Building one allocates; a
 * scenario holds its targets and collectors, not copies of the allocator's state.
 *
 * @since 0.1.0
 */
public final class Scenario {
  private final long seed;
  private final List<Step> steps;

  private Scenario(long seed, List<Step> steps) {
    this.seed = seed;
    this.steps = Collections.unmodifiableList(steps);
  }

  /**
   * An empty scenario whose call-argument orders are drawn from {@code seed}.
   *
   * @param seed the seed of the argument permutations and of the determinism check's histories
   * @return a scenario with no step
   */
  public static Scenario of(long seed) {
    return new Scenario(seed, new ArrayList<>());
  }

  /**
   * The seed of the argument permutations (see the class documentation).
   *
   * @return the seed
   */
  public long seed() {
    return seed;
  }

  /**
   * The number of steps (allocator calls, not counting the runner's repeat of each).
   *
   * @return the count
   */
  public int size() {
    return steps.size();
  }

  List<Step> steps() {
    return steps;
  }

  Scenario withSteps(List<Step> next) {
    return new Scenario(seed, new ArrayList<>(next));
  }

  private Scenario plus(Step step) {
    List<Step> next = new ArrayList<>(steps);
    next.add(step);
    return new Scenario(seed, next);
  }

  /**
   * Adds collectors (a collector whose name is known replaces it, which re-reports it on its new
   * node), then calls {@code setCollectors} with the whole set.
   *
   * @param collectors the collectors to add
   * @return a new scenario
   * @throws NullPointerException if an argument is null
   */
  public Scenario addCollectors(Collector... collectors) {
    return plus(new Step.AddCollectors(Arrays.asList(collectors)));
  }

  /**
   * Removes collectors by name, then calls {@code setCollectors} with the rest. Removing every
   * collector sends an empty set: a blip.
   *
   * @param names the names to remove; unknown names are ignored
   * @return a new scenario
   * @throws NullPointerException if an argument is null
   */
  public Scenario removeCollectors(String... names) {
    return plus(new Step.RemoveCollectors(Arrays.asList(names)));
  }

  /**
   * Removes collector {@code name} and adds {@code replacement} in one {@code setCollectors} call,
   * as a rolling update that replaces one pod does.
   *
   * @param name the collector to remove
   * @param replacement the collector to add
   * @return a new scenario
   * @throws NullPointerException if an argument is null
   */
  public Scenario replaceCollector(String name, Collector replacement) {
    return plus(new Step.ReplaceCollector(name, replacement));
  }

  /**
   * Re-reports the known collector {@code name} on {@code node}: the same name, another node.
   * A no-op on the model when the collector is not in the last set given.
   *
   * @param name the collector's name
   * @param node its new node, or null for none
   * @return a new scenario
   * @throws NullPointerException if {@code name} is null
   */
  public Scenario moveCollector(String name, String node) {
    return plus(new Step.MoveCollector(name, node));
  }

  /**
   * Replaces the whole collector set.
   *
   * @param collectors the new set; unique names
   * @return a new scenario
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if two collectors share a name
   */
  public Scenario setCollectors(Collector... collectors) {
    Set<String> names = new HashSet<>();
    for (Collector c : collectors) {
      if (!names.add(c.name())) {
        throw new IllegalArgumentException("duplicate collector name: " + c.name());
      }
    }
    return plus(new Step.SetCollectors(Arrays.asList(collectors)));
  }

  /**
   * Calls {@code setCollectors} with an empty set: a transient blip, after which the last
   * non-empty set and its assignment must stand.
   *
   * @return a new scenario
   */
  public Scenario emptyCollectors() {
    return plus(new Step.SetCollectors(List.of()));
  }

  /**
   * Adds targets (a target equal to a known one replaces it: its labels win), then calls
   * {@code setTargets} with the whole set.
   *
   * @param targets the targets to add
   * @return a new scenario
   * @throws NullPointerException if an argument is null
   */
  public Scenario addTargets(Target... targets) {
    return plus(new Step.AddTargets(Arrays.asList(targets)));
  }

  /**
   * Removes targets by identity, then calls {@code setTargets} with the rest.
   *
   * @param targets the targets to remove; unknown ones are ignored
   * @return a new scenario
   * @throws NullPointerException if an argument is null
   */
  public Scenario removeTargets(Target... targets) {
    return plus(new Step.RemoveTargets(Arrays.asList(targets)));
  }

  /**
   * Gives known targets new labels: each argument is equal to a known target (same job, address
   * and non-{@code __meta_} labels) and carries other {@code __meta_*} labels. Unknown ones are
   * ignored. Then calls {@code setTargets} with the whole set.
   *
   * @param relabeled the targets with their new labels
   * @return a new scenario
   * @throws NullPointerException if an argument is null
   */
  public Scenario relabelTargets(Target... relabeled) {
    return plus(new Step.RelabelTargets(Arrays.asList(relabeled)));
  }

  /**
   * Replaces the whole target set.
   *
   * @param targets the new set; duplicates by identity collapse to the last
   * @return a new scenario
   * @throws NullPointerException if an argument is null
   */
  public Scenario setTargets(Target... targets) {
    return plus(new Step.SetTargets(Arrays.asList(targets)));
  }

  /**
   * Calls {@code setTargets} with the current targets preceded by {@code staleCopies}: duplicates
   * by identity in one call (copies of known targets with older labels), which must collapse to
   * the last copy given. Copies of unknown targets are left out, so the model does not change.
   *
   * @param staleCopies copies to send first
   * @return a new scenario
   * @throws NullPointerException if an argument is null
   */
  public Scenario sendDuplicates(Target... staleCopies) {
    return plus(new Step.SendDuplicates(Arrays.asList(staleCopies)));
  }

  /**
   * The Java source that recreates this scenario, starting with {@code Scenario.of(seed)}. It uses
   * {@code Scenario}, {@code Collector}, {@code Target} and {@code java.util.Map}.
   *
   * @return the source, several lines
   */
  public String toJava() {
    StringBuilder sb = new StringBuilder("Scenario.of(").append(JavaCode.hex(seed)).append(')');
    for (Step s : steps) {
      sb.append('\n').append(s.toJava("    "));
    }
    return sb.toString();
  }

  /** Equal when seeds and steps print the same. */
  @Override
  public boolean equals(Object o) {
    return o instanceof Scenario other && other.toJava().equals(toJava());
  }

  @Override
  public int hashCode() {
    return Objects.hash(toJava());
  }

  @Override
  public String toString() {
    return toJava();
  }
}
