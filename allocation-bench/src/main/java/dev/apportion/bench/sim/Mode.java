package dev.apportion.bench.sim;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.List;

/**
 * How ownership is decided in the simulated cluster. A mode turns a strategy's name into the
 * {@link Subject} the simulator drives, so a new mode (for example each collector deciding its own
 * targets from the member list) is one more constant here and nothing else changes.
 */
public enum Mode {
  /** One allocator decides for every collector. */
  CENTRAL {
    @Override
    public Subject create(String strategy) {
      return new Central(strategy);
    }
  },

  /**
   * No allocator: every replica decides from the member list it sees which targets are its own
   * ({@link dev.apportion.allocation.ownership.Ownership}). It has its own runs and table
   * ({@code LocalSimulation}): one assignment per strategy does not describe it, since replicas
   * may disagree.
   */
  LOCAL {
    @Override
    public Subject create(String strategy) {
      throw new UnsupportedOperationException("local mode is simulated by LocalSimulation");
    }
  };

  /**
   * A fresh subject running {@code strategy} in this mode.
   *
   * @param strategy a strategy's name, as {@link Allocators#strategies()} lists them
   * @return the subject, with no collectors and no targets
   * @throws IllegalArgumentException if the strategy is unknown
   */
  public abstract Subject create(String strategy);

  /** An {@link Allocator}, with a listener that counts what each call moved. */
  private static final class Central implements Subject {
    private final Allocator allocator;
    private int reassigned;

    Central(String strategy) {
      this.allocator = Allocators.builder(strategy)
          // The simulator causes large moves on purpose (a whole rollout); the engine's warning
          // about them would only be noise here.
          .warnWhenMovedShareExceeds(1.0)
          .listener(this::record)
          .build();
    }

    private void record(AllocationChange change) {
      reassigned += change.reassigned();
    }

    @Override
    public String strategy() {
      return allocator.strategy();
    }

    @Override
    public int setCollectors(List<Collector> collectors) {
      reassigned = 0;
      allocator.setCollectors(collectors);
      return reassigned;
    }

    @Override
    public int setTargets(List<Target> targets) {
      reassigned = 0;
      allocator.setTargets(targets);
      return reassigned;
    }

    @Override
    public Allocation allocation() {
      return allocator.snapshot();
    }
  }
}
