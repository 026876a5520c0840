package dev.apportion.allocation.internal.replica;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A replicated allocator's snapshot: the primary's snapshot for what it answers (collectors,
 * targets, primaries, partitions) and the owners of every rank for the rest. Immutable; the
 * per-collector lists are built once, on the first call that needs them, and shared after.
 */
final class ReplicatedSnapshot implements Allocation {
  private final Allocation primary;
  private final int replicas;
  private final Target[] targets;
  private final Map<Target, Integer> index;
  private final OwnerTable owners;
  private final Topology topology;
  private final int[] counts;
  private final long[] costs;
  /** By collector id, job to targets in identity-hash order; built on first use. */
  private volatile List<SortedMap<String, List<Target>>> byCollector;
  private volatile Set<Target> unassigned;

  ReplicatedSnapshot(Allocation primary, int replicas, Target[] targets, Map<Target, Integer> index,
      OwnerTable owners, Topology topology, int[] counts, long[] costs) {
    this.primary = primary;
    this.replicas = replicas;
    this.targets = targets;
    this.index = index;
    this.owners = owners;
    this.topology = topology;
    this.counts = counts;
    this.costs = costs;
  }

  /** The owner ids of the target at {@code i}, by rank (-1 for none). */
  int owner(int rank, int i) {
    return owners.get(rank, i);
  }

  /** The index of {@code target}, or -1 when it is not known. */
  int indexOf(Target target) {
    Integer i = index.get(target);
    return i == null ? -1 : i;
  }

  Topology topology() {
    return topology;
  }

  /** The primary's snapshot, which this one answers collectors, targets and primaries from. */
  Allocation primary() {
    return primary;
  }

  /** How many targets. */
  int size() {
    return targets.length;
  }

  /** The target at {@code i}. */
  Target target(int i) {
    return targets[i];
  }

  @Override
  public Set<Collector> collectors() {
    return primary.collectors();
  }

  @Override
  public Set<Target> targets() {
    return primary.targets();
  }

  @Override
  public Optional<String> collectorOf(Target target) {
    return primary.collectorOf(target);
  }

  @Override
  public List<String> ownersOf(Target target) {
    int i = indexOf(Objects.requireNonNull(target, "target"));
    if (i < 0) {
      return List.of();
    }
    List<String> names = new ArrayList<>(replicas);
    for (int r = 0; r < replicas; r++) {
      int c = owners.get(r, i);
      if (c >= 0) {
        names.add(topology.name(c));
      }
    }
    return Collections.unmodifiableList(names);
  }

  @Override
  public int replicas() {
    return replicas;
  }

  @Override
  public Set<Target> unassigned() {
    Set<Target> u = unassigned;
    if (u == null) {
      Set<Target> found = new LinkedHashSet<>();
      for (Target t : primary.targets()) {
        int i = index.get(t);
        for (int r = 0; r < replicas; r++) {
          if (owners.get(r, i) < 0) {
            found.add(targets[i]);
            break;
          }
        }
      }
      u = Collections.unmodifiableSet(found);
      unassigned = u;
    }
    return u;
  }

  @Override
  public List<Target> targetsFor(String collector, String job) {
    Objects.requireNonNull(job, "job");
    int c = topology.id(Objects.requireNonNull(collector, "collector"));
    if (c < 0) {
      return List.of();
    }
    List<Target> list = byCollector().get(c).get(job);
    return list == null ? List.of() : list;
  }

  @Override
  public Set<String> jobsFor(String collector) {
    int c = topology.id(Objects.requireNonNull(collector, "collector"));
    return c < 0 ? Set.of() : byCollector().get(c).keySet();
  }

  @Override
  public int targetCount(String collector) {
    int c = topology.id(Objects.requireNonNull(collector, "collector"));
    return c < 0 ? 0 : counts[c];
  }

  @Override
  public long costOf(String collector) {
    int c = topology.id(Objects.requireNonNull(collector, "collector"));
    return c < 0 ? 0 : costs[c];
  }

  @Override
  public int outsidePartition() {
    return primary.outsidePartition();
  }

  /** Every collector's targets, built by walking the targets in identity-hash order once. */
  private List<SortedMap<String, List<Target>>> byCollector() {
    List<SortedMap<String, List<Target>>> b = byCollector;
    if (b == null) {
      List<Map<String, List<Target>>> building = new ArrayList<>(topology.limit());
      for (int c = 0; c < topology.limit(); c++) {
        building.add(new HashMap<>());
      }
      for (Target t : primary.targets()) {
        int i = index.get(t);
        for (int r = 0; r < replicas; r++) {
          int c = owners.get(r, i);
          if (c >= 0) {
            building.get(c).computeIfAbsent(targets[i].job(), j -> new ArrayList<>()).add(targets[i]);
          }
        }
      }
      List<SortedMap<String, List<Target>>> built = new ArrayList<>(topology.limit());
      for (Map<String, List<Target>> jobs : building) {
        SortedMap<String, List<Target>> sorted = new TreeMap<>();
        jobs.forEach((job, list) -> sorted.put(job, Collections.unmodifiableList(list)));
        built.add(Collections.unmodifiableSortedMap(sorted));
      }
      b = List.copyOf(built);
      byCollector = b;
    }
    return b;
  }

  @Override
  public String toString() {
    return "Allocation[" + targets.length + " targets x " + replicas + " replicas on "
        + topology.size() + " collectors]";
  }
}
