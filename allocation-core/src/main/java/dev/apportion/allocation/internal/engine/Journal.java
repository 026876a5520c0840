package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.IntList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What the current operation did to the {@link Slots}: every slot whose owner changed, with its
 * owner before the operation, and the slots added, removed, relabeled and recosted. The
 * {@link Publisher} reads it to build the next snapshot; {@link Slots#endOperation} forgets it.
 * Writer-thread only.
 *
 * <p><b>Marks.</b> Whether a slot is touched, relabeled or recosted in this operation, and the
 * input's own marks ({@link #SEEN}, {@link #UNSEEN}: {@link TargetIntake}'s), are bits of one int
 * a slot stamped with the operation's epoch, so starting an operation clears every mark by
 * counting one up instead of writing every slot. One array for every flag keeps the store at
 * four bytes a target for all of them.
 */
final class Journal {
  /** Previous owner recorded for a target new in this operation. */
  static final int NEW = -2;

  static final int RECOSTED = 1;
  static final int TOUCHED = 2;
  static final int RELABELED = 4;
  /**
   * Given in the current call: a second mention is a duplicate; a known slot never seen is
   * removed.
   */
  static final int SEEN = 8;
  /** Listed among the current call's unseen slots. */
  static final int UNSEEN = 16;
  private static final int FLAG_BITS = 5;
  private static final int EPOCH_MAX = (1 << 26) - 1;

  /**
   * By slot: what the current operation did to it, as {@code epoch << FLAG_BITS | flags}; a mark
   * of another epoch means nothing.
   */
  private int[] marks = new int[16];
  private int epoch = 1;
  /** The owner before the current operation of each slot journaled in it. */
  private final PriorOwners previousOwners = new PriorOwners();
  private final IntList touched = new IntList();
  private final IntList added = new IntList();
  private final IntList removed = new IntList();
  private final IntList relabeled = new IntList();
  private final List<Target> relabeledFrom = new ArrayList<>();
  private final IntList recosted = new IntList();

  /** Starts an operation: a new epoch for the marks. */
  void begin() {
    if (++epoch == EPOCH_MAX) {
      Arrays.fill(marks, 0);
      epoch = 1;
    }
  }

  boolean has(int slot, int flag) {
    int m = marks[slot];
    return (m >>> FLAG_BITS) == epoch && (m & flag) != 0;
  }

  void mark(int slot, int flag) {
    int m = marks[slot];
    marks[slot] = (m >>> FLAG_BITS) == epoch ? m | flag : epoch << FLAG_BITS | flag;
  }

  /** Takes a mark off (a relabel that ended where it began). */
  void unmark(int slot, int flag) {
    marks[slot] &= ~flag;
  }

  /** Room for slots below {@code n}: the store grew. */
  void grow(int n) {
    marks = Arrays.copyOf(marks, n);
    previousOwners.grow(n);
  }

  /** Room for {@code adds} more new targets in this operation, so the lists grow once. */
  void reserveAdds(int adds) {
    touched.ensureCapacity(adds);
    added.ensureCapacity(adds);
  }

  /**
   * Records a slot whose owner changes (or that is added or removed), once an operation, with
   * its owner before.
   *
   * @param capacity the store's capacity, which bounds every slot
   */
  void touch(int slot, int previousOwner, int capacity) {
    if (!has(slot, TOUCHED)) {
      mark(slot, TOUCHED);
      touched.add(slot);
      previousOwners.put(slot, previousOwner, capacity);
    }
  }

  /** Records a new slot (already {@linkplain #touch touched} as {@link #NEW}). */
  void added(int slot) {
    added.add(slot);
  }

  /** Records a dropped slot (already touched). */
  void removed(int slot) {
    removed.add(slot);
  }

  /** Records the first relabel of a slot in this operation, with the instance it had. */
  void relabeled(int slot, Target from) {
    if (!has(slot, RELABELED)) {
      mark(slot, RELABELED);
      relabeled.add(slot);
      relabeledFrom.add(from);
    }
  }

  /** Records the first change of a known slot's cost in this operation. */
  void recosted(int slot) {
    if (!has(slot, RECOSTED)) {
      mark(slot, RECOSTED);
      recosted.add(slot);
    }
  }

  /** Slots touched in this operation, in the order first touched. */
  IntList touched() {
    return touched;
  }

  /**
   * The owner before this operation of a touched slot ({@link #NEW} for a new target,
   * {@link Slots#NONE} for an unassigned one); meaningless for a slot not touched.
   */
  int previousOwner(int slot) {
    return previousOwners.get(slot);
  }

  /** Slots added in this operation, in {@link TargetOrder} once the order was updated. */
  IntList added() {
    return added;
  }

  /** Slots removed in this operation, in {@link TargetOrder}. */
  IntList removed() {
    return removed;
  }

  /** Slots relabeled in this operation (in the order first relabeled). */
  IntList relabeled() {
    return relabeled;
  }

  /** The instance each {@link #relabeled()} slot had before this operation. */
  List<Target> relabeledFrom() {
    return relabeledFrom;
  }

  /**
   * Slots whose cost changed in this operation and that were known before it (in the order
   * first changed); a slot may also be relabeled or touched.
   */
  IntList recosted() {
    return recosted;
  }

  /** Whether the slot's labels changed in this operation. */
  boolean isRelabeled(int slot) {
    return has(slot, RELABELED);
  }

  boolean isTouched(int slot) {
    return has(slot, TOUCHED);
  }

  /** Forgets the operation (the caller has freed the removed slots). */
  void clear() {
    touched.reset();
    previousOwners.clear();
    added.reset();
    removed.reset();
    relabeled.reset();
    relabeledFrom.clear();
    recosted.reset();
  }
}
