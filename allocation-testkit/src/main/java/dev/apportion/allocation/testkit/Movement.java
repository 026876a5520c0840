package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntToLongFunction;
import java.util.function.Supplier;

/**
 * Measures how much an allocator moves and how well it balances, as counts that do not depend on
 * the machine: the figures of the movement goals in {@code docs/strategies.md}. On a cluster of
 * {@code targets} targets and {@code collectors} collectors (all without nodes) it places
 * everything, then, each time from that same placed state:
 * <ul>
 *   <li>removes each of ten collectors, one at a time, and sums what moved against what the
 *       removed collectors held (the minimum);
 *   <li>adds ten new collectors, one at a time, and sums what moved against
 *       {@code targets / (collectors + 1)} each (the minimum);
 *   <li>replaces every hundredth target by a new one and counts the moves among the others;
 * </ul>
 * and, optionally, sweeps the collector count one at a time over a range, recording each single
 * change's moves against its minimum ({@code targets / count} for the count reached).
 *
 * <p>{@link #withCosts} attaches a cost to every target (the same to a target's replacement), so
 * the same changes measure a strategy that balances cost: the balance figures are then of cost,
 * the moves still of targets.
 *
 * <p>Engine-agnostic: it drives any {@link Allocator} through its public calls. Not thread-safe;
 * each call builds its own allocators and blocks until done. The cluster is fixed (target and
 * collector names are generated the same way every time), so a deterministic allocator gives the
 * same figures on every run.
 */
public final class Movement {
  private final Supplier<Allocator> factory;
  private final int targets;
  private final int collectors;
  /** The cost of target {@code i}, or null for none (every target costs 1). */
  private final IntToLongFunction cost;

  /**
   * A measurement.
   *
   * @param factory makes a fresh, empty allocator of the strategy under test
   * @param targets how many targets (at least 100)
   * @param collectors how many collectors (at least 11)
   * @throws IllegalArgumentException when a count is too small
   */
  public Movement(Supplier<Allocator> factory, int targets, int collectors) {
    this.factory = Objects.requireNonNull(factory, "factory");
    if (targets < 100 || collectors < 11) {
      throw new IllegalArgumentException("need at least 100 targets and 11 collectors: "
          + targets + ", " + collectors);
    }
    this.targets = targets;
    this.collectors = collectors;
    this.cost = null;
  }

  private Movement(Movement m, IntToLongFunction cost) {
    this.factory = m.factory;
    this.targets = m.targets;
    this.collectors = m.collectors;
    this.cost = cost;
  }

  /**
   * The same measurement with a cost on every target: target {@code i} of the generated cluster,
   * and the target that replaces it, cost {@code cost.applyAsLong(i)}. The balance figures
   * ({@link Figures#peakToMean()}, {@link Figures#minToMean()}) are then of cost; moves are
   * still counted in targets, against the same minimums.
   *
   * @param cost the cost of the {@code i}-th target, non-negative
   * @return a new measurement; this one is unchanged
   * @throws NullPointerException if {@code cost} is null
   */
  public Movement withCosts(IntToLongFunction cost) {
    return new Movement(this, Objects.requireNonNull(cost, "cost"));
  }

  /**
   * One single change of a sweep.
   *
   * @param collectors the collector count the change reached
   * @param moved the targets it moved
   * @param minimum {@code targets / collectors} at the count it reached
   */
  public record SweepStep(int collectors, int moved, double minimum) {
    /**
     * Moves over the minimum.
     *
     * @return the ratio
     */
    public double ratio() {
      return moved / minimum;
    }
  }

