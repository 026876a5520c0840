package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.AllocationListener;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Runs one scenario against one fresh allocator: applies each step to the model, makes the call,
 * repeats it, and checks every invariant. Deterministic for a given scenario, factory and
 * invariant list (argument orders come from the scenario's seed).
 */
final class Execution {
  /** The name under which an exception thrown by the allocator is reported. */
  static final String NO_EXCEPTION = "no-exception";

  /** Makes allocators for the runner. */
  interface Factory {
    /** A new allocator; {@code sink} hears its changes when {@link #observes()}. */
    Allocator create(AllocationListener sink);

    /** Whether the allocators made report their changes to the sink. */
    boolean observes();
  }

  /** The first violation found. */
  static final class Outcome {
    final String invariant;
    final String description;
    final int step;

    Outcome(String invariant, String description, int step) {
      this.invariant = invariant;
      this.description = description;
      this.step = step;
    }
  }

  /** A listener that ignores every change: for allocators whose changes nobody checks. */
  static final AllocationListener IGNORE = change -> { };

  private final Factory factory;
  private final List<Invariant> invariants;

  Execution(Factory factory, List<Invariant> invariants) {
    this.factory = factory;
    this.invariants = List.copyOf(invariants);
  }

  Outcome run(Scenario scenario) {
    List<AllocationChange> sink = new ArrayList<>();
    Allocator allocator;
    try {
      allocator = factory.create(sink::add);
    } catch (RuntimeException e) {
      return new Outcome(NO_EXCEPTION, "creating the allocator threw " + e, -1);
    }
    Inputs in = Inputs.EMPTY;
    List<Step> steps = scenario.steps();
    for (int i = 0; i < steps.size(); i++) {
      Step step = steps.get(i);
      Inputs next = step.apply(in);
      Call call = Call.of(step, next, scenario.seed(), i);
      Allocation before = allocator.snapshot();
      sink.clear();
      try {
        call.apply(allocator);
      } catch (RuntimeException e) {
        return new Outcome(NO_EXCEPTION, step.toJava("") + " threw " + e, i);
      }
      Allocation after = allocator.snapshot();
      List<AllocationChange> changes = factory.observes() ? List.copyOf(sink) : null;
      sink.clear();
      try {
        call.apply(allocator);
      } catch (RuntimeException e) {
        return new Outcome(NO_EXCEPTION, "repeating " + step.toJava("") + " threw " + e, i);
      }
      Allocation repeated = allocator.snapshot();
      List<AllocationChange> repeatChanges = factory.observes() ? List.copyOf(sink) : null;
      Transition t = new Transition(i, step.toJava(""), step instanceof Step.CollectorStep, in,
          next, before, after, repeated, changes, repeatChanges, this::rebuild, scenario.seed());
      for (Invariant inv : invariants) {
        String problem;
        try {
          problem = inv.check(t);
        } catch (RuntimeException e) {
          problem = "the check threw " + e;
        }
        if (problem != null) {
          return new Outcome(inv.name(), problem, i);
        }
      }
      in = next;
    }
    return null;
  }

  /** See {@link Transition#rebuilt(int)} for the histories. */
  Allocation rebuild(Inputs inputs, int history, long seed) {
    Allocator f = factory.create(IGNORE);
    SplitMix64 r = new SplitMix64(seed);
    List<Target> targets = inputs.targets();
    List<Collector> collectors = inputs.collectors();
    if (collectors.isEmpty()) {
      f.setTargets(permute(targets, r));
      return f.snapshot();
    }
    switch (history) {
      case 0 -> {
        List<Collector> c = new ArrayList<>(collectors);
        Collections.reverse(c);
        f.setCollectors(c);
        f.setTargets(targets);
      }
      case 1 -> {
        f.setTargets(permute(targets, r));
        f.setCollectors(permute(collectors, r));
      }
      case 2 -> {
        List<Target> shuffled = permute(targets, r);
        f.setTargets(shuffled.subList(0, shuffled.size() / 2));
        f.setCollectors(permute(collectors, r));
        f.setCollectors(List.of());
        f.setTargets(permute(targets, r));
      }
      case 3 -> {
        List<Collector> more = new ArrayList<>(collectors);
        more.add(extra(collectors, r));
        f.setCollectors(permute(more, r));
        f.setTargets(permute(targets, r));
        f.setCollectors(permute(collectors, r));
      }
      default -> throw new IllegalArgumentException("no history " + history);
    }
    return f.snapshot();
  }

  /**
   * A collector not in {@code collectors}, named to sort first so that under per-node it wins
   * the node it shares with one of them for a while.
   */
  private static Collector extra(List<Collector> collectors, SplitMix64 r) {
    Set<String> names = new HashSet<>(Transition.names(collectors));
    String name = "0-extra";
    while (names.contains(name)) {
      name = name + "-";
    }
    Collector near = collectors.get(r.nextInt(collectors.size()));
    return Collector.of(name, near.node().orElse(null));
  }

  static <T> List<T> permute(List<T> items, SplitMix64 r) {
    List<T> out = new ArrayList<>(items);
    for (int i = out.size() - 1; i > 0; i--) {
      Collections.swap(out, i, r.nextInt(i + 1));
    }
    return out;
  }

  /** One allocator call with its arguments fixed, so that it can be made twice identically. */
  static final class Call {
    final List<Target> targets;
    final List<Collector> collectors;

    private Call(List<Target> targets, List<Collector> collectors) {
      this.targets = targets;
      this.collectors = collectors;
    }

    static Call of(Step step, Inputs next, long seed, int index) {
      SplitMix64 r = new SplitMix64(SplitMix64.mix(seed ^ (0x632BE59BD9B4E019L * (index + 1))));
      if (step instanceof Step.CollectorStep) {
        return new Call(null, permute(next.declared(), r));
      }
      List<Target> stale = new ArrayList<>();
      for (Target t : step.staleCopies()) {
        if (next.target(t).isPresent()) {
          stale.add(t);
        }
      }
      List<Target> args = permute(stale, r);
      args.addAll(permute(next.targets(), r));
      return new Call(Collections.unmodifiableList(args), null);
    }

    void apply(Allocator a) {
      if (targets != null) {
        a.setTargets(targets);
      } else {
        a.setCollectors(collectors);
      }
    }
  }
}
