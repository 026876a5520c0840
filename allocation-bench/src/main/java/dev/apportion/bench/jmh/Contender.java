package dev.apportion.bench.jmh;

import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What the placement benchmarks compare, behind one facade: each built-in strategy, and the
 * do-it-yourself baseline a user would build on a peer ring. Adding a contender is one constant.
 */
public enum Contender {
  /** Apportion's {@code consistent-hashing}. */
  CONSISTENT_HASHING("consistent-hashing"),
  /** Apportion's {@code rendezvous}. */
  RENDEZVOUS("rendezvous"),
  /** Apportion's {@code least-weighted}. */
  LEAST_WEIGHTED("least-weighted"),
  /** Apportion's {@code per-node}, with its default {@code consistent-hashing} fallback. */
  PER_NODE("per-node"),
  /** Do it yourself on allgood-consistent-hash. */
  DIY_ALLGOOD(NamedRing.Type.ALLGOOD),
  /** Do it yourself on hash4j's JumpBackAnchor hash. */
  DIY_HASH4J_ANCHOR(NamedRing.Type.HASH4J_ANCHOR),
  /** Do it yourself on Guava's jump hash. */
  DIY_GUAVA_JUMP(NamedRing.Type.GUAVA_JUMP);

  private final String strategy;
  private final NamedRing.Type ring;

  Contender(String strategy) {
    this.strategy = strategy;
    this.ring = null;
  }

  Contender(NamedRing.Type ring) {
    this.strategy = null;
    this.ring = ring;
  }

  /**
   * A fresh placement, with no collectors and no targets.
   *
   * @return the placement
   */
  public Placement create() {
    return strategy != null ? new Apportion(strategy) : new Diy(ring);
  }

  /** The facade: the write calls of an allocator, and how many targets the last one moved. */
  public interface Placement {
    /**
     * Replaces the collector set.
     *
     * @param collectors the full set
     */
    void setCollectors(List<Collector> collectors);

    /**
     * Replaces the target set.
     *
     * @param targets the full set
     */
    void setTargets(List<Target> targets);

    /**
     * Targets the last call moved from one collector to another (or to none).
     *
     * @return the count
     */
    int lastMoved();

    /**
     * The targets of {@code job} on {@code collector}.
     *
     * @param collector a collector's name
     * @param job a job
     * @return the targets
     */
    List<Target> targetsFor(String collector, String job);
  }

  /** An Apportion allocator; a listener reads what each call moved. */
  private static final class Apportion implements Placement {
    private final Allocator allocator;
    private int moved;

    Apportion(String strategy) {
      allocator = Allocators.builder(strategy).warnWhenMovedShareExceeds(1.0)
          .listener(this::record).build();
    }

    private void record(AllocationChange change) {
      moved = change.reassigned();
    }

    @Override
    public void setCollectors(List<Collector> collectors) {
      moved = 0;
      allocator.setCollectors(collectors);
    }

    @Override
    public void setTargets(List<Target> targets) {
      moved = 0;
      allocator.setTargets(targets);
    }

    @Override
    public int lastMoved() {
      return moved;
    }

    @Override
    public List<Target> targetsFor(String collector, String job) {
      return allocator.targetsFor(collector, job);
    }
  }

  /**
   * The do-it-yourself baseline, upstream's approach: keep a peer ring of the collectors' names
   * (changed member by member, as the peer allows); on every change locate every target again
   * by its owner on the ring and rebuild the per-collector, per-job lists. A call whose input
   * equals the current state does nothing, as upstream's diff would; for targets, "equals" is
   * an element-by-element comparison of the lists (a discovery refresh that found nothing new
   * lists the same targets in the same order), which is what finding no difference costs.
   */
  private static final class Diy implements Placement {
    private final NamedRing.Type type;
    private NamedRing ring;
    private Set<String> members = Set.of();
    private List<Target> targets = List.of();
    private Map<Target, String> owners = new HashMap<>();
    private Map<String, Map<String, List<Target>>> lists = Map.of();
    private int moved;

    Diy(NamedRing.Type type) {
      this.type = type;
    }

    @Override
    public void setCollectors(List<Collector> collectors) {
      moved = 0;
      TreeSet<String> next = new TreeSet<>();
      for (Collector c : collectors) {
        next.add(c.name());
      }
      if (next.equals(members) || next.isEmpty()) {
        return;
      }
      if (ring == null) {
        ring = type.create(next);
      } else {
        for (String m : new TreeSet<>(members)) {
          if (!next.contains(m)) {
            ring.remove(m);
          }
        }
        for (String m : next) {
          if (!members.contains(m)) {
            ring.add(m);
          }
        }
      }
      members = next;
      relocate();
    }

    @Override
    public void setTargets(List<Target> targets) {
      moved = 0;
      if (targets.size() == this.targets.size() && targets.equals(this.targets)) {
        return;
      }
      this.targets = targets;
      relocate();
    }

    private void relocate() {
      if (ring == null) {
        return;
      }
      int count = 0;
      Map<Target, String> next = new HashMap<>(targets.size() * 4 / 3 + 16);
      Map<String, Map<String, List<Target>>> byCollector = new HashMap<>();
      for (Target t : targets) {
        String owner = ring.owner(t);
        String previous = owners.get(t);
        if (previous != null && !previous.equals(owner)) {
          count++;
        }
        next.put(t, owner);
        byCollector.computeIfAbsent(owner, k -> new HashMap<>())
            .computeIfAbsent(t.job(), k -> new ArrayList<>()).add(t);
      }
      owners = next;
      lists = byCollector;
      moved = count;
    }

    @Override
    public int lastMoved() {
      return moved;
    }

    @Override
    public List<Target> targetsFor(String collector, String job) {
      return lists.getOrDefault(collector, Map.of()).getOrDefault(job, List.of());
    }
  }
}