  /**
   * What was measured.
   *
   * @param peakToMean the busiest collector's targets over the mean (with {@link #withCosts},
   *     its cost over the mean cost), after the first placement
   * @param idle collectors left without a target after the first placement
   * @param removalsMoved targets moved by the ten single removals, summed
   * @param removalsMinimum what the ten removed collectors held, summed
   * @param additionsMoved targets moved by the ten single additions, summed
   * @param additionsMinimum {@code 10 * (targets / (collectors + 1))}
   * @param replacedOthersMoved targets not replaced that moved when 1% were replaced
   * @param sweep the sweep's changes in order, empty without a sweep
   * @param minToMean the lightest collector's targets (or cost) over the mean, after the first
   *     placement
   */
  public record Figures(double peakToMean, int idle, int removalsMoved, int removalsMinimum,
      int additionsMoved, int additionsMinimum, int replacedOthersMoved, List<SweepStep> sweep,
      double minToMean) {
    /**
     * Copies the sweep.
     *
     * @param peakToMean see the record
     * @param idle see the record
     * @param removalsMoved see the record
     * @param removalsMinimum see the record
     * @param additionsMoved see the record
     * @param additionsMinimum see the record
     * @param replacedOthersMoved see the record
     * @param sweep see the record
     * @param minToMean see the record
     */
    public Figures {
      sweep = List.copyOf(sweep);
    }

    /**
     * Figures without the lightest collector's ({@link #minToMean()} is NaN), as before it was
     * measured.
     *
     * @param peakToMean see the record
     * @param idle see the record
     * @param removalsMoved see the record
     * @param removalsMinimum see the record
     * @param additionsMoved see the record
     * @param additionsMinimum see the record
     * @param replacedOthersMoved see the record
     * @param sweep see the record
     */
    public Figures(double peakToMean, int idle, int removalsMoved, int removalsMinimum,
        int additionsMoved, int additionsMinimum, int replacedOthersMoved,
        List<SweepStep> sweep) {
      this(peakToMean, idle, removalsMoved, removalsMinimum, additionsMoved, additionsMinimum,
          replacedOthersMoved, sweep, Double.NaN);
    }

    /**
     * The ten removals' moves over their minimum.
     *
     * @return the ratio
     */
    public double removalRatio() {
      return (double) removalsMoved / removalsMinimum;
    }

    /**
     * The ten additions' moves over their minimum.
     *
     * @return the ratio
     */
    public double additionRatio() {
      return (double) additionsMoved / additionsMinimum;
    }

    /**
     * The sweep's worst single change.
     *
     * @return the step with the highest ratio, or null without a sweep
     */
    public SweepStep worstSweepStep() {
      SweepStep worst = null;
      for (SweepStep s : sweep) {
        if (worst == null || s.ratio() > worst.ratio()) {
          worst = s;
        }
      }
      return worst;
    }

    @Override
    public String toString() {
      SweepStep w = worstSweepStep();
      return String.format(Locale.ROOT, "peak/mean %.3f, min/mean %.3f, idle %d, removals %d/%d"
          + " = %.3fx, additions %d/%d = %.3fx, worst sweep step %s, replacing 1%%: %d others"
          + " moved", peakToMean, minToMean, idle, removalsMoved, removalsMinimum, removalRatio(), additionsMoved,
          additionsMinimum, additionRatio(), w == null ? "n/a"
              : String.format(Locale.ROOT, "%.2fx (to %d collectors)", w.ratio(),
                  w.collectors()), replacedOthersMoved);
    }
  }

