package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.Headroom;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.collections.Passes;
import dev.apportion.allocation.ring.HashRings;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.function.BiPredicate;

/**
 * Takes the targets of a {@code setTargets} call into the {@link Slots} and says what changed, as
 * one {@link TargetSetChange}: the input diff. Writer-thread only.
 *
 * <p><b>Telling a known target from a new one</b> compares numbers. First in turn: the slots of
 * the targets the last call was given are kept in the order given, and each target of the next
 * call is compared with the one expected at its place (the same instance, or the same hash,
 * labels hash and cost): a refresh that lists its targets in the order it listed them last time
 * reads memory in order, with no table probe, whatever it inserted, removed or replaced (each
 * costs one lookup, after which the comparison in turn resumes). Otherwise by the table: a target
 * whose identity hash finds a slot with the same labels hash is that slot's target, unchanged
 * ({@link Target#labelsHash()} covers job, address and every label, so two targets that differ
 * anywhere differ there with probability 1 - 2^-64). Only when the labels hash differs are
 * identities compared, to tell a relabel from two distinct targets whose identity hashes collide;
 * colliding targets get a slot each and are both placed.
 *
 * <p><b>Cost.</b> Each slot keeps its labels hash xor a mix of its cost ({@link #aux}; the mix of
 * the default cost 1 is 0), so an unchanged target costs two comparisons of numbers, its identity
 * hash and that word. A target whose cost alone changed is told from a relabel by comparing its
 * labels hash with the known instance's: it is recosted, not touched (its owner does not change).
 * The known targets not given are found by one pass over the last call's input, not the order.
 */
final class TargetIntake {
  private static final int BATCH = 16;
  /** Targets read by one call of {@link #takeRange}: a multiple of {@link #BATCH}. */
  private static final int RANGE = 256;
  /** The last input's slots read by one call of {@link #collectUnseen}. */
  private static final int UNSEEN_RANGE = 256;
  private static final long COST_SALT = 0x632BE59BD9B4E019L;

  /** What {@link #find} found: the target unchanged. */
  private static final int FOUND_UNCHANGED = 0;
  /** What {@link #find} found: the target with its labels, another cost. */
  private static final int FOUND_RECOSTED = 1;
  /** What {@link #find} found: the target with other labels. */
  private static final int FOUND_RELABELED = 2;

  private final Slots slots;
  private final Journal journal;
  /** Whether targets are compared in turn at all. */
  private final boolean inTurn;

  /**
   * By slot: the labels hash and cost word ({@link #aux}), which the comparison in turn reads in
   * order and a table lookup reads for each slot its key finds.
   */
  private long[] auxes = new long[16];
  /** By slot: its place in the last call's input (or, once given in this call, in this one's). */
  private int[] positions = new int[16];
  /**
   * The slots of the targets the last call was given, in the order given ({@link
   * #lastGivenCount} of them), and those of the current call as it proceeds.
   */
  private int[] lastGiven = new int[0];
  private int lastGivenCount;
  private int[] given = new int[0];
  private int givenCount;
  /** Where in {@link #lastGiven} the next target given is expected. */
  private int cursor;
  /** The known slots not given in the current call, in {@link TargetOrder}: the removed ones. */
  private final IntList unseen = new IntList();
  /** Known slots (not added in this call) marked seen in this call. */
  private int seenKnown;
  private final IntList renoded = new IntList();
  /** The value {@link #take} returned last. */
  private TargetSetChange change;
  /** Sum of touched cells, so the JIT keeps the loads of {@link #touch}: written, never read. */
  @SuppressWarnings("UnusedVariable")
  private long touchSink;

  /**
   * An intake into {@code slots}.
   *
   * @param compareInTurn whether each target given is first compared with the one given at its
   *     place in the last call, before the table is probed (on in an allocator; either way gives
   *     the same answers)
   */
  TargetIntake(Slots slots, boolean compareInTurn) {
    this.slots = slots;
    this.journal = slots.journal();
    this.inTurn = compareInTurn;
  }

  /**
   * The word that tells a known target unchanged: its labels hash, xor a mix of its cost when
   * that is not the default (so with default costs the word is the labels hash).
   */
  static long aux(long labelsHash, long cost) {
    return cost == Target.DEFAULT_COST ? labelsHash
        : labelsHash ^ HashRings.mix(cost ^ COST_SALT);
  }

