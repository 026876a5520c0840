package dev.apportion.bench.sim;

import dev.apportion.allocation.Allocators;
import dev.apportion.bench.Placement;

/**
 * How ownership is decided in the simulated cluster. A mode turns a strategy's name into the
 * {@link Placement} the simulator drives, so a new mode (for example each collector deciding its
 * own targets from the member list) is one more constant here and nothing else changes.
 */
public enum Mode {
  /** One allocator decides for every collector. */
  CENTRAL {
    @Override
    public Placement create(String strategy) {
      return Placement.of(strategy);
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
    public Placement create(String strategy) {
      throw new UnsupportedOperationException("local mode is simulated by LocalSimulation");
    }
  };

  /**
   * A fresh placement running {@code strategy} in this mode.
   *
   * @param strategy a strategy's name, as {@link Allocators#strategies()} lists them
   * @return the placement, with no collectors and no targets
   * @throws IllegalArgumentException if the strategy is unknown
   */
  public abstract Placement create(String strategy);

  /**
   * A fresh placement running {@code strategy} in this mode with every target on
   * {@code replicas} collectors.
   *
   * @param strategy a strategy's name
   * @param replicas replicas per target; 1 is {@link #create(String)}
   * @return the placement, with no collectors and no targets
   * @throws IllegalArgumentException if the strategy is unknown or cannot place replicas
   */
  public Placement create(String strategy, int replicas) {
    if (replicas == 1) {
      return create(strategy);
    }
    if (this != CENTRAL) {
      throw new UnsupportedOperationException("replicas are simulated in central mode");
    }
    return Placement.of(strategy, replicas);
  }
}