  /**
   * The generated targets: {@code job-0} to {@code job-9}, addresses unique per
   * {@code generation}.
   *
   * @param n how many
   * @param generation a number that makes the addresses differ from another generation's
   * @return the targets, a new mutable list
   */
  public static List<Target> targets(int n, int generation) {
    List<Target> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(Target.of("job-" + (i % 10), "10." + generation + "." + (i / 250) + "." + (i % 250)
          + ":9100", Map.of("instance", "i-" + i)));
    }
    return out;
  }

  /**
   * The generated collectors {@code collector-0} to {@code collector-(n-1)}, without nodes.
   *
   * @param n how many
   * @return the collectors, a new mutable list
   */
  public static List<Collector> collectors(int n) {
    List<Collector> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(Collector.of("collector-" + i));
    }
    return out;
  }

  /**
   * Measures, with a sweep from {@code sweepFrom} to {@code sweepTo} collectors (none when
   * {@code sweepTo <= sweepFrom}). Blocks for as long as the placements take.
   *
   * @param sweepFrom the sweep's first count
   * @param sweepTo the sweep's last count
   * @return the figures
   */
  public Figures measure(int sweepFrom, int sweepTo) {
    List<Target> ts = costed(targets(targets, 0));
    List<Collector> cs = collectors(collectors);
    Allocator a = factory.get();
    a.setTargets(ts);
    a.setCollectors(cs);
    Allocation placed = a.snapshot();
    String[] base = owners(placed, ts);
    long peak = 0;
    long least = Long.MAX_VALUE;
    long sum = 0;
    int idle = 0;
    for (Collector c : cs) {
      int n = placed.targetCount(c.name());
      long load = cost == null ? n : placed.costOf(c.name());
      peak = Math.max(peak, load);
      least = Math.min(least, load);
      sum += load;
      idle += n == 0 ? 1 : 0;
    }
    double mean = (double) sum / collectors;
    double peakToMean = peak / mean;
    double minToMean = least / mean;

    int removalsMoved = 0;
    int removalsMinimum = 0;
    for (int j = 0; j < 10; j++) {
      String victim = "collector-" + (j * collectors / 10 + 7) % collectors;
      removalsMinimum += placed.targetCount(victim);
      List<Collector> less = new ArrayList<>(cs);
      less.removeIf(c -> c.name().equals(victim));
      a.setCollectors(less);
      removalsMoved += moved(base, owners(a.snapshot(), ts));
      a.setCollectors(cs);
    }
    int additionsMoved = 0;
    for (int j = 0; j < 10; j++) {
      List<Collector> more = new ArrayList<>(cs);
      more.add(Collector.of("added-" + j));
      a.setCollectors(more);
      additionsMoved += moved(base, owners(a.snapshot(), ts));
      a.setCollectors(cs);
    }
    int additionsMinimum = 10 * (targets / (collectors + 1));

    List<SweepStep> sweep = new ArrayList<>();
    if (sweepTo > sweepFrom) {
      a.setCollectors(collectors(sweepFrom));
      String[] previous = owners(a.snapshot(), ts);
      for (int m = sweepFrom + 1; m <= sweepTo; m++) {
        a.setCollectors(collectors(m));
        String[] now = owners(a.snapshot(), ts);
        sweep.add(new SweepStep(m, moved(previous, now), (double) targets / m));
        previous = now;
      }
      a.setCollectors(cs);
    }

    List<Target> fresh = costed(targets(targets, 1));
    List<Target> replaced = new ArrayList<>(ts);
    for (int i = 0; i < targets; i += 100) {
      replaced.set(i, fresh.get(i));
    }
    a.setTargets(replaced);
    String[] after = owners(a.snapshot(), replaced);
    int others = 0;
    for (int i = 0; i < targets; i++) {
      if (i % 100 != 0 && !Objects.equals(base[i], after[i])) {
        others++;
      }
    }
    return new Figures(peakToMean, idle, removalsMoved, removalsMinimum, additionsMoved,
        additionsMinimum, others, sweep, minToMean);
  }

  /** The targets with their costs attached, when {@link #withCosts} gave them. */
  private List<Target> costed(List<Target> ts) {
    if (cost == null) {
      return ts;
    }
    List<Target> out = new ArrayList<>(ts.size());
    for (int i = 0; i < ts.size(); i++) {
      out.add(ts.get(i).withCost(cost.applyAsLong(i)));
    }
    return out;
  }

  private static String[] owners(Allocation a, List<Target> ts) {
    String[] out = new String[ts.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = a.collectorOf(ts.get(i)).orElse(null);
    }
    return out;
  }

  private static int moved(String[] before, String[] after) {
    int moved = 0;
    for (int i = 0; i < before.length; i++) {
      if (before[i] != null && after[i] != null && !before[i].equals(after[i])) {
        moved++;
      }
    }
    return moved;
  }
}
