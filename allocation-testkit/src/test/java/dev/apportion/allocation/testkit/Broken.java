package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.AllocationListener;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Move;
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
 * Deliberately broken strategies, one bug each, to show that every invariant of the kit can fail
 * and that the shrinker brings each bug down to a few steps. Each is otherwise a correct toy.
 */
final class Broken {
  private Broken() {}

  private static List<Collector> byName(List<Collector> collectors) {
    List<Collector> out = new ArrayList<>(collectors);
    out.sort(Comparator.comparing(Collector::name));
    return out;
  }

  /**
   * Completeness: sticky placement that forgets to re-place the targets of a collector that
   * left. They stay known but end up neither assigned nor unassigned.
   */
  static final class ForgetsOrphans extends ToyAllocator {
    @Override
    Map<Target, String> place(List<Target> targets, List<Collector> collectors,
        Map<Target, String> previous) {
      Set<String> live = new TreeSet<>(Transition.names(collectors));
      Map<Target, String> out = new HashMap<>();
      for (Target t : targets) {
        String was = previous.get(t);
        if (was == null) {
          out.put(t, highestScore(t, collectors));
        } else if (live.contains(was)) {
          out.put(t, was);
        }
      }
      return out;
    }

    @Override
    protected Allocation build() {
      return new Lost(super.build(), new HashMap<>(owners));
    }

    /** Reports a target with no owner as not unassigned either: it is lost. */
    private static final class Lost extends Delegating {
      private final Map<Target, String> owners;

      Lost(Allocation a, Map<Target, String> owners) {
        super(a);
        this.owners = owners;
      }

      @Override
      public Set<Target> unassigned() {
        Set<Target> out = new LinkedHashSet<>();
        for (Target t : a.unassigned()) {
          if (!owners.containsKey(t) && a.collectors().isEmpty()) {
            out.add(t);
          }
        }
        return out;
      }
    }
  }

  /** Determinism: targets in input order dealt round-robin to collectors in input order. */
  static final class InputOrderRoundRobin extends ToyAllocator {
    @Override
    Map<Target, String> place(List<Target> targets, List<Collector> collectors,
        Map<Target, String> previous) {
      Map<Target, String> out = new HashMap<>();
      for (int i = 0; i < targets.size(); i++) {
        out.put(targets.get(i), collectors.get(i % collectors.size()).name());
      }
      return out;
    }
  }

  /** Idempotence: every call rotates the assignment by one collector. */
  static final class Flapping extends ToyAllocator {
    private int calls;

    @Override
    Map<Target, String> place(List<Target> targets, List<Collector> collectors,
        Map<Target, String> previous) {
      calls++;
      List<Collector> sorted = byName(collectors);
      Map<Target, String> out = new HashMap<>();
      for (Target t : targets) {
        int i = sorted.indexOf(collector(highestScore(t, sorted), sorted));
        out.put(t, sorted.get((i + calls) % sorted.size()).name());
      }
      return out;
    }

    private static Collector collector(String name, List<Collector> collectors) {
      for (Collector c : collectors) {
        if (c.name().equals(name)) {
          return c;
        }
      }
      throw new IllegalStateException(name);
    }
  }

  /**
   * Movement: Prometheus-style hashmod over the collectors in name order. Deterministic and
   * idempotent, but a collector change reshuffles nearly everything.
   */
  static final class HashMod extends ToyAllocator {
    @Override
    Map<Target, String> place(List<Target> targets, List<Collector> collectors,
        Map<Target, String> previous) {
      List<Collector> sorted = byName(collectors);
      Map<Target, String> out = new HashMap<>();
      for (Target t : targets) {
        out.put(t, sorted.get((int) Long.remainderUnsigned(t.hash(), sorted.size())).name());
      }
      return out;
    }
  }

  /** Balance: every target on the collector with the smallest name. */
  static final class AllOnFirst extends ToyAllocator {
    @Override
    Map<Target, String> place(List<Target> targets, List<Collector> collectors,
        Map<Target, String> previous) {
      String first = byName(collectors).get(0).name();
      Map<Target, String> out = new HashMap<>();
      for (Target t : targets) {
        out.put(t, first);
      }
      return out;
    }
  }

  /** Per-node that picks the larger-name collector when two share a node. */
  static final class LargerNameWins extends ToyAllocator {
    @Override
    Map<Target, String> place(List<Target> targets, List<Collector> collectors,
        Map<Target, String> previous) {
      Map<String, String> winners = new TreeMap<>();
      for (Collector c : byName(collectors)) {
        c.node().ifPresent(n -> winners.put(n, c.name()));
      }
      Map<Target, String> out = new HashMap<>();
      for (Target t : targets) {
        String w = t.node().map(winners::get).orElse(null);
        out.put(t, w != null ? w : highestScore(t, collectors));
      }
      return out;
    }
  }

  /** Per-node "without fallback" that still places the targets no node collector can take. */
  static final class LeakyNoFallback extends ToyAllocator {
    @Override
    Map<Target, String> place(List<Target> targets, List<Collector> collectors,
        Map<Target, String> previous) {
      Map<String, String> winners = new TreeMap<>();
      for (Collector c : byName(collectors)) {
        c.node().ifPresent(n -> winners.putIfAbsent(n, c.name()));
      }
      Map<Target, String> out = new HashMap<>();
      for (Target t : targets) {
        String w = t.node().map(winners::get).orElse(null);
        out.put(t, w != null ? w : highestScore(t, collectors));
      }
      return out;
    }
  }

