package dev.apportion.allocation.server;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.AllocationListener;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * The last {@value #CAPACITY} changes that did something (moved a target, changed the collectors
 * or the number of targets), for the operator's page: when, why (collectors joined, left or
 * changed; targets changed; costs; a config reload) and how much moved. An allocator listener: it
 * runs on the writer's thread under the allocator's lock, so it does only counting and, for a
 * collector change, one merge of the two sorted collector sets. Thread-safe; {@link #entries()}
 * copies at most {@value #CAPACITY} entries and never blocks on the allocator.
 */
final class ChangeLog implements AllocationListener {
  /** How many entries are kept, newest first. */
  static final int CAPACITY = 50;

  /** The most collector names an entry keeps per list (joined, left, changed). */
  static final int NAMES = 10;

  /** Why an allocation changed. */
  enum Why {
    /** The collector set changed (joined, left, or a node, zone, capacity or label changed). */
    COLLECTORS,
    /** The target sources' targets changed. */
    TARGETS,
    /** The cost feed re-weighed the same targets. */
    COSTS,
    /** The config was reloaded (a new allocator took over). */
    RELOAD
  }

  /**
   * One change.
   *
   * @param atMillis when, epoch milliseconds
   * @param why why
   * @param moved how many targets changed collector (placed, dropped or reassigned); with
   *     replicas, each replica that changed counts
   * @param placed how many were placed from nowhere (new or formerly unassigned)
   * @param dropped how many left every collector (removed or now unassigned)
   * @param reassigned how many known targets went from one collector to another or to none
   * @param targetsBefore the number of targets before
   * @param targetsAfter the number after
   * @param collectorsBefore the number of collectors before
   * @param collectorsAfter the number after
   * @param joined collectors that joined, at most {@value #NAMES}
   * @param joinedCount how many joined
   * @param left collectors that left, at most {@value #NAMES}
   * @param leftCount how many left
   * @param changed collectors whose node, zone, capacity or labels changed, at most {@value #NAMES}
   * @param changedCount how many changed
   */
  record Entry(
      long atMillis,
      Why why,
      int moved,
      int placed,
      int dropped,
      int reassigned,
      int targetsBefore,
      int targetsAfter,
      int collectorsBefore,
      int collectorsAfter,
      List<String> joined,
      int joinedCount,
      List<String> left,
      int leftCount,
      List<String> changed,
      int changedCount) {}

  private final LongSupplier clock;
  private final Object lock = new Object();
  /** Newest first. */
  private final Deque<Entry> entries = new ArrayDeque<>();
  /** Set around a cost feed's re-application, on its thread: the listener runs on that thread. */
  private static final ThreadLocal<Why> CAUSE = new ThreadLocal<>();

  ChangeLog() {
    this(System::currentTimeMillis);
  }

  ChangeLog(LongSupplier clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * Runs {@code apply} (a target feed's {@code reapply}) so that the change it makes is recorded
   * as a cost change. Blocks as long as {@code apply} does.
   */
  void asCosts(Runnable apply) {
    CAUSE.set(Why.COSTS);
    try {
      apply.run();
    } finally {
      CAUSE.remove();
    }
  }

  @Override
  public void onChange(AllocationChange change) {
    Allocation before = change.before();
    Allocation after = change.after();
    int placed = 0;
    int dropped = 0;
    for (Move m : change.moves()) {
      if (m.from().isEmpty()) {
        placed++;
      } else if (m.to().isEmpty()) {
        dropped++;
      }
    }
    int targetsBefore = before.targets().size();
    int targetsAfter = after.targets().size();
    Why why;
    List<String> joined = new ArrayList<>();
    List<String> left = new ArrayList<>();
    List<String> changed = new ArrayList<>();
    int[] counts = new int[3];
    if (change.cause() == AllocationChange.Cause.SET_COLLECTORS) {
      why = Why.COLLECTORS;
      diff(before.collectors(), after.collectors(), joined, left, changed, counts);
    } else {
      Why marked = CAUSE.get();
      why = marked != null ? marked : Why.TARGETS;
      if (change.moves().isEmpty() && targetsBefore == targetsAfter) {
        return; // nothing an operator would look for: the same targets, nothing moved
      }
    }
    if (why == Why.COLLECTORS && change.moves().isEmpty() && counts[0] + counts[1] + counts[2] == 0) {
      return;
    }
    add(
        new Entry(
            clock.getAsLong(),
            why,
            change.moves().size(),
            placed,
            dropped,
            change.reassigned(),
            targetsBefore,
            targetsAfter,
            before.collectors().size(),
            after.collectors().size(),
            List.copyOf(joined),
            counts[0],
            List.copyOf(left),
            counts[1],
            List.copyOf(changed),
            counts[2]));
  }

  /**
   * Records a reload: a new allocator ({@code after}, this log's) took over from {@code before}
   * ({@code previous}'s). The entries this log made while the new allocator was filled are
   * dropped (they describe its start from nothing, not the fleet); one entry compares the two
   * snapshots instead, and {@code previous}'s entries follow it. Costs one lookup per target.
   */
  void reloadedFrom(ChangeLog previous, Allocation before, Allocation after) {
    List<String> joined = new ArrayList<>();
    List<String> left = new ArrayList<>();
    List<String> changed = new ArrayList<>();
    int[] counts = new int[3];
    diff(before.collectors(), after.collectors(), joined, left, changed, counts);
    // Replica by replica (rank by rank), as the allocator's own moves count them.
    int placed = 0;
    int reassigned = 0;
    for (Target t : after.targets()) {
      List<String> now = after.ownersOf(t);
      List<String> was = before.ownersOf(t);
      for (int r = 0; r < now.size(); r++) {
        if (r >= was.size()) {
          placed++;
        } else if (!now.get(r).equals(was.get(r))) {
          reassigned++;
        }
      }
    }
    int dropped = 0;
    for (Target t : before.targets()) {
      dropped += Math.max(0, before.ownersOf(t).size() - after.ownersOf(t).size());
    }
    Entry reload =
        new Entry(clock.getAsLong(), Why.RELOAD, placed + reassigned + dropped, placed, dropped, reassigned,
            before.targets().size(), after.targets().size(), before.collectors().size(), after.collectors().size(),
            List.copyOf(joined), counts[0], List.copyOf(left), counts[1], List.copyOf(changed), counts[2]);
    List<Entry> old = previous.entries();
    synchronized (lock) {
      entries.clear();
      entries.add(reload);
      for (Entry e : old) {
        if (entries.size() >= CAPACITY) {
          break;
        }
        entries.addLast(e);
      }
    }
  }

  private void add(Entry e) {
    synchronized (lock) {
      entries.addFirst(e);
      if (entries.size() > CAPACITY) {
        entries.removeLast();
      }
    }
  }

  /**
   * The entries, newest first. Copies; never blocks on the allocator.
   *
   * @return an immutable list of at most {@value #CAPACITY}
   */
  List<Entry> entries() {
    synchronized (lock) {
      return List.copyOf(entries);
    }
  }

  /**
   * Joined, left and changed collectors of two name-ordered sets, at most {@value #NAMES} names
   * each, with the full counts in {@code counts}. One pass over each set's names.
   */
  static void diff(
      Iterable<Collector> before,
      Iterable<Collector> after,
      List<String> joined,
      List<String> left,
      List<String> changed,
      int[] counts) {
    Map<String, Collector> was = byName(before);
    Map<String, Collector> now = byName(after);
    Iterator<Map.Entry<String, Collector>> i = was.entrySet().iterator();
    Iterator<Map.Entry<String, Collector>> j = now.entrySet().iterator();
    Map.Entry<String, Collector> x = next(i);
    Map.Entry<String, Collector> y = next(j);
    while (x != null || y != null) {
      int c = x == null ? 1 : y == null ? -1 : x.getKey().compareTo(y.getKey());
      if (c < 0) {
        note(left, counts, 1, x.getKey());
        x = next(i);
      } else if (c > 0) {
        note(joined, counts, 0, y.getKey());
        y = next(j);
      } else {
        if (!x.getValue().equals(y.getValue())) {
          note(changed, counts, 2, y.getKey());
        }
        x = next(i);
        y = next(j);
      }
    }
  }

  private static Map<String, Collector> byName(Iterable<Collector> collectors) {
    Map<String, Collector> m = new TreeMap<>();
    for (Collector c : collectors) {
      m.put(c.name(), c);
    }
    return m;
  }

  private static <T> T next(Iterator<T> it) {
    return it.hasNext() ? it.next() : null;
  }

  private static void note(List<String> names, int[] counts, int which, String name) {
    counts[which]++;
    if (names.size() < NAMES) {
      names.add(name);
    }
  }
}
