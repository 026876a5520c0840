package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Target;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The engine's mutable record of every target and its owner, and of what one operation changed.
 * Writer-thread only. Readers never see it: the engine turns what changed into a new immutable
 * {@link Snapshot}.
 */
final class Ledger implements Assignment {
  /** A known target: its latest instance (labels) and its owner. */
  static final class Slot {
    Target instance;
    Member owner;

    Slot(Target instance) {
      this.instance = instance;
    }
  }

  private final Map<Target, Slot> slots = new HashMap<>();
  private List<Target> sorted = List.of();

  /** Per operation: each touched target's owner before the operation (null = none/new). */
  private Map<Target, Member> before = new HashMap<>();
  private Map<Target, Slot> removed = new HashMap<>();
  private Set<Target> relabeled = new HashSet<>();
  private List<Target> removedSorted = List.of();

  Slot slot(Target t) {
    return slots.get(t);
  }

  int known() {
    return slots.size();
  }

  @Override
  public Member ownerOf(Target target) {
    Slot s = slots.get(target);
    return s == null ? null : s.owner;
  }

  @Override
  public void place(Target target, Member member) {
    Slot s = slots.get(target);
    if (s == null) {
      throw new IllegalStateException("placing an unknown target: " + target);
    }
    if (s.owner == member) {
      return;
    }
    if (!before.containsKey(target)) {
      before.put(target, s.owner);
    }
    if (s.owner != null) {
      s.owner.remove(target);
    }
    s.owner = member;
    if (member != null) {
      // The slot's instance, not the caller's: a placer may hold an older, equal instance.
      member.add(s.instance);
    }
  }

  @Override
  public List<Target> targetsOf(Member member) {
    return Arrays.asList(member.targets.toArray(new Target[0]));
  }

  @Override
  public List<Target> sortedTargets() {
    return sorted;
  }

  /** Adds targets (unassigned) and drops others; keeps {@link #sortedTargets()} in order. */
  void addAndRemove(List<Target> addedSorted, List<Target> removedSorted) {
    for (Target t : removedSorted) {
      Slot s = slots.remove(t);
      if (!before.containsKey(t)) {
        before.put(t, s.owner);
      }
      if (s.owner != null) {
        s.owner.remove(t);
      }
      s.owner = null;
      removed.put(t, s);
    }
    for (Target t : addedSorted) {
      slots.put(t, new Slot(t));
      if (!before.containsKey(t)) {
        before.put(t, null);
      }
    }
    if (!addedSorted.isEmpty() || !removedSorted.isEmpty()) {
      sorted = merge(sorted, addedSorted, removedSorted);
    }
    this.removedSorted = removedSorted;
  }

  private static List<Target> merge(List<Target> old, List<Target> added, List<Target> gone) {
    Target[] out = new Target[old.size() - gone.size() + added.size()];
    int w = 0;
    int a = 0;
    int g = 0;
    for (Target t : old) {
      while (g < gone.size() && TargetOrder.compare(gone.get(g), t) < 0) {
        g++;
      }
      if (g < gone.size() && gone.get(g).equals(t)) {
        g++;
        continue;
      }
      while (a < added.size() && TargetOrder.compare(added.get(a), t) < 0) {
        out[w++] = added.get(a++);
      }
      out[w++] = t;
    }
    while (a < added.size()) {
      out[w++] = added.get(a++);
    }
    return Arrays.asList(out);
  }

  /** Carries new labels for a known target. */
  void relabel(Target newInstance) {
    Slot s = slots.get(newInstance);
    s.instance = newInstance;
    // The ordered list and the owner's set carry the latest labels; per-node keeps its own node
    // index, which nodesChanged updates.
    int i = Collections.binarySearch(sorted, newInstance, TargetOrder.HASH);
    sorted.set(i, newInstance);
    if (s.owner != null) {
      s.owner.targets.remove(newInstance);
      s.owner.targets.add(newInstance);
    }
    relabeled.add(newInstance);
    if (!before.containsKey(newInstance)) {
      before.put(newInstance, s.owner);
    }
  }

  /**
   * What the current operation touched (placed, dropped, added or relabeled), with each target's
   * owner before the operation.
   */
  Map<Target, Member> previousOwners() {
    return before;
  }

  Map<Target, Slot> removedSlots() {
    return removed;
  }

  Set<Target> relabeled() {
    return relabeled;
  }

  /** The targets the current operation dropped, in identity-hash order. */
  List<Target> removedSorted() {
    return removedSorted;
  }

  /** Forgets what the current operation touched, at its end. */
  void endOperation() {
    // clear() costs the table's capacity, which one full placement grows to every target; a
    // small change after it should not pay for that, so large tables are dropped instead.
    before = reset(before);
    removed = reset(removed);
    relabeled = relabeled.size() > SMALL ? new HashSet<>() : clear(relabeled);
    removedSorted = List.of();
  }

  private static final int SMALL = 256;

  private static <K, V> Map<K, V> reset(Map<K, V> m) {
    if (m.size() > SMALL) {
      return new HashMap<>();
    }
    m.clear();
    return m;
  }

  private static <T> Set<T> clear(Set<T> s) {
    s.clear();
    return s;
  }
}
