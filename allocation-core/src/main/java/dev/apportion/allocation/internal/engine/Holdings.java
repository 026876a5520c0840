package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.internal.collections.IntList;
import java.util.Arrays;

/**
 * The slots each member holds, as one doubly linked list a member threaded through two arrays
 * by slot: what a collector change unassigns when a member leaves, found at the cost of its
 * targets, from the writer's own state. Kept by {@link Slots#place}, which changes every owner:
 * a link or an unlink is a few array writes. Writer-thread only.
 */
final class Holdings {
  private static final int END = -1;

  /** By slot: the next slot its owner holds, or {@link #END}. */
  private int[] next = new int[16];
  /** By slot: the previous slot its owner holds, or {@link #END} for the first. */
  private int[] previous = new int[16];
  /** By member id: the first slot it holds, or {@link #END}. */
  private int[] first = new int[0];

  /** Room for slots below {@code n}: the store grew. */
  void grow(int n) {
    next = Arrays.copyOf(next, n);
    previous = Arrays.copyOf(previous, n);
  }

  /** Room for a member id; a new member holds nothing. */
  void register(int id) {
    if (id >= first.length) {
      int old = first.length;
      first = Arrays.copyOf(first, Math.max(id + 1, old * 2));
      Arrays.fill(first, old, first.length, END);
    }
    first[id] = END;
  }

  /** Slot {@code slot} is now held by member {@code id}. */
  void link(int slot, int id) {
    int head = first[id];
    next[slot] = head;
    previous[slot] = END;
    if (head != END) {
      previous[head] = slot;
    }
    first[id] = slot;
  }

  /** Slot {@code slot} is no longer held by member {@code id}. */
  void unlink(int slot, int id) {
    int p = previous[slot];
    int n = next[slot];
    if (p == END) {
      first[id] = n;
    } else {
      next[p] = n;
    }
    if (n != END) {
      previous[n] = p;
    }
  }

  /**
   * Adds the slots member {@code id} holds to {@code out}, in no particular order.
   *
   * @return how many
   */
  int collect(int id, IntList out) {
    int count = 0;
    for (int s = first[id]; s != END; s = next[s]) {
      out.add(s);
      count++;
    }
    return count;
  }
}
