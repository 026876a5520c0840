package dev.apportion.allocation.internal.partition;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.CollectorLimits;
import dev.apportion.allocation.internal.engine.CollectorSetChange;
import dev.apportion.allocation.internal.engine.Continuing;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import dev.apportion.allocation.internal.engine.Placer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * One group of the partitioned layer: a partition (the collectors of one key value and the
 * targets with it) or the cluster-wide group. It owns an instance of the wrapped strategy's placer
 * while it has members, and is that placer's {@link Assignment}: a view of the layer's view that
 * holds only the group's targets and shows only the group's members as owners. The {@link
 * PartitionedPlacer} decides which targets and members are in it; the group hands its placer the
 * difference as the ordinary {@link Placer} calls. Writer-thread only.
 */
final class PartitionGroup implements Assignment {
  final int id;
  final String key;
  Placer placer;
  Members members = Members.EMPTY;
  /** By member id: whether in {@link #members}. */
  boolean[] isMember = new boolean[0];
  IntList slots = new IntList();
  IntList next = new IntList();
  final IntList departed = new IntList();
  /** The slots new to this group in this reconcile, in identity-hash order; unassigned. */
  final IntList arrived = new IntList();
  /**
   * The slots of this group unassigned when the reconcile handed it over, in its list's order:
   * what it had no owner for, what arrived and what lost an owner outside the group.
   */
  IntList unplaced = new IntList();
  Assignment parent;

  private final SlotGroups bySlot;
  private final Supplier<Placer> factory;
  private final String strategy;
  /** The partitioned layer's log. */
  private final Logger log;

  PartitionGroup(int id, String key, SlotGroups bySlot, Supplier<Placer> factory,
      String strategy, Logger log) {
    this.id = id;
    this.key = key;
    this.bySlot = bySlot;
    this.factory = factory;
    this.strategy = strategy;
    this.log = log;
  }

  void costsChanged(IntList recosted, Assignment view) {
    if (recosted != null && placer != null && !members.isEmpty()) {
      parent = view;
      placer.costsChanged(recosted, members, this);
    }
  }

  /**
   * The partitioned layer's hand-over of a change of targets alone: this group's arrivals and
   * departures, if any.
   */
  void targetsChanged(Assignment view) {
    if (placer != null && !members.isEmpty() && (!unplaced.isEmpty() || !departed.isEmpty())) {
      parent = view;
      placer.targetsChanged(unplaced, departed, members, this);
    }
  }

  void swap() {
    IntList t = slots;
    slots = next;
    next = t;
  }

  // Identity, on purpose: a Members is immutable, and the engine's own pair says its change.
  @SuppressWarnings("ReferenceEquality")
  void apply(List<Member> list, Assignment view, CollectorSetChange change) {
    parent = view;
    if (list.isEmpty()) {
      placer = null;
      members(Members.EMPTY);
      return;
    }
    if (placer == null) {
      placer = factory.get();
      members(Members.EMPTY);
    }
    if (same(members, list)) {
      if (!unplaced.isEmpty() || !departed.isEmpty()) {
        if (unplaced.size() != arrived.size()) {
          // Unassigned targets that did not just arrive (none while the members stay, as
          // far as this class knows): the wrapped placer is handed them as new, so it must
          // not count them on top of its own state.
          if (placer instanceof Continuing c) {
            c.viewChangedUnsaid();
          }
        }
        placer.targetsChanged(unplaced, departed, members, this);
      }
      return;
    }
    Members before = members;
    Members after = list instanceof Members given ? given
        : new Members(list.toArray(new Member[0]));
    if (change != null && before == change.before() && after == change.after()) {
      // The group has every collector, before and now: the change is the engine's own, and
      // says what came, went and changed without comparing the two sets name by name.
      if (log.isTraceEnabled()) {
        log.trace("[{}] a group with every collector took the engine's change as it is",
            strategy);
      }
      members(after);
      placer.collectorsChanged(new CollectorSetChange(before, after, change.added(),
          change.removed(), change.renoded(), change.reweighted(), unplaced, arrived,
          departed), this);
      return;
    }
    Member[] beforeById = byId(before);
    Member[] afterById = byId(after);
    List<Member> added = new ArrayList<>();
    for (Member m : after.array()) {
      if (!contains(beforeById, m)) {
        added.add(m);
      }
    }
    List<Member> removed = new ArrayList<>();
    for (Member m : before.array()) {
      if (!contains(afterById, m)) {
        removed.add(m);
      }
    }
    List<Member> renoded = new ArrayList<>();
    List<Member> reweighted = new ArrayList<>();
    if (change != null) {
      for (Member m : change.renoded()) {
        if (contains(afterById, m)) {
          renoded.add(m);
        }
      }
      for (Member m : change.reweighted()) {
        if (contains(afterById, m)) {
          reweighted.add(m);
        }
      }
    }
    members(after);
    placer.collectorsChanged(new CollectorSetChange(before, after, added, removed, renoded,
        reweighted, unplaced, arrived, departed), this);
  }

  private void members(Members ms) {
    members = ms;
    isMember = new boolean[ms.maxId() + 1];
    for (int id : ms.ids()) {
      isMember[id] = true;
    }
  }

  /**
   * The members of a set by id (ids are unique among the members of one set): membership by
   * identity without comparing names, O(1) a member.
   */
  private Member[] byId(Members ms) {
    Member[] out = new Member[ms.maxId() + 1];
    for (Member m : ms.array()) {
      out[m.id()] = m;
    }
    return out;
  }

  /** Whether this very member is in the set {@code byId} lists. */
  @SuppressWarnings("ReferenceEquality") // the same member, not one of the same name
  private boolean contains(Member[] byId, Member m) {
    int id = m.id();
    return id < byId.length && byId[id] == m;
  }

  /**
   * The owner, when it is one of this group's members. A target the per-collector limit
   * ({@link CollectorLimits}) moved to a collector of another partition reads as unassigned
   * here until the next reconcile takes it back: the wrapped placer never sees a foreign member.
   */
  @Override
  public Member ownerOf(int slot) {
    if (bySlot.group[slot] != id) {
      return null;
    }
    Member o = parent.ownerOf(slot);
    return o != null && o.id() < isMember.length && isMember[o.id()] ? o : null;
  }

  @Override
  public void place(int slot, Member member) {
    if (bySlot.group[slot] != id) {
      throw new IllegalStateException("partition " + (key == null ? "(cluster-wide)" : key)
          + " placing a target of another partition: " + parent.target(slot));
    }
    parent.place(slot, member);
  }

  @Override
  public Target target(int slot) {
    return parent.target(slot);
  }

  @Override
  public long hash(int slot) {
    return parent.hash(slot);
  }

  @Override
  public long cost(int slot) {
    return parent.cost(slot);
  }

  @Override
  public int job(int slot) {
    return parent.job(slot);
  }

  @Override
  public int size() {
    return slots.size();
  }

  @Override
  public int slotAt(int i) {
    return slots.get(i);
  }

  /**
   * Whether {@code b} is the group's member set {@code a}, capacities included: a member keeps
   * its object when only its capacity changes, and {@code a} holds the capacities it was made
   * with (without this a capacity change inside a partition never reached its placer).
   */
  @SuppressWarnings("ReferenceEquality") // the same member objects
  private static boolean same(Members a, List<Member> b) {
    if (a.size() != b.size()) {
      return false;
    }
    double[] capacities = a.capacities();
    for (int i = 0; i < b.size(); i++) {
      if (a.get(i) != b.get(i) || capacities[i] != b.get(i).capacity()) {
        return false;
      }
    }
    return true;
  }
}
