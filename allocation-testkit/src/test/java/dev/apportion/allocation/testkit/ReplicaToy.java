package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A toy allocator with k replicas for the kit's own tests: each target's owners are a function
 * of the target and the collectors (in name order), recomputed from scratch on every call, and
 * every view of its snapshots agrees with them. Its subclasses carry one replica bug each.
 */
abstract class ReplicaToy implements Allocator {
  final int k;
  private LinkedHashMap<Target, Target> targets = new LinkedHashMap<>();
  private List<Collector> collectors = List.of();
  private volatile Allocation snapshot = new Snapshot(List.of(), List.of(), Map.of(), 1);

  ReplicaToy(int k) {
    this.k = k;
  }

  /** The owners of {@code t}, primary first, on {@code collectors} (in name order, not empty). */
  abstract List<String> owners(Target t, List<Collector> collectors);

  @Override
  public synchronized void setTargets(Collection<Target> given) {
    LinkedHashMap<Target, Target> next = new LinkedHashMap<>();
    for (Target t : given) {
      next.remove(t);
      next.put(t, t);
    }
    targets = next;
    publish();
  }

  @Override
  public synchronized void setCollectors(Collection<Collector> given) {
    if (!given.isEmpty()) {
      List<Collector> sorted = new ArrayList<>(given);
      sorted.sort(Comparator.comparing(Collector::name));
      collectors = sorted;
      publish();
    }
  }

  private void publish() {
    Map<Target, List<String>> owners = new HashMap<>();
    if (!collectors.isEmpty()) {
      for (Target t : targets.values()) {
        owners.put(t, owners(t, collectors));
      }
    }
    snapshot = new Snapshot(collectors, targets.values(), owners, k);
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

  /** The collectors ranked by a toy rendezvous score for {@code t}, best first. */
  static List<Collector> ranked(Target t, List<Collector> collectors) {
    List<Collector> out = new ArrayList<>(collectors);
    out.sort(Comparator.comparingLong((Collector c) -> -score(t, c))
        .thenComparing(Collector::name));
    return out;
  }

  private static long score(Target t, Collector c) {
    return SplitMix64.mix(t.hash() ^ ToyAllocator.fnv(c.name())) >>> 1;
  }

  /** Rendezvous for the primary, then the next collectors by name: blind to nodes. */
  static final class NextByName extends ReplicaToy {
    NextByName() {
      super(2);
    }

    @Override
    List<String> owners(Target t, List<Collector> collectors) {
      int first = collectors.indexOf(ranked(t, collectors).get(0));
      List<String> out = new ArrayList<>();
      for (int j = 0; j < Math.min(k, collectors.size()); j++) {
        out.add(collectors.get((first + j) % collectors.size()).name());
      }
      return out;
    }
  }

  /**
   * Modulo sharding with the next collectors as replicas: balanced and spread when every
   * collector has its own node, but nearly every replica moves when the count changes.
   */
  static final class Modulo extends ReplicaToy {
    Modulo() {
      super(2);
    }

    @Override
    List<String> owners(Target t, List<Collector> collectors) {
      int first = (int) Long.remainderUnsigned(t.hash(), collectors.size());
      List<String> out = new ArrayList<>();
      for (int j = 0; j < Math.min(k, collectors.size()); j++) {
        out.add(collectors.get((first + j) % collectors.size()).name());
      }
      return out;
    }
  }

  /** The best k by rendezvous, but with too few collectors it fills up with the primary. */
  static final class FillsWithThePrimary extends ReplicaToy {
    FillsWithThePrimary() {
      super(2);
    }

    @Override
    List<String> owners(Target t, List<Collector> collectors) {
      List<String> out = new ArrayList<>();
      for (Collector c : ranked(t, collectors)) {
        if (out.size() < k) {
          out.add(c.name());
        }
      }
      while (out.size() < k) {
        out.add(out.get(0));
      }
      return out;
    }
  }

  /** The best k by rendezvous, each on its own node when it can: correct. */
  static final class Correct extends ReplicaToy {
    Correct(int k) {
      super(k);
    }

    @Override
    List<String> owners(Target t, List<Collector> collectors) {
      List<String> out = new ArrayList<>();
      Set<String> nodes = new TreeSet<>();
      for (int pass = 0; pass < 2; pass++) {
        for (Collector c : ranked(t, collectors)) {
          String slot = Replicas.nodeSlot(c);
          if (out.size() < k && !out.contains(c.name()) && (pass == 1 || nodes.add(slot))) {
            out.add(c.name());
          }
        }
      }
      return out;
    }
  }

  /** A snapshot over the owner lists; a name listed twice is listed twice, as the bug has it. */
  private static final class Snapshot implements Allocation {
    private final Set<Collector> collectors;
    private final Set<Target> targets;
    private final Map<Target, List<String>> owners;
    private final int k;
    private final Set<Target> unassigned = new LinkedHashSet<>();
    private final Map<String, Map<String, List<Target>>> lists = new TreeMap<>();

    Snapshot(Collection<Collector> collectors, Collection<Target> targets,
        Map<Target, List<String>> owners, int k) {
      this.collectors = Collections.unmodifiableSet(new TreeSet<>(collectors));
      List<Target> sorted = new ArrayList<>(targets);
      sorted.sort(MapAllocation.BY_HASH);
      this.targets = Collections.unmodifiableSet(new LinkedHashSet<>(sorted));
      this.owners = owners;
      this.k = k;
      for (Target t : sorted) {
        List<String> o = owners.getOrDefault(t, List.of());
        if (new LinkedHashSet<>(o).size() < k) {
          unassigned.add(t);
        }
        for (String c : new LinkedHashSet<>(o)) {
          lists.computeIfAbsent(c, x -> new TreeMap<>())
              .computeIfAbsent(t.job(), x -> new ArrayList<>()).add(t);
        }
      }
    }

    @Override
    public Set<Collector> collectors() {
      return collectors;
    }

    @Override
    public Set<Target> targets() {
      return targets;
    }

    @Override
    public Optional<String> collectorOf(Target target) {
      List<String> o = owners.getOrDefault(target, List.of());
      return o.isEmpty() ? Optional.empty() : Optional.of(o.get(0));
    }

    @Override
    public List<String> ownersOf(Target target) {
      return List.copyOf(owners.getOrDefault(target, List.of()));
    }

    @Override
    public int replicas() {
      return k;
    }

    @Override
    public Set<Target> unassigned() {
      return Collections.unmodifiableSet(unassigned);
    }

    @Override
    public List<Target> targetsFor(String collector, String job) {
      return Collections.unmodifiableList(
          lists.getOrDefault(collector, Map.of()).getOrDefault(job, List.of()));
    }

    @Override
    public Set<String> jobsFor(String collector) {
      return Collections.unmodifiableSet(lists.getOrDefault(collector, Map.of()).keySet());
    }

    @Override
    public int targetCount(String collector) {
      int n = 0;
      for (List<Target> l : lists.getOrDefault(collector, Map.of()).values()) {
        n += l.size();
      }
      return n;
    }
  }
}
