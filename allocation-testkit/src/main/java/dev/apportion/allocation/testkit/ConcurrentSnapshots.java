package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The snapshot-consistency check: a writer thread applies a scenario's calls while a reader
 * thread takes snapshots and checks each one.
 *
 * <p>What a snapshot must satisfy, whenever it is taken: its targets and collectors are exactly
 * those of one state the writer passed through (the state before or after some call, never a mix
 * of two), and it is complete on its own terms (every one of its targets on exactly one of its
 * collectors' lists or unassigned, the views agreeing). A reader that sees a half-applied change
 * fails one or the other.
 *
 * <p>Bounded in iterations, not time: the writer makes the scenario's calls {@code passes} times,
 * each pass on a fresh allocator; the reader reads until the writer is done. No sleeps, no clocks.
 * A failure is found with a probability, not a certainty, so a pass proves less than a failure
 * does; the kit's own tests show that a non-atomic publisher is caught.
 */
final class ConcurrentSnapshots {
  static final String NAME = "snapshot-consistency";

  /** A safety bound on the reader; the writer's passes are the real bound. */
  private static final long MAX_READS = 50_000_000L;

  private ConcurrentSnapshots() {}

  static Execution.Outcome run(Execution.Factory factory, Scenario scenario, int passes) {
    List<Execution.Call> calls = new ArrayList<>();
    Set<List<Set<?>>> allowed = new HashSet<>();
    Inputs in = Inputs.EMPTY;
    allowed.add(key(in.targets(), in.collectors()));
    for (int i = 0; i < scenario.size(); i++) {
      Step step = scenario.steps().get(i);
      Inputs next = step.apply(in);
      calls.add(Execution.Call.of(step, next, scenario.seed(), i));
      allowed.add(key(next.targets(), next.collectors()));
      in = next;
    }
    AtomicReference<Allocator> current = new AtomicReference<>();
    AtomicReference<String> problem = new AtomicReference<>();
    AtomicBoolean done = new AtomicBoolean();
    int[] step = new int[1];
    Thread reader = new Thread(() -> {
      for (long reads = 0; !done.get() && problem.get() == null && reads < MAX_READS; reads++) {
        Allocator a = current.get();
        if (a == null) {
          continue;
        }
        String p;
        try {
          p = check(a.snapshot(), allowed);
        } catch (RuntimeException e) {
          p = "reading a snapshot threw " + e;
        }
        if (p != null) {
          problem.compareAndSet(null, p);
        }
      }
    }, "apportion-testkit-reader");
    reader.setDaemon(true);
    reader.start();
    String thrown = null;
    InterruptedException interrupted = null;
    try {
      for (int pass = 0; pass < passes && problem.get() == null; pass++) {
        Allocator a = factory.create(Execution.IGNORE);
        current.set(a);
        for (int i = 0; i < calls.size() && problem.get() == null; i++) {
          step[0] = i;
          calls.get(i).apply(a);
        }
      }
    } catch (RuntimeException e) {
      thrown = "step " + (step[0] + 1) + " threw " + e;
    } finally {
      done.set(true);
      try {
        reader.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        interrupted = e;
      }
    }
    if (interrupted != null) {
      throw new IllegalStateException("interrupted while joining the reader", interrupted);
    }
    if (thrown != null) {
      return new Execution.Outcome(Execution.NO_EXCEPTION, thrown, -1);
    }
    String p = problem.get();
    return p == null ? null : new Execution.Outcome(NAME, "a snapshot read while the writer "
        + "was applying changes " + p, -1);
  }

  private static List<Set<?>> key(List<Target> targets, List<Collector> collectors) {
    return List.of(new HashSet<>(targets), new HashSet<>(collectors));
  }

  private static String check(Allocation s, Set<List<Set<?>>> allowed) {
    List<Target> targets = new ArrayList<>(s.targets());
    List<Collector> collectors = new ArrayList<>(s.collectors());
    if (!allowed.contains(key(targets, collectors))) {
      return "shows " + targets.size() + " targets on collectors " + collectors
          + ", a combination no state of the scenario had (a half-applied change)";
    }
    Set<String> live = new HashSet<>(Transition.names(collectors));
    Invariants.Problems p = new Invariants.Problems();
    Invariants.structure(s, targets, live, p);
    String d = p.describe();
    return d == null ? null : "is not complete: " + d;
  }
}
