package dev.apportion.bench.jmh;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.bench.Placement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What the placement benchmarks compare, behind one facade ({@link Placement}, the one the
 * simulator drives too): each built-in strategy, and the do-it-yourself baseline a user would
 * build on a peer ring. Adding a contender is one constant.
 */
public enum Contender {
  /** Apportion's {@code consistent-hashing}. */
  CONSISTENT_HASHING(Allocators.CONSISTENT_HASHING),
  /** Apportion's {@code rendezvous}. */
  RENDEZVOUS(Allocators.RENDEZVOUS),
  /** Apportion's {@code least-weighted}. */
  LEAST_WEIGHTED(Allocators.LEAST_WEIGHTED),
  /** Apportion's {@code per-node}, with its default {@code consistent-hashing} fallback. */
  PER_NODE(Allocators.PER_NODE),
  /**
   * Apportion's zone-aware {@code consistent-hashing} (skew limit {@link
   * Placement#VARIANT_MAX_SKEW}): every zone's targets on that zone's collectors.
   */
  CONSISTENT_HASHING_ZONES(Allocators.CONSISTENT_HASHING + Placement.ZONES),
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
    return strategy != null ? Placement.of(strategy) : new Diy(ring);
  }

  /**
   * A fresh placement with every target on {@code replicas} collectors.
   *
   * @param replicas replicas per target; 1 is {@link #create()}
   * @return the placement
   * @throws UnsupportedOperationException for a do-it-yourself baseline with more than one
   */
  public Placement create(int replicas) {
    if (replicas == 1) {
      return create();
    }
    if (strategy == null) {
      throw new UnsupportedOperationException(name() + " places one replica");
    }
    return Placement.of(strategy, replicas);
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
    public int setCollectors(List<Collector> collectors) {
      moved = 0;
      TreeSet<String> next = new TreeSet<>();
      for (Collector c : collectors) {
        next.add(c.name());
      }
      if (next.equals(members) || next.isEmpty()) {
        return moved;
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
      return moved;
    }

    @Override
    public int setTargets(List<Target> targets) {
      moved = 0;
      if (targets.size() == this.targets.size() && targets.equals(this.targets)) {
        return moved;
      }
      this.targets = targets;
      relocate();
      return moved;
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

    /** Not kept: the baseline holds only its per-collector lists, all the benchmarks read. */
    @Override
    public Allocation allocation() {
      throw new UnsupportedOperationException("the do-it-yourself baseline keeps no snapshot");
    }
  }
}
