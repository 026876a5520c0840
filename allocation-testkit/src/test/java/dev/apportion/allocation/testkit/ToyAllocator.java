package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small, correct-by-construction allocator skeleton for the kit's own tests: it keeps the
 * inputs, handles the empty-set blip and duplicates as the contract says, and asks
 * {@link #place} for the whole assignment on every change. Broken strategies override one piece.
 * Not thread-safe beyond what {@code synchronized} writers and a volatile snapshot give.
 */
abstract class ToyAllocator implements Allocator {
  /** Current targets by identity, latest instance, in the order last given. */
  protected LinkedHashMap<Target, Target> targets = new LinkedHashMap<>();
  /** Effective collectors, in the order last given. */
  protected List<Collector> collectors = new ArrayList<>();
  /** The last published assignment. */
  protected Map<Target, String> owners = new HashMap<>();
  private volatile Allocation snapshot = MapAllocation.EMPTY;

  /**
   * The whole assignment for the current inputs.
   *
   * @param targets current targets in the order last given
   * @param collectors effective collectors in the order last given, not empty
   * @param previous the previous assignment
   * @return target to collector name
   */
  abstract Map<Target, String> place(List<Target> targets, List<Collector> collectors,
      Map<Target, String> previous);

  @Override
  public synchronized void setTargets(Collection<Target> given) {
    LinkedHashMap<Target, Target> next = new LinkedHashMap<>();
    for (Target t : given) {
      next.remove(t);
      next.put(t, t);
    }
    targets = next;
    replace();
  }

  @Override
  public synchronized void setCollectors(Collection<Collector> given) {
    if (given.isEmpty()) {
      return;
    }
    collectors = new ArrayList<>(given);
    replace();
  }

  /** Recomputes and publishes. */
  protected void replace() {
    if (!collectors.isEmpty()) {
      owners = place(new ArrayList<>(targets.values()), collectors, owners);
    }
    publish();
  }

  protected void publish() {
    snapshot = build();
  }

  /** The snapshot of the current state. */
  protected Allocation build() {
    return new MapAllocation(collectors, targets.values(), owners);
  }

  @Override
  public List<Target> targetsFor(String collector, String job) {
    return snapshot.targetsFor(collector, job);
  }

  @Override
  public Allocation snapshot() {
    return snapshot;
  }

  @Override
  public String strategy() {
    return getClass().getSimpleName();
  }

  /** The collector with the highest score for {@code t}, by a hash of the name: a toy HRW. */
  static String highestScore(Target t, List<Collector> collectors) {
    String best = null;
    long bestScore = 0;
    for (Collector c : collectors) {
      long s = SplitMix64.mix(t.hash() ^ fnv(c.name()));
      if (best == null || s > bestScore || (s == bestScore && c.name().compareTo(best) < 0)) {
        best = c.name();
        bestScore = s;
      }
    }
    return best;
  }

  static long fnv(String s) {
    return PropertyRunner.labelSeed(s);
  }

  /** A correct toy: rendezvous over its own hash. Passes the whole rendezvous-style profile. */
  static class Correct extends ToyAllocator {
    @Override
    Map<Target, String> place(List<Target> targets, List<Collector> collectors,
        Map<Target, String> previous) {
      Map<Target, String> out = new HashMap<>();
      for (Target t : targets) {
        out.put(t, highestScore(t, collectors));
      }
      return out;
    }
  }
}
