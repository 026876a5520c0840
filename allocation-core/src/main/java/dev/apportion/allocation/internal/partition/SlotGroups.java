package dev.apportion.allocation.internal.partition;

import dev.apportion.allocation.internal.collections.Headroom;
import java.util.Arrays;

/**
 * The partitioned layer's record by slot: each target's group, the group a reconcile is moving it
 * to, the reconcile that last saw it in the view, and the key value found for it then. Shared by
 * {@link PartitionedPlacer}, which writes it, and its {@link PartitionGroup}s, which read a
 * target's group through it. Writer-thread only.
 */
final class SlotGroups {
  /** By slot: its group's id, or -1 when in none. */
  int[] group = new int[16];
  /** By slot: its group after the current reconcile. */
  int[] nextGroup = new int[16];
  /** By slot: the reconcile that last saw it in the view. */
  int[] stamp = new int[16];
  /**
   * By slot: the key value the last reconcile found, valid for the slots in its view while no
   * target has changed since and the key resolves as it did.
   */
  String[] key = new String[16];

  SlotGroups() {
    Arrays.fill(group, -1);
  }

  /** Room for {@code slot}. */
  void ensure(int slot) {
    if (slot >= group.length) {
      // With the engine's headroom: a later small change must not copy the arrays again.
      int n = Math.max(Headroom.withHeadroom(slot + 1), group.length * 2);
      int old = group.length;
      group = Arrays.copyOf(group, n);
      Arrays.fill(group, old, n, -1);
      nextGroup = Arrays.copyOf(nextGroup, n);
      stamp = Arrays.copyOf(stamp, n);
      key = Arrays.copyOf(key, n);
    }
  }

  /** The group of {@code slot}, or -1 when in none (or never seen). */
  int groupOf(int slot) {
    return slot < group.length ? group[slot] : -1;
  }
}
