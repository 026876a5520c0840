package dev.apportion.allocation.internal;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Measures a strategy against the movement goals of issue #12, as counts: the summed movement of
 * ten single removals and ten single additions against their minimum, the worst single change of
 * a sweep of collector counts, what replacing 1% of the targets moves among the others, and the
 * balance. Every change starts from the same placed state.
 */
final class MovementGoals {
  final int targets;
  final int collectors;
  final double loadFactor;

  MovementGoals(int targets, int collectors, double loadFactor) {
    this.targets = targets;
    this.collectors = collectors;
    this.loadFactor = loadFactor;
  }

  /** The measured figures. */
  record Figures(double peakToMean, int idle, int removalsMoved, int removalsMinimum,
      int additionsMoved, int additionsMinimum, double worstSweepRatio, int worstSweepCount,
      int replacedOthersMoved) {
    double removalRatio() {
      return (double) removalsMoved / removalsMinimum;
    }

    double additionRatio() {
      return (double) additionsMoved / additionsMinimum;
    }

    @Override
    public String toString() {
      return String.format("peak/mean %.3f, idle %d, removals %d/%d = %.3fx, additions %d/%d ="
          + " %.3fx, worst sweep step %.2fx (at %d collectors), replace 1%%: %d others moved",
          peakToMean, idle, removalsMoved, removalsMinimum, removalRatio(), additionsMoved,
          additionsMinimum, additionRatio(), worstSweepRatio, worstSweepCount,
          replacedOthersMoved);
    }
  }

  private Allocator allocator() {
    return Allocators.builder(Allocators.CONSISTENT_HASHING).loadFactor(loadFactor).build();
  }

  static List<Target> targets(int n, int generation) {
    List<Target> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(Target.of("job-" + (i % 10), "10." + generation + "." + (i / 250) + "." + (i % 250)
          + ":9100", Map.of("instance", "i-" + i)));
    }
    return out;
  }

  static List<Collector> collectors(int n) {
    List<Collector> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(Collector.of("collector-" + i));
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

  Figures measure(int sweepFrom, int sweepTo) {
    List<Target> ts = targets(targets, 0);
    List<Collector> cs = collectors(collectors);
    Allocator a = allocator();
    a.setTargets(ts);
    a.setCollectors(cs);
    Allocation placed = a.snapshot();
    String[] base = owners(placed, ts);
    int peak = 0;
    int idle = 0;
    for (Collector c : cs) {
      int n = placed.targetCount(c.name());
      peak = Math.max(peak, n);
      idle += n == 0 ? 1 : 0;
    }
    double peakToMean = peak / ((double) targets / collectors);

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
    int additionsMinimum = 0;
    for (int j = 0; j < 10; j++) {
      List<Collector> more = new ArrayList<>(cs);
      more.add(Collector.of("added-" + j));
      a.setCollectors(more);
      additionsMoved += moved(base, owners(a.snapshot(), ts));
      additionsMinimum += targets / (collectors + 1);
      a.setCollectors(cs);
    }

    double worstSweep = 0;
    int worstAt = 0;
    if (sweepTo > sweepFrom) {
      a.setCollectors(collectors(sweepFrom));
      String[] previous = owners(a.snapshot(), ts);
      for (int m = sweepFrom + 1; m <= sweepTo; m++) {
        a.setCollectors(collectors(m));
        String[] now = owners(a.snapshot(), ts);
        double ratio = moved(previous, now) / ((double) targets / m);
        if (ratio > worstSweep) {
          worstSweep = ratio;
          worstAt = m;
        }
        previous = now;
      }
      a.setCollectors(cs);
    }

    // Replace every hundredth target by a new one; count the moves among the others.
    List<Target> fresh = targets(targets, 1);
    List<Target> replaced = new ArrayList<>(ts);
    for (int i = 0; i < targets; i += 100) {
      replaced.set(i, fresh.get(i));
    }
    a.setTargets(replaced);
    String[] after = owners(a.snapshot(), replaced);
    int others = 0;
    for (int i = 0; i < targets; i++) {
      if (i % 100 != 0 && !base[i].equals(after[i])) {
        others++;
      }
    }
    return new Figures(peakToMean, idle, removalsMoved, removalsMinimum, additionsMoved,
        additionsMinimum, worstSweep, worstAt, others);
  }
}