  /**
   * Takes every target of a call, inside an operation the caller began: known ones are kept (with
   * their new labels or cost), new ones get a slot, the known ones not given are dropped and the
   * order updated.
   *
   * @param targets the targets, none null
   * @param indexed whether {@code targets} is a {@link java.util.RandomAccess} list, read by
   *     index in ranges
   * @param placementMoves whether a relabel may change where the placer places a target
   * @return what changed
   */
  @SuppressWarnings("unchecked") // a List of Targets when indexed
  TargetSetChange take(Collection<Target> targets, boolean indexed,
      BiPredicate<Target, Target> placementMoves) {
    int n = targets.size();
    slots.reserve(Math.max(slots.known(), n));
    fit();
    seenKnown = 0;
    beginInput(n);
    int duplicates = 0;
    if (indexed) {
      List<Target> list = (List<Target>) targets;
      boolean lookedMost = false;
      for (int from = 0; from < list.size(); from += RANGE) {
        long r = takeRange(list, from, Math.min(list.size(), from + RANGE), lookedMost);
        duplicates += (int) (r >>> 1);
        lookedMost = (r & 1) != 0;
      }
    } else {
      for (Target t : targets) {
        if (!takeUnchangedInTurn(t)) {
          duplicates += take(t);
        }
      }
    }
    endInput();
    settleRelabels();
    slots.dropAndOrder(unseen, journal.added());
    unseen.reset();
    renoded.clear();
    IntList relabeled = journal.relabeled();
    List<Target> from = journal.relabeledFrom();
    for (int i = 0; i < from.size(); i++) {
      int s = relabeled.get(i);
      if (placementMoves.test(from.get(i), slots.target(s))) {
        renoded.add(s);
      }
    }
    slots.sort(renoded);
    slots.sort(journal.recosted());
    // The lists are the journal's and this intake's, the same objects every call: the value of
    // the last call with as many duplicates serves again, and a steady refresh allocates none.
    if (change == null || change.duplicates() != duplicates) {
      change = new TargetSetChange(journal.added(), journal.removed(), relabeled, from,
          renoded, journal.recosted(), duplicates);
    }
    return change;
  }

  /** The per-slot arrays as large as the store's. */
  private void fit() {
    int capacity = slots.capacity();
    if (auxes.length < capacity) {
      auxes = Arrays.copyOf(auxes, capacity);
      positions = Arrays.copyOf(positions, capacity);
    }
  }

  /**
   * Takes {@code list[from .. to)}, {@link #BATCH} at a time: the input is read in ranges of
   * {@link #RANGE} ({@link Passes}).
   *
   * @param lookedMost whether most of the batch before this range were looked up
   * @return the duplicates found, shifted left by one, or 1 when most of the last batch were
   *     looked up
   */
  private long takeRange(List<Target> list, int from, int to, boolean lookedMost) {
    long duplicates = 0;
    int looked = lookedMost ? BATCH : 0;
    for (int b = from; b < to; b += BATCH) {
      int end = Math.min(to, b + BATCH);
      if (looked > BATCH / 4) {
        // The last batch was mostly not in turn (a shuffled or a first input): touch every
        // target's table cell before looking each up. The touches are independent loads, so
        // their cache misses overlap instead of queueing.
        touch(list, b, end);
      } else {
        // Mostly in turn (or the input's first batch, or the comparison in turn off: a field
        // read a target, cheap either way): each target is compared with the slot expected,
        // whose arrays are read in order; the targets themselves, built anew, are scattered, so
        // they are touched first, their misses overlapping as above.
        touchTargets(list, b, end);
      }
      looked = 0;
      for (int i = b; i < end; i++) {
        Target t = list.get(i);
        if (!takeUnchangedInTurn(t)) {
          duplicates += take(t);
          looked++;
        }
      }
    }
    return duplicates << 1 | (looked > BATCH / 4 ? 1 : 0);
  }

  /**
   * Loads the table cell of each of {@code targets[from .. to)}, so that a later {@link #find}
   * of each hits the cache: independent loads whose misses the processor overlaps.
   */
  private void touch(List<Target> targets, int from, int to) {
    long sum = 0;
    for (int i = from; i < to; i++) {
      sum += slots.peek(targets.get(i).hash());
    }
    touchSink += sum;
  }

