package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * The runner's model of what an allocator has been told: the current targets (with their latest
 * labels) and collectors. Invariants check an allocator's snapshots against it. Immutable and
 * thread-safe; every step of a {@link Scenario} produces a new one.
 *
 * <h2>An empty collector set</h2>
 * The model follows the {@link dev.apportion.allocation.Allocator} contract: an empty collector
 * set is a transient blip, so {@link #collectors()} (the <em>effective</em> set, the one targets
 * are placed on) stays the last non-empty set, while {@link #declared()} is what the last
 * {@code setCollectors} call passed. Before any non-empty set both are empty and every target must
 * be unassigned.
 *
 * @since 0.1.0
 */
public final class Inputs {
  static final Inputs EMPTY = new Inputs(new LinkedHashMap<>(), new TreeMap<>(), new TreeMap<>());

  /**
   * Identity to latest instance, in the order targets were first added: a {@link LinkedHashMap}
   * that only {@link #withTargets} makes, never changed once this holds it.
   */
  private final Map<Target, Target> targets;
  private final SortedMap<String, Collector> declared;
  private final SortedMap<String, Collector> effective;

  private Inputs(Map<Target, Target> targets, SortedMap<String, Collector> declared,
      SortedMap<String, Collector> effective) {
    this.targets = targets;
    this.declared = declared;
    this.effective = effective;
  }

  /**
   * The known targets, each with its latest labels, in the order they were first added. Copies.
   *
   * @return a new unmodifiable list
   */
  public List<Target> targets() {
    return Collections.unmodifiableList(new ArrayList<>(targets.values()));
  }

  /**
   * How many targets are known.
   *
   * @return the count
   */
  public int targetCount() {
    return targets.size();
  }

  /**
   * The known instance of {@code target} (equal by identity), with its latest labels.
   *
   * @param target a target
   * @return the instance; empty when the target is not known
   */
  public Optional<Target> target(Target target) {
    return Optional.ofNullable(targets.get(target));
  }

  /**
   * The effective collectors: the last non-empty set given, in name order. Copies.
   *
   * @return a new unmodifiable list; empty only before the first non-empty set
   */
  public List<Collector> collectors() {
    return List.copyOf(effective.values());
  }

  /**
   * The effective collector called {@code name}.
   *
   * @param name a collector's name
   * @return the collector; empty when no effective collector has that name
   */
  public Optional<Collector> collector(String name) {
    return Optional.ofNullable(effective.get(name));
  }

  /**
   * The collectors the last {@code setCollectors} call passed, in name order. Copies.
   *
   * @return a new unmodifiable list; empty before the first call or during a blip
   */
  public List<Collector> declared() {
    return List.copyOf(declared.values());
  }

  /**
   * Whether the allocator is in an empty-set blip: the last collector set given was empty while
   * an earlier one was not.
   *
   * @return true during a blip
   */
  public boolean inBlip() {
    return declared.isEmpty() && !effective.isEmpty();
  }

  /**
   * The per-node winner of {@code node}: the effective collector on it with the smallest name.
   *
   * @param node a node's name
   * @return the winner's name; empty when no effective collector runs on {@code node}
   */
  public Optional<String> winner(String node) {
    for (Collector c : effective.values()) {
      if (c.node().isPresent() && c.node().get().equals(node)) {
        return Optional.of(c.name());
      }
    }
    return Optional.empty();
  }

  /**
   * Whether {@code other} has the same targets by identity, each on the same node, and the same
   * effective collectors (names and nodes); other labels may differ. Such a change is one no
   * strategy may move targets for. (A {@code __meta_*} change that moves a target to another node
   * is an effective change: {@code per-node} must follow it.)
   *
   * @param other other inputs
   * @return true when the effective inputs are equal
   */
  public boolean sameEffective(Inputs other) {
    if (!targets.keySet().equals(other.targets.keySet()) || !effective.equals(other.effective)) {
      return false;
    }
    for (Map.Entry<Target, Target> e : targets.entrySet()) {
      if (!e.getValue().node().equals(other.targets.get(e.getKey()).node())) {
        return false;
      }
    }
    return true;
  }

  Map<String, Collector> declaredByName() {
    return declared;
  }

  /**
   * These inputs with the targets {@code change} leaves in a copy of the target map (identity to
   * latest instance; a target put for the first time goes last).
   */
  Inputs withTargets(Consumer<Map<Target, Target>> change) {
    Map<Target, Target> next = new LinkedHashMap<>(targets);
    change.accept(next);
    return new Inputs(next, declared, effective);
  }

  /**
   * These inputs with the declared collectors {@code change} leaves in a copy of the declared
   * map (name to collector); when it leaves none, a blip, the effective set stays.
   */
  Inputs withDeclared(Consumer<Map<String, Collector>> change) {
    SortedMap<String, Collector> next = new TreeMap<>(declared);
    change.accept(next);
    return new Inputs(targets, next, next.isEmpty() ? effective : next);
  }

  @Override
  public String toString() {
    return targets.size() + " targets, collectors " + effective.values()
        + (inBlip() ? " (blip: last set was empty)" : "");
  }
}
