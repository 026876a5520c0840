package dev.apportion.allocation.server;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Make-before-break: what each collector is served while targets move. The placement is not
 * touched; when a target moves from A to B, B is served it at once (it is B's in the placement),
 * and A keeps being served it too until B has fetched an answer that holds it and the {@linkplain
 * HandoverConfig hold} has passed since that fetch, which covers B's pick-up (for Prometheus: its
 * update throttles and its first scrape). A is served it no longer once it is gone: not a collector
 * any more and silent for three of its own refresh intervals. A target that leaves the targets is
 * dropped at once.
 *
 * <p>With {@linkplain Allocation#replicas() replicas} a target has several owners, and the
 * bookkeeping is by (target, collector), never by rank: the collectors that lost the target (were
 * among its owners, are not now) are held until every collector that gained it has picked it up.
 * A collector that keeps the target under another rank (primary before, second replica now) lost
 * nothing and is neither held nor waited for, and nobody is ever served a target twice. A target
 * that loses owners and gains none (fewer collectors than replicas, or fewer replicas after a
 * reload) releases its holders at once when it keeps an owner, which scrapes it already; with no
 * owner left they are held until gone, as with one replica.
 *
 * <p>The served view ({@link #served}) is the snapshot plus the targets held for their previous
 * owners: a superset of the placement, as an {@link Allocation} whose {@code targetsFor} and {@code
 * jobsFor} add the held targets (after the owned ones, in identity-hash order) and whose every other
 * method is the snapshot's. A move that goes on before it was picked up (A to B to C) keeps A and B
 * until C has picked it up; a target that moves back to a holder stops being held for it.
 *
 * <p>Cost: a new snapshot is compared with the last one served, one owner lookup per target, on the
 * first request that sees it; between snapshots a request costs one volatile read, and while
 * targets are held, a re-check of the holds at most every {@value #CHECK_MILLIS} ms (proportional
 * to the held targets). Thread-safe; requests never wait for each other except for that re-check.
 */
final class Handover {
  /** How often the holds are re-checked while there are some. */
  static final long CHECK_MILLIS = 250;

  /** Fetches closer together than this are one refresh (a client that asks per job). */
  private static final long SAME_REFRESH_NANOS = Duration.ofMillis(500).toNanos();

  /** How long a collector that never fetched, or whose refresh is unknown, counts as live. */
  private static final long MIN_GONE_NANOS = Duration.ofSeconds(2).toNanos();

  private static final long NONE = Long.MIN_VALUE;

  private final LongSupplier nanoTime;
  /** The allocator's current snapshot, read under the lock: never an older one than last time. */
  private final java.util.function.Supplier<Allocation> snapshots;
  private final long fixedHold;
  private final long pickup;
  private final long defaultInterval;
  private final Map<String, Long> intervals;
  private final Object lock = new Object();

  @GuardedBy("lock")
  private Allocation last;

  @GuardedBy("lock")
  private long generation;

  @GuardedBy("lock")
  private Map<Target, Hold> holds = new HashMap<>();

  private volatile Served served;
  private volatile long nextCheck;

  /** Owner changes seen (a target moving from one collector to another), since the first start. */
  private final java.util.concurrent.atomic.AtomicLong moves = new java.util.concurrent.atomic.AtomicLong();

  /** Each collector's last fetch and its refresh interval as seen from its fetches. */
  private final Map<String, Fetch> fetches = new ConcurrentHashMap<>();

  private record Fetch(long at, long gap) {}

  /**
   * A moved target: who owns it now, who lost it and is still served it, and when each collector
   * that gained it picked it up.
   */
  private static final class Hold {
    Target target;
    List<String> owners = List.of();
    /** Former owners served it until every gainer has picked it up; never one of the owners. */
    final Set<String> holders = new TreeSet<>();
    /** Owners that gained it while it was handed over, each with its pick-up; a subset of owners. */
    final SortedMap<String, Pickup> gainers = new TreeMap<>();

    Hold(Target target) {
      this.target = target;
    }

    /**
     * When the holders are released: once every gainer's hold has passed; at once with no gainer
     * and an owner left (the owners scrape it already); never with no owner (until gone).
     */
    long releaseAt(long now) {
      if (gainers.isEmpty()) {
        return owners.isEmpty() ? Long.MAX_VALUE : now;
      }
      long at = Long.MIN_VALUE;
      for (Pickup p : gainers.values()) {
        if (p.releaseAt == Long.MAX_VALUE) {
          return Long.MAX_VALUE;
        }
        at = at == Long.MIN_VALUE || p.releaseAt - at > 0 ? p.releaseAt : at;
      }
      return at;
    }
  }

  /** One gainer's pick-up: the generation it gained the target in, its fetch, its release. */
  private static final class Pickup {
    final long generation;
    long fetchedAt = NONE;
    long releaseAt = Long.MAX_VALUE;

    Pickup(long generation) {
      this.generation = generation;
    }
  }

  /**
   * A handover with these settings.
   *
   * @param config the settings; {@code enabled} is the caller's business
   * @param jobIntervals each job's scrape interval, where its scrape config names one
   * @param nanoTime the clock
   * @param snapshots the allocator's snapshots ({@code allocator::snapshot})
   */
  Handover(
      HandoverConfig config,
      Map<String, Duration> jobIntervals,
      LongSupplier nanoTime,
      java.util.function.Supplier<Allocation> snapshots) {
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    this.snapshots = Objects.requireNonNull(snapshots, "snapshots");
    this.fixedHold = config.hold() == null ? -1 : config.hold().toNanos();
    this.pickup = config.pickup().toNanos();
    this.defaultInterval = config.scrapeInterval().toNanos();
    Map<String, Long> m = new HashMap<>();
    jobIntervals.forEach((job, d) -> m.put(job, d.toNanos()));
    this.intervals = Map.copyOf(m);
  }

  /**
   * Each job's {@code scrape_interval} from the served scrape configs; a value that is not a
   * duration is left out (the default applies).
   */
  static Map<String, Duration> intervalsOf(Map<String, Map<String, Object>> scrapeConfigs) {
    Map<String, Duration> out = new TreeMap<>();
    scrapeConfigs.forEach(
        (job, settings) -> {
          Object v = settings.get("scrape_interval");
          if (v instanceof String s) {
            try {
              out.put(job, ConfigNodes.duration(s, "scrape_interval"));
            } catch (ConfigException e) {
              // left to the default
            }
          }
        });
    return out;
  }

  /**
   * Continues from {@code previous}'s state (the last snapshot served, the holds, the fetches): a
   * reloaded service hands over what the old one was serving. Call before serving. Blocks briefly.
   */
  void adopt(Handover previous) {
    Allocation lastBefore;
    long generationBefore;
    Map<Target, Hold> holdsBefore;
    synchronized (previous.lock) {
      lastBefore = previous.last;
      generationBefore = previous.generation;
      holdsBefore = new HashMap<>(previous.holds);
    }
    synchronized (lock) {
      last = lastBefore;
      generation = generationBefore;
      holds = holdsBefore;
      served = null;
    }
    fetches.putAll(previous.fetches);
    moves.set(previous.moves.get());
  }

  /** Owner changes seen so far (a reloaded handover continues the count). Never blocks. */
  long moves() {
    return moves.get();
  }

  /**
   * What to serve now: the allocator's snapshot plus the held targets. Never blocks on the
   * allocator's writers; compares with the previous snapshot on the first call that sees a new
   * one. The snapshot is read again under the lock, so a caller that read {@code seen} a while ago
   * never makes the handover go back to an older snapshot.
   *
   * @param seen the snapshot the caller read; the view is of it, or of a newer one
   * @return the view to render answers from
   */
  Allocation served(Allocation seen) {
    Served s = served;
    long now = nanoTime.getAsLong();
    if (s != null && s.snapshot == seen && (s.held.isEmpty() || now - nextCheck < 0)) {
      return s;
    }
    synchronized (lock) {
      Allocation snapshot = snapshots.get();
      s = served;
      if (s != null && s.snapshot == snapshot && (s.held.isEmpty() || now - nextCheck < 0)) {
        return s;
      }
      if (snapshot != last) {
        compare(last, snapshot);
        last = snapshot;
      }
      prune(snapshot, now);
      s = index(snapshot);
      served = s;
      long check = now + Duration.ofMillis(CHECK_MILLIS).toNanos();
      for (Hold h : holds.values()) {
        long release = h.releaseAt(now);
        if (release - check < 0) {
          check = release; // a release is not left to wait for the next re-check
        }
      }
      nextCheck = check;
      return s;
    }
  }

  @GuardedBy("lock")
  private void compare(Allocation before, Allocation now) {
    generation++;
    Set<Target> targets = now.targets();
    holds.keySet().removeIf(t -> !targets.contains(t));
    if (before == null) {
      return;
    }
    for (Target t : targets) {
      List<String> owners = now.ownersOf(t);
      Hold h = holds.get(t);
      List<String> was = h != null ? h.owners : before.ownersOf(t);
      if (h != null) {
        h.target = t;
      }
      if (sameNames(was, owners)) {
        if (h != null) {
          h.owners = owners; // the same collectors, perhaps under other ranks: nothing to hand over
        }
        continue;
      }
      List<String> lost = new ArrayList<>(was);
      lost.removeAll(owners);
      if (h == null) {
        if (lost.isEmpty()) {
          continue; // a new target, or new replicas: nobody to hand over from
        }
        h = new Hold(t);
        holds.put(t, h);
      }
      List<String> gained = new ArrayList<>(owners);
      gained.removeAll(was);
      moves.addAndGet(Math.min(lost.size(), gained.size()));
      h.holders.addAll(lost);
      h.holders.removeAll(owners);
      h.gainers.keySet().retainAll(owners);
      for (String g : gained) {
        h.gainers.put(g, new Pickup(generation));
      }
      h.owners = owners;
    }
  }

  /** Whether two short lists of distinct names hold the same names, in any order. */
  private static boolean sameNames(List<String> a, List<String> b) {
    return a.size() == b.size() && a.containsAll(b);
  }

  @GuardedBy("lock")
  private void prune(Allocation snapshot, long now) {
    if (holds.isEmpty()) {
      return;
    }
    Set<String> members = new HashSet<>();
    for (Collector c : snapshot.collectors()) {
      members.add(c.name());
    }
    for (Iterator<Hold> it = holds.values().iterator(); it.hasNext(); ) {
      Hold h = it.next();
      if (now - h.releaseAt(now) >= 0) {
        it.remove();
        continue;
      }
      h.holders.removeIf(name -> !members.contains(name) && gone(name, now));
      if (h.holders.isEmpty()) {
        it.remove();
      }
    }
  }

  /** Silent for three of its refresh intervals (at least two seconds), or never heard. */
  private boolean gone(String collector, long now) {
    Fetch f = fetches.get(collector);
    if (f == null) {
      return true;
    }
    long window = Math.max(MIN_GONE_NANOS, 3 * f.gap());
    return now - f.at() > window;
  }

  @GuardedBy("lock")
  private Served index(Allocation snapshot) {
    Map<String, SortedMap<String, List<Target>>> held = new HashMap<>();
    Set<String> pending = new HashSet<>();
    for (Hold h : holds.values()) {
      for (String holder : h.holders) {
        held.computeIfAbsent(holder, k -> new TreeMap<>())
            .computeIfAbsent(h.target.job(), k -> new ArrayList<>())
            .add(h.target);
      }
      h.gainers.forEach(
          (gainer, p) -> {
            if (p.fetchedAt == NONE) {
              pending.add(gainer);
            }
          });
    }
    Comparator<Target> order =
        Comparator.comparingLong(Target::hash).thenComparing(Target::toString);
    held.values().forEach(jobs -> jobs.values().forEach(list -> list.sort(order)));
    return new Served(snapshot, generation, held, pending);
  }

  /**
   * Records that {@code collector} was just sent an answer rendered from {@code view}: its held
   * targets' new owner has now fetched them, which starts their hold. Call after the answer was
   * rendered. Never blocks on the allocator.
   *
   * @param collector the collector that asked
   * @param job the job asked for, or null for an answer with every job
   * @param view what {@link #served} returned for the answer
   */
  void fetched(String collector, String job, Allocation view) {
    if (!(view instanceof Served s) || !s.knows(collector)) {
      return; // names from requests that are neither owners nor holders are not remembered
    }
    long now = nanoTime.getAsLong();
    fetches.compute(
        collector,
        (k, f) -> {
          if (f == null) {
            return new Fetch(now, 0);
          }
          long gap = now - f.at();
          // fetches closer together are one refresh: the last one seen, the refresh kept
          return new Fetch(now, gap < SAME_REFRESH_NANOS ? f.gap() : gap);
        });
    if (!s.pending.contains(collector)) {
      return;
    }
    long refresh = fetches.get(collector).gap();
    synchronized (lock) {
      for (Hold h : holds.values()) {
        Pickup p = h.gainers.get(collector);
        if (p != null
            && p.fetchedAt == NONE
            && p.generation <= s.generation
            && (job == null || job.equals(h.target.job()))) {
          p.fetchedAt = now;
          p.releaseAt = now + holdNanos(h.target.job(), refresh);
          long release = h.releaseAt(now);
          if (release - nextCheck < 0) {
            nextCheck = release;
          }
        }
      }
    }
  }

  /** The hold of a target of {@code job} whose new owner refreshes every {@code refresh}. */
  long holdNanos(String job, long refresh) {
    if (fixedHold >= 0) {
      return fixedHold;
    }
    return pickup + intervals.getOrDefault(job, defaultInterval) + refresh;
  }

  /**
   * Whether {@code collector} owns nothing and is held nothing, whatever the replica: what it
   * scraped is now scraped by others who have had time to pick it up. Blocks only for the re-check
   * of the holds.
   *
   * @param collector the name
   * @param snapshot the allocator's current snapshot
   * @return true when it can stop without a gap
   */
  boolean drained(String collector, Allocation snapshot) {
    Served s = (Served) served(snapshot);
    return s.snapshot.targetCount(collector) == 0 && !s.held.containsKey(collector);
  }

  /** How many (target, previous owner) pairs are held now, every replica counted. Never blocks. */
  int heldCount() {
    Served s = served;
    if (s == null) {
      return 0;
    }
    int n = 0;
    for (SortedMap<String, List<Target>> jobs : s.held.values()) {
      for (List<Target> l : jobs.values()) {
        n += l.size();
      }
    }
    return n;
  }

  /** The snapshot plus the held targets; every other method is the snapshot's. */
  static final class Served implements Allocation {
    final Allocation snapshot;
    final long generation;
    final Map<String, SortedMap<String, List<Target>>> held;
    final Set<String> pending;

    Served(
        Allocation snapshot,
        long generation,
        Map<String, SortedMap<String, List<Target>>> held,
        Set<String> pending) {
      this.snapshot = snapshot;
      this.generation = generation;
      this.held = held;
      this.pending = pending;
    }

    boolean knows(String collector) {
      return held.containsKey(collector)
          || pending.contains(collector)
          || snapshot.targetCount(collector) > 0;
    }

    /** The held targets of {@code collector}, by job; empty for none. */
    SortedMap<String, List<Target>> heldFor(String collector) {
      return held.getOrDefault(collector, Collections.emptySortedMap());
    }

    @Override
    public Set<Collector> collectors() {
      return snapshot.collectors();
    }

    @Override
    public Set<Target> targets() {
      return snapshot.targets();
    }

    @Override
    public Optional<String> collectorOf(Target target) {
      return snapshot.collectorOf(target);
    }

    @Override
    public List<String> ownersOf(Target target) {
      return snapshot.ownersOf(target);
    }

    @Override
    public int replicas() {
      return snapshot.replicas();
    }

    @Override
    public Set<Target> unassigned() {
      return snapshot.unassigned();
    }

    @Override
    public List<Target> targetsFor(String collector, String job) {
      List<Target> own = snapshot.targetsFor(collector, job);
      List<Target> extra = heldFor(collector).get(job);
      if (extra == null) {
        return own;
      }
      List<Target> all = new ArrayList<>(own.size() + extra.size());
      all.addAll(own);
      all.addAll(extra);
      return Collections.unmodifiableList(all);
    }

    @Override
    public Set<String> jobsFor(String collector) {
      SortedMap<String, List<Target>> extra = heldFor(collector);
      if (extra.isEmpty()) {
        return snapshot.jobsFor(collector);
      }
      Set<String> all = new TreeSet<>(snapshot.jobsFor(collector));
      all.addAll(extra.keySet());
      return Collections.unmodifiableSet(all);
    }

    @Override
    public int targetCount(String collector) {
      int n = snapshot.targetCount(collector);
      for (List<Target> l : heldFor(collector).values()) {
        n += l.size();
      }
      return n;
    }

    @Override
    public int outsidePartition() {
      return snapshot.outsidePartition();
    }

    @Override
    public long costOf(String collector) {
      return snapshot.costOf(collector);
    }
  }
}
