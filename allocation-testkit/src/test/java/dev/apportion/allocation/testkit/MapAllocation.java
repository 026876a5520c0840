package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** A plain immutable {@link Allocation} over maps, for the toy allocators of these tests. */
final class MapAllocation implements Allocation {
  static final Comparator<Target> BY_HASH = Comparator.comparingLong(Target::hash)
      .thenComparing(Target::toString);
  static final MapAllocation EMPTY = new MapAllocation(List.of(), List.of(), Map.of());

  private final Set<Collector> collectors;
  private final Set<Target> targets;
  private final Map<Target, String> owners;
  private final Set<Target> unassigned;
  private final Map<String, Map<String, List<Target>>> lists = new TreeMap<>();

  /**
   * @param collectors the collectors
   * @param targets the instances, one per identity
   * @param owners target to collector name; absent for unassigned
   */
  MapAllocation(Collection<Collector> collectors, Collection<Target> targets,
      Map<Target, String> owners) {
    this.collectors = Collections.unmodifiableSet(new TreeSet<>(collectors));
    List<Target> sorted = new ArrayList<>(targets);
    sorted.sort(BY_HASH);
    this.targets = Collections.unmodifiableSet(new LinkedHashSet<>(sorted));
    this.owners = new HashMap<>(owners);
    Set<Target> u = new LinkedHashSet<>();
    for (Collector c : collectors) {
      lists.put(c.name(), new TreeMap<>());
    }
    for (Target t : sorted) {
      String c = owners.get(t);
      if (c == null) {
        u.add(t);
      } else {
        lists.computeIfAbsent(c, k -> new TreeMap<>())
            .computeIfAbsent(t.job(), k -> new ArrayList<>()).add(t);
      }
    }
    this.unassigned = Collections.unmodifiableSet(u);
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
    return Optional.ofNullable(owners.get(target));
  }

  @Override
  public Set<Target> unassigned() {
    return unassigned;
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
