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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class HandoverTest {
  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final Allocator allocator =
      Allocators.builder(Allocators.CONSISTENT_HASHING).warnWhenMovedShareExceeds(1).build();
  private final List<Target> targets = new ArrayList<>();

  HandoverTest() {
    for (int i = 0; i < 40; i++) {
      targets.add(Target.of(i % 2 == 0 ? "web" : "db", "10.0.0." + i + ":9100"));
    }
    allocator.setTargets(targets);
  }

  private void advance(Duration d) {
    now.addAndGet(d.toNanos());
  }

  private Handover handover(Duration hold) {
    return handover(hold, allocator);
  }

  private Handover handover(Duration hold, Allocator of) {
    return new Handover(
        new HandoverConfig(true, hold, HandoverConfig.DEFAULT_PICKUP, Duration.ofSeconds(5)),
        Map.of("web", Duration.ofSeconds(2)),
        now::get,
        of::snapshot);
  }

  /** What {@code collector} is served now, and records its fetch of every job. */
  private Set<Target> poll(Handover h, String collector) {
    Allocation view = h.served(allocator.snapshot());
    Set<Target> out = served(view, collector);
    h.fetched(collector, null, view);
    return out;
  }

  private static Set<Target> served(Allocation view, String collector) {
    Set<Target> out = new HashSet<>();
    for (String job : view.jobsFor(collector)) {
      out.addAll(view.targetsFor(collector, job));
    }
    return out;
  }

  /** Lets {@code d} pass in one-second steps, {@code alive} polling at each (their refresh). */
  private void run(Handover h, Duration d, String... alive) {
    for (long ms = 0; ms < d.toMillis(); ms += 1000) {
      advance(Duration.ofMillis(Math.min(1000, d.toMillis() - ms)));
      for (String c : alive) {
        poll(h, c);
      }
    }
  }

  private Set<Target> owned(String collector) {
    return served(allocator.snapshot(), collector);
  }

  @Test
  void theLosingCollectorKeepsItsTargetsUntilTheNewOwnerFetchedThemAndTheHoldPassed() {
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    Handover h = handover(Duration.ofSeconds(10));
    Set<Target> aHad = poll(h, "a");
    poll(h, "b");
    assertFalse(aHad.isEmpty());

    allocator.setCollectors(List.of(Collector.of("b")));
    assertEquals(aHad, poll(h, "a"), "a is still served what it had");
    run(h, Duration.ofSeconds(30), "a");
    assertEquals(aHad, poll(h, "a"), "no matter how long, until b has fetched");

    Set<Target> b = poll(h, "b");
    assertEquals(new HashSet<>(targets), b, "b is served everything at once");
    run(h, Duration.ofSeconds(9), "a");
    assertEquals(aHad, poll(h, "a"), "within the hold after b's fetch");
    assertFalse(h.drained("a", allocator.snapshot()));
    run(h, Duration.ofSeconds(1), "a");
    assertTrue(poll(h, "a").isEmpty(), "released once the hold has passed since b's fetch");
    assertTrue(h.drained("a", allocator.snapshot()));
    assertEquals(0, h.heldCount());
  }

  @Test
  void theServedViewIsASupersetAndThePlacementIsUntouched() {
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    Handover h = handover(Duration.ofSeconds(10));
    poll(h, "a");
    poll(h, "b");
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b"), Collector.of("c")));
    Allocation snapshot = allocator.snapshot();
    Allocation view = h.served(snapshot);
    int moved = 0;
    for (Target t : targets) {
      assertEquals(snapshot.collectorOf(t), view.collectorOf(t), "owners are the placement's");
    }
    for (String c : List.of("a", "b", "c")) {
      Set<Target> own = owned(c);
      Set<Target> all = served(view, c);
      assertTrue(all.containsAll(own), c + " is served everything it owns");
      if (!c.equals("c")) {
        moved += all.size() - own.size();
      }
    }
    assertEquals(owned("c").size(), moved, "what c gained is still served to its previous owners");
    assertTrue(moved > 0);
  }

  @Test
  void aFetchOfAnotherJobDoesNotStartTheHold() {
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    Handover h = handover(Duration.ofSeconds(1));
    poll(h, "a");
    poll(h, "b");
    allocator.setCollectors(List.of(Collector.of("b")));
    Allocation view = h.served(allocator.snapshot());
    h.fetched("b", "db", view);
    run(h, Duration.ofSeconds(2), "a");
    view = h.served(allocator.snapshot());
    Set<Target> a = served(view, "a");
    assertFalse(a.isEmpty());
    assertTrue(a.stream().allMatch(t -> t.job().equals("web")), "only db was picked up: " + a);
    h.fetched("b", "web", view);
    run(h, Duration.ofSeconds(2), "a");
    assertTrue(served(h.served(allocator.snapshot()), "a").isEmpty());
  }

  @Test
  void aHolderThatIsGoneIsNoLongerServed() {
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    Handover h = handover(Duration.ofSeconds(10));
    poll(h, "a");
    poll(h, "b");
    allocator.setCollectors(List.of(Collector.of("b")));
    assertFalse(served(h.served(allocator.snapshot()), "a").isEmpty());
    advance(Duration.ofSeconds(3)); // a never polled again: gone after two seconds
    assertTrue(served(h.served(allocator.snapshot()), "a").isEmpty());
    assertTrue(h.drained("a", allocator.snapshot()));
  }

  @Test
  void aTargetThatLeavesIsNotHeld() {
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    Handover h = handover(Duration.ofSeconds(10));
    Set<Target> aHad = poll(h, "a");
    poll(h, "b");
    allocator.setCollectors(List.of(Collector.of("b")));
    poll(h, "a");
    Target gone = aHad.iterator().next();
    List<Target> fewer = new ArrayList<>(targets);
    fewer.remove(gone);
    allocator.setTargets(fewer);
    Set<Target> a = poll(h, "a");
    assertFalse(a.contains(gone));
    assertEquals(aHad.size() - 1, a.size());
  }

  @Test
  void aMoveThatGoesOnBeforeItWasPickedUpKeepsEveryPreviousOwner() {
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    Handover h = handover(Duration.ofSeconds(5));
    Set<Target> aHad = poll(h, "a");
    Set<Target> bHad = poll(h, "b");
    allocator.setCollectors(List.of(Collector.of("b")));
    poll(h, "a");
    allocator.setCollectors(List.of(Collector.of("c")));
    assertTrue(poll(h, "a").containsAll(aHad));
    assertTrue(poll(h, "b").containsAll(bHad), "b, which never picked up a's targets, keeps its own");
    assertTrue(poll(h, "b").containsAll(aHad), "and a's, which it was given: it may have started them");
    poll(h, "c");
    run(h, Duration.ofSeconds(4), "a", "b");
    assertFalse(poll(h, "a").isEmpty());
    run(h, Duration.ofSeconds(1), "a", "b");
    assertTrue(poll(h, "a").isEmpty());
    assertTrue(poll(h, "b").isEmpty());
  }

  @Test
  void aTargetThatMovesBackIsNotHeldForItsOwner() {
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    Handover h = handover(Duration.ofSeconds(5));
    Set<Target> aHad = poll(h, "a");
    poll(h, "b");
    allocator.setCollectors(List.of(Collector.of("b")));
    poll(h, "a");
    poll(h, "b");
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    assertEquals(aHad, poll(h, "a"), "a owns them again, each once, and holds nothing");
    assertEquals(new HashSet<>(targets), poll(h, "b"), "b, which had them for a while, holds them");
    run(h, Duration.ofSeconds(5), "a", "b");
    assertEquals(owned("b"), poll(h, "b"), "until a has picked them up again");
  }

  @Test
  void aCallerWithAnOlderSnapshotNeverTakesTheHandoverBack() {
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    Handover h = handover(Duration.ofSeconds(5));
    Allocation old = allocator.snapshot();
    Set<Target> aHad = poll(h, "a");
    poll(h, "b");
    allocator.setCollectors(List.of(Collector.of("b")));
    poll(h, "a");
    Allocation view = h.served(old); // a request that read the snapshot before the change
    assertEquals(new HashSet<>(targets), served(view, "b"), "the view is of the newer snapshot");
    h.fetched("b", null, view);
    run(h, Duration.ofSeconds(5), "a");
    assertTrue(poll(h, "a").isEmpty(), "b's fetch counted: released after the hold, " + aHad.size() + " held before");
  }

  @Test
  void theComputedHoldIsPickupPlusTheJobsScrapeIntervalPlusTheOwnersRefresh() {
    Handover h = handover(null);
    long refresh = Duration.ofSeconds(3).toNanos();
    assertEquals(Duration.ofSeconds(10 + 2 + 3).toNanos(), h.holdNanos("web", refresh));
    assertEquals(Duration.ofSeconds(10 + 5 + 3).toNanos(), h.holdNanos("db", refresh), "the default interval");
    assertEquals(
        Map.of("web", Duration.ofSeconds(15)),
        Handover.intervalsOf(Map.of("web", Map.of("scrape_interval", "15s"), "db", Map.of("honor_labels", true))));
  }

  @Test
  void theNewOwnersRefreshIsLearnedFromItsPolls() {
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    Handover h = handover(null); // pickup 10 s, web every 2 s, db every 5 s
    poll(h, "a");
    poll(h, "b");
    advance(Duration.ofSeconds(4));
    poll(h, "a");
    poll(h, "b"); // b refreshes every 4 s
    allocator.setCollectors(List.of(Collector.of("b")));
    poll(h, "a");
    poll(h, "b");
    run(h, Duration.ofSeconds(15), "a"); // 10 + 2 + 4 = 16 s for web, 19 s for db
    assertFalse(poll(h, "a").isEmpty());
    run(h, Duration.ofSeconds(1), "a");
    Set<Target> a = poll(h, "a");
    assertFalse(a.isEmpty());
    assertTrue(a.stream().allMatch(t -> t.job().equals("db")), "web released at 16 s: " + a);
    run(h, Duration.ofSeconds(3), "a");
    assertTrue(poll(h, "a").isEmpty());
  }

  @Test
  void aReloadedHandoverContinuesFromThePreviousOne() {
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    Handover before = handover(Duration.ofSeconds(5));
    Set<Target> aHad = poll(before, "a");
    poll(before, "b");
    Allocator next = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    next.setTargets(targets);
    next.setCollectors(List.of(Collector.of("b")));
    Handover after = handover(Duration.ofSeconds(5), next);
    after.adopt(before);
    assertEquals(aHad, served(after.served(next.snapshot()), "a"), "the new allocator's moves are handed over");
  }
}
