package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.AllocationListener;
import java.util.List;

/** Engines as tests build them: no per-collector limit, and the store's parameters chosen. */
public final class TestEngines {
  private TestEngines() {}

  /**
   * An engine as an allocator builds it, with no per-collector limit.
   *
   * @param strategy the strategy's name
   * @param placer its placement logic
   * @param listeners told after every change
   * @param zones resolves zones for the placer
   * @return the engine
   */
  public static Engine engine(String strategy, Placer placer, List<AllocationListener> listeners,
      NodeZones zones) {
    return new Engine(strategy, placer, listeners, 1.0, zones, 0, 0L);
  }

  /**
   * As {@link #engine(String, Placer, List, NodeZones)}, with zones nobody supplies.
   *
   * @param strategy the strategy's name
   * @param placer its placement logic
   * @param listeners told after every change
   * @return the engine
   */
  public static Engine engine(String strategy, Placer placer,
      List<AllocationListener> listeners) {
    return engine(strategy, placer, listeners, new NodeZones());
  }

  /**
   * An engine whose store keys targets by {@code hash() & keyMask} (a narrow mask forces
   * identity-hash collisions on its table; placement still reads the full hash), comparing
   * targets in turn or not.
   *
   * @param placer its placement logic
   * @param listeners told after every change
   * @param keyMask the table's key mask
   * @param compareInTurn whether the store compares each target with the one given at its place
   *     last time before probing its table
   * @return the engine
   */
  public static Engine keyedBy(Placer placer, List<AllocationListener> listeners, long keyMask,
      boolean compareInTurn) {
    return new Engine("test", placer, listeners, 1.0, new NodeZones(), 0, 0L, keyMask,
        compareInTurn);
  }
}
