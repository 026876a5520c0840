package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The make-before-break handover with several owners per target: bookkept by (target, collector),
 * so a replica that moves is handed over as one target is, and a collector that keeps a target
 * under another rank is neither held nor served it twice.
 */
class HandoverReplicasTest {
  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private static final Duration HOLD = Duration.ofSeconds(5);

  private Handover handover(java.util.function.Supplier<Allocation> snapshots) {
    return new Handover(
        new HandoverConfig(true, HOLD, HandoverConfig.DEFAULT_PICKUP, Duration.ofSeconds(5)),
        Map.of(),
        now::get,
        snapshots);
  }

  private void advance(Duration d) {
    now.addAndGet(d.toNanos());
  }

  /** What {@code collector} is served now, as a list (a target served twice shows twice). */
  private static List<Target> served(Allocation view, String collector) {
    List<Target> out = new ArrayList<>();
    for (String job : view.jobsFor(collector)) {
      out.addAll(view.targetsFor(collector, job));
    }
    return out;
  }

  private static List<Target> poll(Handover h, Allocation snapshot, String collector) {
    Allocation view = h.served(snapshot);
    List<Target> out = served(view, collector);
    h.fetched(collector, null, view);
    return out;
  }

  /** Lets {@code seconds} pass one by one, {@code alive} polling at each (their refresh). */
  private void run(Handover h, Allocation snapshot, int seconds, String... alive) {
    for (int i = 0; i < seconds; i++) {
      advance(Duration.ofSeconds(1));
      for (String c : alive) {
        poll(h, snapshot, c);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // One target, owners given by hand: the cases a rank-keyed bookkeeping would get wrong.

  private static final Target T = Target.of("web", "10.0.0.1:9100");

  /** A snapshot in which {@link #T} is held by {@code owners} (primary first). */
  private static Allocation owned(String... owners) {
    return new Fixed(List.of(owners), List.of("a", "b", "c", "d"));
  }

  @Test
  void aReplicaThatMovesIsHeldForItsFormerOwnerUntilItsNewOwnerPickedItUp() {
    AtomicReference<Allocation> current = new AtomicReference<>(owned("a", "b"));
    Handover h = handover(current::get);
    for (String c : List.of("a", "b", "c")) {
      poll(h, current.get(), c);
    }
    // The primary moves from a to b's place, b's replica to c: a lost it, c gained it, b kept it.
    current.set(owned("b", "c"));
    assertEquals(List.of(T), poll(h, current.get(), "a"), "a is still served it");
    assertEquals(List.of(T), poll(h, current.get(), "b"), "b owns it under another rank: served once");
    assertFalse(h.drained("a", current.get()));
    advance(Duration.ofSeconds(30));
    poll(h, current.get(), "b");
    assertEquals(List.of(T), poll(h, current.get(), "a"), "b's fetches do not release it: c gained it");
    assertEquals(List.of(T), poll(h, current.get(), "c"));
    advance(HOLD.minusSeconds(1));
    assertEquals(List.of(T), poll(h, current.get(), "a"), "within the hold after c's fetch");
    advance(Duration.ofSeconds(1));
    assertEquals(List.of(), poll(h, current.get(), "a"), "released once the hold has passed");
    assertTrue(h.drained("a", current.get()));
    assertEquals(List.of(T), poll(h, current.get(), "b"));
    assertEquals(1, h.moves(), "one replica moved (a to c); b's change of rank is no move");
  }

  @Test
  void ranksThatSwapHandNothingOver() {
    AtomicReference<Allocation> current = new AtomicReference<>(owned("a", "b"));
    Handover h = handover(current::get);
    poll(h, current.get(), "a");
    poll(h, current.get(), "b");
    current.set(owned("b", "a"));
    assertEquals(List.of(T), poll(h, current.get(), "a"));
    assertEquals(List.of(T), poll(h, current.get(), "b"));
    assertEquals(0, h.heldCount());
    assertEquals(0, h.moves());
  }

  @Test
  void aReplicaLostWithNoNewOwnerIsReleasedAtOnceWhileAnotherOwnerScrapesIt() {
    AtomicReference<Allocation> current = new AtomicReference<>(owned("a", "b"));
    Handover h = handover(current::get);
    poll(h, current.get(), "a");
    poll(h, current.get(), "b");
    current.set(owned("b")); // fewer collectors than replicas, or fewer replicas after a reload
    assertEquals(List.of(), poll(h, current.get(), "a"));
    assertTrue(h.drained("a", current.get()));
    assertEquals(List.of(T), poll(h, current.get(), "b"));
  }

  @Test
  void aTargetWithNoOwnerLeftIsHeldUntilItsFormerOwnersAreGone() {
    AtomicReference<Allocation> current = new AtomicReference<>(owned("a", "b"));
    Handover h = handover(current::get);
    poll(h, current.get(), "a");
    poll(h, current.get(), "b");
    current.set(new Fixed(List.of(), List.of("c", "d"))); // a and b left, nobody can take it
    for (int i = 0; i < 5; i++) {
      advance(Duration.ofSeconds(1));
      assertEquals(List.of(T), poll(h, current.get(), "a"), "a polls on: held");
    }
    advance(Duration.ofMillis(2500)); // b has been silent for more than two seconds: gone
    assertEquals(List.of(), served(h.served(current.get()), "b"));
    assertEquals(List.of(T), served(h.served(current.get()), "a"));
  }

  @Test
  void aReplicaThatMovesOnBeforeItWasPickedUpKeepsEveryFormerOwner() {
    AtomicReference<Allocation> current = new AtomicReference<>(owned("a", "b"));
    Handover h = handover(current::get);
    poll(h, current.get(), "a");
    poll(h, current.get(), "b");
    current.set(owned("a", "c"));
    poll(h, current.get(), "b");
    current.set(owned("a", "d")); // c never fetched it
    assertEquals(List.of(T), poll(h, current.get(), "b"));
    assertEquals(List.of(T), served(h.served(current.get()), "c"), "c may have started it");
    assertEquals(List.of(T), poll(h, current.get(), "a"), "a, an owner throughout, once");
    poll(h, current.get(), "d");
    advance(HOLD);
    poll(h, current.get(), "b");
    assertEquals(List.of(), served(h.served(current.get()), "b"));
    assertEquals(List.of(), served(h.served(current.get()), "c"));
  }

  // ---------------------------------------------------------------------------------------------
  // A real allocator with two replicas.

  @Test
  void aCollectorThatLeavesIsDrainedOnlyOnceEveryReplicaItHeldWasPickedUp() {
    Allocator allocator =
        Allocators.builder(Allocators.CONSISTENT_HASHING).replicas(2).warnWhenMovedShareExceeds(1).build();
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      targets.add(Target.of(i % 2 == 0 ? "web" : "db", "10.0.1." + i + ":9100"));
    }
    List<Collector> all = List.of(Collector.of("a"), Collector.of("b"), Collector.of("c"), Collector.of("d"));
    allocator.setCollectors(all);
    allocator.setTargets(targets);
    Handover h = handover(allocator::snapshot);
    Allocation before = allocator.snapshot();
    Map<String, List<Target>> had = new LinkedHashMap<>();
    for (Collector c : all) {
      had.put(c.name(), poll(h, before, c.name()));
    }
    List<Target> aHad = had.get("a");
    long primaries = aHad.stream().filter(t -> before.ownersOf(t).get(0).equals("a")).count();
    assertTrue(primaries > 0 && primaries < aHad.size(), "a holds primaries and second replicas");
    for (Target t : targets) {
      assertEquals(2, before.ownersOf(t).size());
    }

    allocator.setCollectors(all.subList(1, 4));
    Allocation after = allocator.snapshot();
    assertEquals(new HashSet<>(aHad), new HashSet<>(poll(h, after, "a")), "a keeps every replica it held");
    // Every replica a held is held for it; a bounded-load placement may move a few more among the
    // others, and those are held too.
    assertTrue(h.heldCount() >= aHad.size(), h.heldCount() + " held, a had " + aHad.size());
    Set<String> gainers = new TreeSet<>();
    for (Target t : aHad) {
      List<String> owners = after.ownersOf(t);
      assertEquals(2, owners.size());
      assertFalse(owners.contains("a"));
      for (String o : owners) {
        if (!before.ownersOf(t).contains(o)) {
          gainers.add(o);
        }
      }
    }
    for (String c : List.of("b", "c", "d")) {
      List<Target> s = poll(h, after, c);
      assertEquals(s.size(), new HashSet<>(s).size(), c + " is served no target twice");
      assertTrue(s.containsAll(served(after, c)), c + " is served all it owns");
    }
    // Every gainer has fetched now; the hold runs, a polling on meanwhile.
    assertFalse(h.drained("a", after));
    run(h, after, (int) HOLD.toSeconds() - 1, "a");
    assertFalse(h.drained("a", after), "within the hold of " + gainers);
    run(h, after, 1, "a");
    assertTrue(h.drained("a", after));
    assertEquals(0, h.heldCount());
  }

  @Test
  void aGainerThatHasNotFetchedKeepsTheLeaverUndrained() {
    Allocator allocator =
        Allocators.builder(Allocators.RENDEZVOUS).replicas(2).warnWhenMovedShareExceeds(1).build();
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      targets.add(Target.of("web", "10.0.2." + i + ":9100"));
    }
    List<Collector> all = List.of(Collector.of("a"), Collector.of("b"), Collector.of("c"));
    allocator.setCollectors(all);
    allocator.setTargets(targets);
    Handover h = handover(allocator::snapshot);
    Allocation before = allocator.snapshot();
    for (Collector c : all) {
      poll(h, before, c.name());
    }
    allocator.setCollectors(all.subList(1, 3));
    Allocation after = allocator.snapshot();
    // With three collectors and two replicas, each of a's replicas goes to whichever of b and c
    // lacked the target: both gain some. Only b fetches.
    run(h, after, 10, "a", "b");
    assertFalse(h.drained("a", after), "c has not fetched what it gained");
    List<Target> stillHeld = served(h.served(after), "a");
    long cGained = targets.stream().filter(t -> before.ownersOf(t).contains("a") && !before.ownersOf(t).contains("c")).count();
    assertEquals(cGained, stillHeld.size(), "what c gained stays held, what b gained is released");
    assertTrue(cGained > 0);
    for (Target t : stillHeld) {
      assertFalse(before.ownersOf(t).contains("c"), "c gained it: " + t);
    }
    poll(h, after, "c");
    run(h, after, (int) HOLD.toSeconds() - 1, "a");
    assertFalse(h.drained("a", after));
    run(h, after, 1, "a");
    assertTrue(h.drained("a", after));
  }

  /** A snapshot of one target {@link #T} with the given owners. */
  private record Fixed(List<String> owners, List<String> names) implements Allocation {
    @Override
    public Set<Collector> collectors() {
      Set<Collector> out = new java.util.LinkedHashSet<>();
      names.forEach(n -> out.add(Collector.of(n)));
      return out;
    }

    @Override
    public Set<Target> targets() {
      return Set.of(T);
    }

    @Override
    public Optional<String> collectorOf(Target target) {
      return owners.isEmpty() ? Optional.empty() : Optional.of(owners.get(0));
    }

    @Override
    public List<String> ownersOf(Target target) {
      return owners;
    }

    @Override
    public int replicas() {
      return 2;
    }

    @Override
    public Set<Target> unassigned() {
      return owners.size() < 2 ? Set.of(T) : Set.of();
    }

    @Override
    public List<Target> targetsFor(String collector, String job) {
      return owners.contains(collector) && job.equals(T.job()) ? List.of(T) : List.of();
    }

    @Override
    public Set<String> jobsFor(String collector) {
      return owners.contains(collector) ? Set.of(T.job()) : Set.of();
    }

    @Override
    public int targetCount(String collector) {
      return owners.contains(collector) ? 1 : 0;
    }
  }
}
