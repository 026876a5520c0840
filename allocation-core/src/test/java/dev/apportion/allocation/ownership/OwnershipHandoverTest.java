package dev.apportion.allocation.ownership;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Target;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class OwnershipHandoverTest {
  private final AtomicLong now = new AtomicLong();
  private final List<Target> targets = new ArrayList<>();

  OwnershipHandoverTest() {
    for (int i = 0; i < 200; i++) {
      targets.add(Target.of("j", "10.0.0." + i + ":80"));
    }
  }

  private OwnershipHandover replica(String self, List<String> members) {
    return OwnershipHandover.of(Ownership.of(self, members), Duration.ofSeconds(30), now::get);
  }

  private void advance(long seconds) {
    now.addAndGet(Duration.ofSeconds(seconds).toNanos());
  }

  @Test
  void aLostTargetIsScrapedForTheWindowAndAGainedOneAtOnce() {
    List<String> before = List.of("a", "b");
    List<String> after = List.of("a", "b", "c");
    OwnershipHandover a = replica("a", before);
    OwnershipHandover c = replica("c", before);
    Set<Target> aHad = new HashSet<>(a.scraped(targets));

    OwnershipChange lostByA = a.update(after, targets);
    c.update(after, targets);
    assertFalse(lostByA.lost().isEmpty());
    assertEquals(aHad, new HashSet<>(a.scraped(targets)), "a still scrapes everything it had");
    assertTrue(new HashSet<>(c.scraped(targets)).containsAll(lostByA.lost()), "c starts at once");
    assertEquals(lostByA.lost().size(), a.heldCount());

    advance(29);
    assertTrue(a.scrapes(lostByA.lost().get(0)));
    advance(1);
    assertFalse(a.scrapes(lostByA.lost().get(0)), "released after the window");
    assertEquals(new HashSet<>(a.view().owned(targets)), new HashSet<>(a.scraped(targets)));
    assertEquals(0, a.heldCount());
  }

  @Test
  void everyTargetIsScrapedByAtLeastOneReplicaThroughTheMove() {
    List<String> before = List.of("a", "b", "c");
    List<String> after = List.of("a", "b");
    List<OwnershipHandover> replicas = new ArrayList<>();
    for (String m : before) {
      replicas.add(replica(m, before));
    }
    // c leaves; a and b update one after the other, c stops only after the window
    replicas.get(0).update(after, targets);
    assertCovered(replicas);
    replicas.get(1).update(after, targets);
    replicas.get(2).update(after, targets);
    assertCovered(replicas);
    advance(31);
    assertCovered(replicas.subList(0, 2));
  }

  @Test
  void aTargetRegainedWithinTheWindowIsNotHeldTwice() {
    OwnershipHandover a = replica("a", List.of("a", "b"));
    List<Target> had = a.scraped(targets);
    a.update(List.of("a", "b", "c"), targets);
    a.update(List.of("a", "b"), targets);
    assertEquals(0, a.heldCount(), "what came back is owned, not held");
    assertEquals(had, a.scraped(targets));
  }

  @Test
  void aZeroWindowIsThePlacementAlone() {
    OwnershipHandover a = OwnershipHandover.of(Ownership.of("a", List.of("a", "b")), Duration.ZERO, now::get);
    a.update(List.of("a", "b", "c"), targets);
    assertEquals(a.view().owned(targets), a.scraped(targets));
    assertThrows(
        IllegalArgumentException.class,
        () -> OwnershipHandover.of(Ownership.of("a", List.of("a")), Duration.ofSeconds(-1)));
  }

  private void assertCovered(List<OwnershipHandover> replicas) {
    Set<Target> covered = new HashSet<>();
    replicas.forEach(r -> covered.addAll(r.scraped(targets)));
    assertEquals(new HashSet<>(targets), covered);
  }
}