  /**
   * Loads each of {@code targets[from .. to)}'s hash, so that a later {@link
   * #takeUnchangedInTurn} of each finds the target in the cache: independent loads, as in
   * {@link #touch}.
   */
  private void touchTargets(List<Target> targets, int from, int to) {
    long sum = 0;
    for (int i = from; i < to; i++) {
      sum += targets.get(i).hash();
    }
    touchSink += sum;
  }

  /**
   * Takes one given target that {@link #takeUnchangedInTurn} did not: a known one is marked
   * given in this call and, when it changed, recosted or relabeled; an unknown one gets a new
   * slot.
   *
   * @param t the target
   * @return 1 when it repeats a target given before in this call (a duplicate), else 0
   */
  private int take(Target t) {
    long found = find(t);
    if (found < 0) {
      int s = slots.add(t);
      if (s >= auxes.length) {
        fit();
      }
      auxes[s] = aux(t.labelsHash(), t.cost());
      journal.mark(s, Journal.SEEN);
      recordGiven(s, false);
      return 0;
    }
    int s = (int) found;
    int duplicate = markSeen(s) ? 0 : 1;
    int what = (int) (found >>> 32);
    if (what == FOUND_RECOSTED) {
      slots.recost(s, t);
      auxes[s] = aux(t.labelsHash(), t.cost());
    } else if (what == FOUND_RELABELED) {
      slots.relabel(s, t);
      auxes[s] = aux(t.labelsHash(), t.cost());
    }
    return duplicate;
  }

  /**
   * The slot of a known target equal to {@code t} (same identity) in the low 32 bits, and in the
   * high ones whether it is {@link #FOUND_UNCHANGED}, {@link #FOUND_RECOSTED} or
   * {@link #FOUND_RELABELED}; or -1. Compares the labels hash first; identities only when it
   * differs.
   */
  private long find(Target t) {
    long key = slots.key(t.hash());
    SlotTable table = slots.table();
    int cell = table.find(key);
    if (cell < 0) {
      return -1;
    }
    long labelsHash = t.labelsHash();
    long aux = aux(labelsHash, t.cost());
    long relabel = -1;
    while (cell >= 0) {
      int s = table.slotAt(cell);
      if (auxes[s] == aux) {
        // The labels hash covers job, address and every label: the same target, same labels
        // (and the same cost).
        return (long) FOUND_UNCHANGED << 32 | s;
      }
      if (relabel < 0) {
        Target known = slots.target(s);
        boolean sameLabels = known.labelsHash() == labelsHash && known.hash() == t.hash();
        if (sameLabels || known.equals(t)) {
          relabel = (long) (sameLabels ? FOUND_RECOSTED : FOUND_RELABELED) << 32 | s;
        }
      }
      cell = table.findNext(key, cell);
    }
    return relabel;
  }

  /**
   * Marks known slot {@code s} as given in the current call; returns false when it already was
   * (a duplicate).
   */
  private boolean markSeen(int s) {
    recordGiven(s, true);
    if (journal.has(s, Journal.SEEN)) {
      return false;
    }
    journal.mark(s, Journal.SEEN);
    seenKnown++;
    return true;
  }

  /**
   * Starts taking {@code n} targets: the comparison in turn ({@link #takeUnchangedInTurn})
   * starts at the last call's first target.
   */
  private void beginInput(int n) {
    if (given.length < n) {
      // Both buffers at once: the call after the first would otherwise size the second.
      given = new int[Headroom.withHeadroom(n)];
      if (lastGiven.length < n) {
        lastGiven = Arrays.copyOf(lastGiven, given.length);
      }
    }
    givenCount = 0;
    cursor = 0;
  }

