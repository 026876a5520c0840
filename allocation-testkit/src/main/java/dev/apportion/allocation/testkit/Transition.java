package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.Collector;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * What one step of a {@link Scenario} did, as an {@link Invariant} sees it: the model's inputs
 * before and after, the allocator's snapshots before the step's call, after it, and after the
 * runner repeated the same call, and the changes the allocator reported to its listener.
 *
 * <p>Immutable apart from {@link #rebuilt}, which builds a fresh allocator each time it is called.
 * Not meant to be kept beyond the {@link Invariant#check} call that received it.
 *
 * @since 0.1.0
 */
public final class Transition {
  /** How many distinct histories {@link #rebuilt(int)} can replay. */
  public static final int HISTORIES = 4;

  /** Builds a fresh allocator fed the given inputs through the given history. */
  interface Rebuilder {
    Allocation rebuild(Inputs inputs, int history, long seed);
  }

  private final int index;
  private final String step;
  private final boolean collectorCall;
  private final Inputs inputsBefore;
  private final Inputs inputsAfter;
  private final Allocation before;
  private final Allocation after;
  private final Allocation repeated;
  private final List<AllocationChange> changes;
  private final List<AllocationChange> repeatChanges;
  private final Rebuilder rebuilder;
  private final long seed;

  Transition(int index, String step, boolean collectorCall, Inputs inputsBefore,
      Inputs inputsAfter, Allocation before, Allocation after, Allocation repeated,
      List<AllocationChange> changes, List<AllocationChange> repeatChanges, Rebuilder rebuilder,
      long seed) {
    this.index = index;
    this.step = step;
    this.collectorCall = collectorCall;
    this.inputsBefore = inputsBefore;
    this.inputsAfter = inputsAfter;
    this.before = before;
    this.after = after;
    this.repeated = repeated;
    this.changes = changes;
    this.repeatChanges = repeatChanges;
    this.rebuilder = rebuilder;
    this.seed = seed;
  }

  /**
   * The step's position in its scenario, from 0.
   *
   * @return the index
   */
  public int index() {
    return index;
  }

  /**
   * The step as the Java builder call that makes it, e.g. {@code .removeCollectors("a")}.
   *
   * @return the source text
   */
  public String step() {
    return step;
  }

  /**
   * Whether the step called {@code setCollectors} (otherwise it called {@code setTargets}).
   *
   * @return true for a collector step
   */
  public boolean isCollectorCall() {
    return collectorCall;
  }

  /**
   * The model before the step.
   *
   * @return the inputs
   */
  public Inputs inputsBefore() {
    return inputsBefore;
  }

  /**
   * The model after the step: what the allocator's snapshot must now reflect.
   *
   * @return the inputs
   */
  public Inputs inputsAfter() {
    return inputsAfter;
  }

  /**
   * The allocator's snapshot before the step's call.
   *
   * @return the snapshot
   */
  public Allocation before() {
    return before;
  }

  /**
   * The allocator's snapshot after the step's call.
   *
   * @return the snapshot
   */
  public Allocation after() {
    return after;
  }

  /**
   * The allocator's snapshot after the runner made the step's call a second time, with the same
   * arguments in the same order.
   *
   * @return the snapshot
   */
  public Allocation repeated() {
    return repeated;
  }

  /**
   * The changes the allocator reported to its listener during the step's call, when the runner
   * can observe them (a runner made with {@link PropertyRunner#forStrategy} or
   * {@link PropertyRunner#forListeningAllocator}).
   *
   * @return the changes in the order reported; empty when not observed
   */
  public Optional<List<AllocationChange>> changes() {
    return Optional.ofNullable(changes);
  }

  /**
   * The changes reported during the repeat of the call; see {@link #changes()}.
   *
   * @return the changes in the order reported; empty when not observed
   */
  public Optional<List<AllocationChange>> repeatChanges() {
    return Optional.ofNullable(repeatChanges);
  }

  /**
   * A fresh allocator of the same configuration, fed {@link #inputsAfter()} through another
   * history, and its resulting snapshot. The histories, all ending in the same inputs:
   * <ol start="0">
   *   <li>collectors in reverse name order, then targets in the order they were first added;
   *   <li>targets, then collectors, each in a seeded random order;
   *   <li>half the targets, the collectors, an empty collector set (a blip), then all targets;
   *   <li>the collectors plus an extra one, the targets, then the collectors alone.
   * </ol>
   * When no collector set has been given yet the histories only set the targets. Builds a new
   * allocator and makes several calls on it: cost of the order of placing every target a few
   * times. Not thread-safe.
   *
   * @param history from 0 to {@link #HISTORIES} - 1
   * @return the fresh allocator's snapshot
   * @throws IllegalArgumentException if {@code history} is out of range
   */
  public Allocation rebuilt(int history) {
    if (history < 0 || history >= HISTORIES) {
      throw new IllegalArgumentException("history must be from 0 to " + (HISTORIES - 1));
    }
    return rebuilder.rebuild(inputsAfter, history, SplitMix64.mix(seed ^ (31L * index + history)));
  }

  /**
   * Describes a history of {@link #rebuilt(int)} for a report.
   *
   * @param history from 0 to {@link #HISTORIES} - 1
   * @return a short description
   */
  public static String describeHistory(int history) {
    return switch (history) {
      case 0 -> "collectors reversed, then targets";
      case 1 -> "targets then collectors, shuffled";
      case 2 -> "half the targets, collectors, a blip, all targets";
      case 3 -> "collectors plus an extra one, targets, collectors";
      default -> throw new IllegalArgumentException("no history " + history);
    };
  }

  /** The names of {@code collectors}, in their order. */
  static List<String> names(List<Collector> collectors) {
    return collectors.stream().map(Collector::name).collect(Collectors.toList());
  }
}
