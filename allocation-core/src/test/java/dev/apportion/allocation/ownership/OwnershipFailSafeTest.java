package dev.apportion.allocation.ownership;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** A replica that cannot see its peers duplicates work but never drops a target. */
class OwnershipFailSafeTest {
  private static final List<Target> TARGETS = Seeded.targets(new SplittableRandom(42), 3000);

  @Test
  void anEmptyListOwnsEverything() {
    assertOwnsEverything(Ownership.of("me", List.of()), Ownership.State.FAIL_SAFE);
    assertOwnsEverything(Ownership.builder("me").build(Map.of()), Ownership.State.FAIL_SAFE);
  }

  @Test
  void aListWithoutTheLocalMemberOwnsEverything() {
    assertOwnsEverything(Ownership.of("me", List.of("a", "b", "c")), Ownership.State.FAIL_SAFE);
    assertOwnsEverything(Ownership.of("me", List.of("a")), Ownership.State.FAIL_SAFE);
    // A name that only differs in case is another name: the pitfall docs/ownership.md explains.
    assertOwnsEverything(Ownership.of("me", List.of("ME", "b")), Ownership.State.FAIL_SAFE);
  }

  @Test
  void aSingleMemberOwnsEverything() {
    assertOwnsEverything(Ownership.of("me", List.of("me")), Ownership.State.ALONE);
    assertOwnsEverything(Ownership.of("me", List.of("me", "me")), Ownership.State.ALONE);
    assertOwnsEverything(Ownership.builder("me").build(Map.of("me", 0.5)), Ownership.State.ALONE);
  }

  @Test
  void aMemberRemovedFromItsOwnListTakesEverything() {
    Ownership before = Ownership.of("me", List.of("me", "a", "b", "c"));
    int mine = before.owned(TARGETS).size();
    OwnershipChange change = before.update(List.of("a", "b", "c"), TARGETS);
    assertEquals(Ownership.State.FAIL_SAFE, change.after().state());
    assertEquals(TARGETS.size() - mine, change.gained().size());
    assertEquals(List.of(), change.lost());
  }

  /** The others still list the partitioned replica: it duplicates their share, nothing more. */
  @Test
  void aPartitionedReplicaDuplicatesButNeverDrops() {
    for (int seed = 0; seed < 30; seed++) {
      SplittableRandom rng = new SplittableRandom(seed);
      List<String> members = Seeded.members(rng, 2 + rng.nextInt(12));
      String cutOff = members.get(rng.nextInt(members.size()));
      List<Ownership> views = new ArrayList<>();
      for (String m : members) {
        List<String> seen = m.equals(cutOff)
            ? (rng.nextBoolean() ? List.of(cutOff) : List.of()) : members;
        views.add(Ownership.of(m, seen));
      }
      int cutOffsShare = Ownership.of(cutOff, members).owned(TARGETS).size();
      int[] counts = counts(views);
      assertEquals(0, counts[0], "seed " + seed + ": gaps");
      assertEquals(TARGETS.size() - cutOffsShare, counts[2], "seed " + seed + ": duplicates");
      assertEquals(0, counts[3], "seed " + seed + ": scraped three times");
    }
  }

  /** The others have dropped the partitioned replica: it duplicates everything, still no gap. */
  @Test
  void aReplicaThePeersForgotDuplicatesEverything() {
    List<String> members = Seeded.members(new SplittableRandom(3), 6);
    String cutOff = members.get(4);
    List<String> rest = new ArrayList<>(members);
    rest.remove(cutOff);
    List<Ownership> views = new ArrayList<>();
    for (String m : members) {
      views.add(Ownership.of(m, m.equals(cutOff) ? List.of(cutOff) : rest));
    }
    int[] counts = counts(views);
    assertEquals(0, counts[0]);
    assertEquals(TARGETS.size(), counts[2]);
  }

  @Test
  void strictModeOwnsNothingOnADegenerateList() {
    assertOwnsNothing(Ownership.builder("me").strict(1).build(List.of()));
    assertOwnsNothing(Ownership.builder("me").strict(1).build(List.of("a", "b")));
    assertOwnsNothing(Ownership.builder("me").strict(2).build(List.of("me")));
    assertOwnsNothing(Ownership.builder("me").strict(3).build(List.of("me", "a")));
    assertOwnsEverything(Ownership.builder("me").strict(1).build(List.of("me")),
        Ownership.State.ALONE);
    Ownership enough = Ownership.builder("me").strict(3).build(List.of("me", "a", "b"));
    assertEquals(Ownership.State.SHARED, enough.state());
    assertEquals(Ownership.of("me", List.of("me", "a", "b")).owned(TARGETS),
        enough.owned(TARGETS));
  }

  /** The documented price of strict mode: a replica below the minimum leaves a gap. */
  @Test
  void strictModeCanLeaveGaps() {
    List<String> members = Seeded.members(new SplittableRandom(8), 5);
    String cutOff = members.get(1);
    List<Ownership> views = new ArrayList<>();
    for (String m : members) {
      views.add(Ownership.builder(m).strict(3)
          .build(m.equals(cutOff) ? List.of(cutOff) : members));
    }
    int[] counts = counts(views);
    assertEquals(Ownership.of(cutOff, members).owned(TARGETS).size(), counts[0]);
    assertTrue(counts[0] > 0);
    assertEquals(0, counts[2]);
  }

  @Test
  void invalidInputIsRejected() {
    assertThrows(NullPointerException.class, () -> Ownership.builder(null));
    assertThrows(IllegalArgumentException.class, () -> Ownership.builder(""));
    assertThrows(IllegalArgumentException.class, () -> Ownership.builder("me").strict(0));
    assertThrows(IllegalArgumentException.class, () -> Ownership.of("me", List.of("me", "")));
    assertThrows(NullPointerException.class,
        () -> Ownership.of("me", java.util.Arrays.asList("me", null)));
    assertThrows(IllegalArgumentException.class,
        () -> Ownership.builder("me").build(Map.of("me", 0.0)));
    assertThrows(IllegalArgumentException.class,
        () -> Ownership.builder("me").build(Map.of("me", Double.NaN)));
    assertThrows(IllegalArgumentException.class,
        () -> Ownership.builder("me").build(Map.of("me", Double.POSITIVE_INFINITY)));
  }

  /** {@code counts[k]}: how many targets exactly {@code k} views own (k capped at 3). */
  private static int[] counts(List<Ownership> views) {
    int[] counts = new int[4];
    for (Target t : TARGETS) {
      counts[Math.min(3, Seeded.owners(views, t))]++;
    }
    return counts;
  }

  private static void assertOwnsEverything(Ownership v, Ownership.State state) {
    assertEquals(state, v.state());
    assertEquals(TARGETS, v.owned(TARGETS));
    for (Target t : TARGETS.subList(0, 100)) {
      assertEquals(Optional.of(v.self()), v.ownerOf(t));
    }
  }

  private static void assertOwnsNothing(Ownership v) {
    assertEquals(Ownership.State.WAITING, v.state());
    assertEquals(List.of(), v.owned(TARGETS));
    for (Target t : TARGETS.subList(0, 100)) {
      assertFalse(v.owns(t));
      assertEquals(Optional.empty(), v.ownerOf(t));
    }
  }
}