  /**
   * Takes {@code t} when it is, unchanged, the target the last call was given at the place
   * expected next (the same instance, or an equal one with the same labels and cost): marks its
   * slot seen and returns true, having read no table. Otherwise returns false and changes
   * nothing; the caller then takes {@code t} through {@link #find}. A refresh that lists the same
   * targets in the same order, whatever it inserted, removed or changed among them, compares
   * most of them this way: the last call's slots, their hashes and their instances are read in
   * order. The same slot given twice is left to {@link #find}, which tells the duplicate.
   */
  @SuppressWarnings("ReferenceEquality") // the same instance first, then an equal one
  private boolean takeUnchangedInTurn(Target t) {
    if (cursor >= lastGivenCount || !inTurn) {
      return false;
    }
    int s = lastGiven[cursor];
    Target known = slots.target(s);
    if (known != t && (known == null || slots.hash(s) != t.hash()
        || auxes[s] != aux(t.labelsHash(), t.cost()))) {
      return false;
    }
    if (journal.has(s, Journal.SEEN)) {
      return false;
    }
    journal.mark(s, Journal.SEEN);
    seenKnown++;
    cursor++;
    appendGiven(s);
    return true;
  }

  /**
   * Records the slot of the next target given, taken by {@link #find} or as new, and moves the
   * comparison in turn past it: a known target was last given at {@link #positions}, so the
   * next target is expected after it (an insertion, a deletion or a move costs one lookup); a new
   * one is taken to replace the target expected (a replacement in place costs none).
   */
  private void recordGiven(int s, boolean known) {
    if (known && positions[s] < lastGivenCount && lastGiven[positions[s]] == s) {
      cursor = positions[s] + 1;
    } else {
      cursor++;
    }
    appendGiven(s);
  }

  /** Appends slot {@code s} to the current call's input and records its place there. */
  private void appendGiven(int s) {
    positions[s] = givenCount;
    if (givenCount == given.length) {
      // A collection that yields more than its size() said (changed while read).
      given = Arrays.copyOf(given, Headroom.withHeadroom(givenCount + 1));
    }
    given[givenCount++] = s;
  }

  /**
   * Ends the input: lists the known slots it did not give (every known slot was given in the
   * last call, so a pass over that input, in slot order much as it was filled, finds them
   * without walking the order), and makes the input the last call's, for the next.
   */
  private void endInput() {
    unseen.clear();
    int missing = slots.known() - seenKnown;
    if (missing > 0) {
      // In ranges, a call each (Passes).
      for (int i = 0; i < lastGivenCount && unseen.size() < missing; i += UNSEEN_RANGE) {
        collectUnseen(i, Math.min(lastGivenCount, i + UNSEEN_RANGE), missing);
      }
      if (unseen.size() != missing) {
        // Not every known slot was in the last input (never so in practice): walk the order.
        unseen.clear();
        IntList order = slots.order();
        for (int i = 0; i < order.size(); i++) {
          int s = order.get(i);
          if (!journal.has(s, Journal.SEEN)) {
            unseen.add(s);
          }
        }
      }
      slots.sort(unseen);
    }
    int[] g = lastGiven;
    lastGiven = given;
    lastGivenCount = givenCount;
    given = g;
    givenCount = 0;
  }

  /** Lists the slots of {@code lastGiven[from .. to)} not given in this call, up to missing. */
  private void collectUnseen(int from, int to, int missing) {
    int[] last = lastGiven;
    for (int i = from; i < to && unseen.size() < missing; i++) {
      int s = last[i];
      if (!journal.has(s, Journal.SEEN) && !journal.has(s, Journal.UNSEEN)) {
        journal.mark(s, Journal.UNSEEN);
        unseen.add(s);
      }
    }
  }

  /**
   * Forgets the relabels of this call that ended where they began (a duplicate given later in
   * the same call restored the first labels), so the journal lists only real ones.
   */
  private void settleRelabels() {
    IntList relabeled = journal.relabeled();
    List<Target> relabeledFrom = journal.relabeledFrom();
    int w = 0;
    for (int i = 0; i < relabeled.size(); i++) {
      int s = relabeled.get(i);
      Target from = relabeledFrom.get(i);
      if (from.labelsHash() == slots.target(s).labelsHash()) {
        journal.unmark(s, Journal.RELABELED);
        // Keep the instance the snapshot already holds, unless the cost changed meanwhile (the
        // latest instance has the same labels then, and the latest cost).
        if (from.cost() == slots.cost(s)) {
          slots.keepInstance(s, from);
        }
        continue;
      }
      relabeled.set(w, s);
      relabeledFrom.set(w++, from);
    }
    relabeled.truncate(w);
    relabeledFrom.subList(w, relabeledFrom.size()).clear();
  }
}