  /**
   * All-assigned: during an empty-set blip, targets that arrive are left unassigned instead of
   * being placed on the last non-empty set.
   */
  static final class IgnoresTargetsDuringBlip extends ToyAllocator {
    private boolean blip;

    @Override
    public synchronized void setCollectors(Collection<Collector> given) {
      blip = given.isEmpty();
      super.setCollectors(given);
    }

    @Override
    Map<Target, String> place(List<Target> targets, List<Collector> collectors,
        Map<Target, String> previous) {
      Map<Target, String> out = new HashMap<>();
      for (Target t : targets) {
        if (!blip || previous.containsKey(t)) {
          out.put(t, blip ? previous.get(t) : highestScore(t, collectors));
        }
      }
      return out;
    }
  }

  /** Latest labels: keeps the first instance of a target it saw, ignoring later labels. */
  static final class StaleLabels extends ToyAllocator {
    @Override
    public synchronized void setTargets(Collection<Target> given) {
      LinkedHashMap<Target, Target> next = new LinkedHashMap<>();
      for (Target t : given) {
        Target old = targets.get(t);
        next.putIfAbsent(t, old != null ? old : t);
      }
      targets = next;
      replace();
    }

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

  /** Reported moves: tells its listener about each change but never lists a move. */
  static final class SilentListener extends ToyAllocator.Correct {
    private final AllocationListener listener;
    private AllocationChange.Cause cause = AllocationChange.Cause.SET_TARGETS;

    SilentListener(AllocationListener listener) {
      this.listener = listener;
    }

    @Override
    protected void replace() {
      Allocation before = snapshot();
      super.replace();
      Allocation after = snapshot();
      listener.onChange(new AllocationChange() {
        @Override
        public Cause cause() {
          return cause;
        }

        @Override
        public String strategy() {
          return "silent";
        }

        @Override
        public Allocation before() {
          return before;
        }

        @Override
        public Allocation after() {
          return after;
        }

        @Override
        public List<Move> moves() {
          return List.of();
        }

        @Override
        public List<Target> relabeled() {
          return List.of();
        }

        @Override
        public int reassigned() {
          return 0;
        }

        @Override
        public long durationNanos() {
          return 0;
        }
      });
    }

    @Override
    public synchronized void setTargets(Collection<Target> given) {
      cause = AllocationChange.Cause.SET_TARGETS;
      super.setTargets(given);
    }

    @Override
    public synchronized void setCollectors(Collection<Collector> given) {
      cause = AllocationChange.Cause.SET_COLLECTORS;
      if (given.isEmpty()) {
        replace();
        return;
      }
      super.setCollectors(given);
    }
  }

  /**
   * Snapshot consistency: keeps targets, owners and collectors in three volatile fields and
   * writes them one after another, so a reader between two writes sees a mix. Sequentially it
   * is a correct rendezvous toy.
   */
  static final class TornPublisher extends ToyAllocator.Correct {
    private volatile Collection<Target> publishedTargets = List.of();
    private volatile Map<Target, String> publishedOwners = Map.of();
    private volatile List<Collector> publishedCollectors = List.of();

    // The yields are the point: they widen the window between the writes for the reader to hit.
    @SuppressWarnings("ThreadPriorityCheck")
    @Override
    protected void publish() {
      publishedTargets = new ArrayList<>(targets.values());
      Thread.yield();
      publishedOwners = new HashMap<>(owners);
      Thread.yield();
      publishedCollectors = new ArrayList<>(collectors);
    }

    @Override
    public Allocation snapshot() {
      return new Torn(publishedCollectors, publishedTargets, publishedOwners);
    }

    @Override
    public List<Target> targetsFor(String collector, String job) {
      return snapshot().targetsFor(collector, job);
    }

    /** Unassigned is what the targets field says has no owner in the owners field. */
    private static final class Torn extends Delegating {
      private final Set<Target> targets;

      Torn(List<Collector> collectors, Collection<Target> targets, Map<Target, String> owners) {
        super(new MapAllocation(collectors, owners.keySet(), owners));
        Set<Target> t = new LinkedHashSet<>(targets);
        this.targets = Collections.unmodifiableSet(t);
      }

      @Override
      public Set<Target> targets() {
        return targets;
      }

      @Override
      public Set<Target> unassigned() {
        Set<Target> out = new LinkedHashSet<>();
        for (Target t : targets) {
          if (a.collectorOf(t).isEmpty()) {
            out.add(t);
          }
        }
        return out;
      }
    }
  }

  /** An {@link Allocation} that forwards to another; broken ones override a method. */
  abstract static class Delegating implements Allocation {
    final Allocation a;

    Delegating(Allocation a) {
      this.a = a;
    }

    @Override
    public Set<Collector> collectors() {
      return a.collectors();
    }

    @Override
    public Set<Target> targets() {
      return a.targets();
    }

    @Override
    public Optional<String> collectorOf(Target target) {
      return a.collectorOf(target);
    }

    @Override
    public Set<Target> unassigned() {
      return a.unassigned();
    }

    @Override
    public List<Target> targetsFor(String collector, String job) {
      return a.targetsFor(collector, job);
    }

    @Override
    public Set<String> jobsFor(String collector) {
      return a.jobsFor(collector);
    }

    @Override
    public int targetCount(String collector) {
      return a.targetCount(collector);
    }
  }
}
