package dev.apportion.allocation.ownership;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRing;
import dev.apportion.allocation.ring.HashRings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** A member-list change moves only the targets rendezvous says move, and reports them. */
class OwnershipMovementTest {
  private static final int SEEDS = 40;

  @Test
  void aMemberLeavingMovesOnlyItsOwnTargets() {
    for (int seed = 0; seed < SEEDS; seed++) {
      SplittableRandom rng = new SplittableRandom(seed);
      String at = "seed " + seed;
      List<String> members = Seeded.members(rng, 3 + rng.nextInt(25));
      List<Target> targets = Seeded.targets(rng, 200 + rng.nextInt(1500));
      String leaver = members.get(rng.nextInt(members.size()));
      List<String> rest = new ArrayList<>(members);
      rest.remove(leaver);
      Set<Target> leaversTargets =
          new HashSet<>(Ownership.of(leaver, members).owned(targets));
      Map<Target, Integer> taken = new HashMap<>();
      for (String m : rest) {
        OwnershipChange change = Ownership.of(m, members).update(rest, targets);
        assertEquals(List.of(), change.lost(), "seed " + seed + ": a survivor lost targets");
        for (Target t : change.gained()) {
          assertTrue(leaversTargets.contains(t), () -> at + ": gained a survivor's " + t);
          taken.merge(t, 1, Integer::sum);
        }
        assertEquals(change.after().owned(targets).size(),
            Ownership.of(m, members).owned(targets).size() + change.gained().size());
      }
      assertEquals(leaversTargets, taken.keySet(), "seed " + seed + ": a target was dropped");
      for (int count : taken.values()) {
        assertEquals(1, count, "seed " + seed + ": a target was taken twice");
      }
    }
  }

  @Test
  void aMemberJoiningTakesOnlyTargetsItNowWins() {
    for (int seed = 0; seed < SEEDS; seed++) {
      SplittableRandom rng = new SplittableRandom(500 + seed);
      String at = "seed " + seed;
      List<String> more = Seeded.members(rng, 3 + rng.nextInt(25));
      List<Target> targets = Seeded.targets(rng, 200 + rng.nextInt(1500));
      String joiner = more.get(rng.nextInt(more.size()));
      List<String> members = new ArrayList<>(more);
      members.remove(joiner);
      Set<Target> joinersTargets = new HashSet<>(Ownership.of(joiner, more).owned(targets));
      Set<Target> given = new HashSet<>();
      for (String m : members) {
        OwnershipChange change = Ownership.of(m, members).update(more, targets);
        assertEquals(List.of(), change.gained(), "seed " + seed + ": an old member gained");
        for (Target t : change.lost()) {
          assertTrue(joinersTargets.contains(t), () -> at + ": lost to another: " + t);
          assertTrue(given.add(t), () -> at + ": two members gave up " + t);
        }
      }
      assertEquals(joinersTargets, given, "seed " + seed);
      // The joiner was not in its own list: fail-safe, it owned everything, and now lets go.
      OwnershipChange own = Ownership.of(joiner, members).update(more, targets);
      assertEquals(Ownership.State.FAIL_SAFE, own.before().state());
      assertEquals(List.of(), own.gained());
      assertEquals(targets.size() - joinersTargets.size(), own.lost().size(), "seed " + seed);
    }
  }

  /**
   * Arbitrary changes (members added and removed at once, weights, strict mode, another key)
   * report exactly the targets whose ownership differs by the documented rules, computed here
   * from the ring alone.
   */
  @Test
  void changesAreExactlyWhatTheRulesSay() {
    int fastPath = 0;
    int changed = 0;
    for (int seed = 0; seed < SEEDS * 2; seed++) {
      SplittableRandom rng = new SplittableRandom(9000 + seed);
      List<String> pool = Seeded.members(rng, 4 + rng.nextInt(25));
      List<Target> targets = Seeded.targets(rng, 100 + rng.nextInt(800));
      String self = pool.get(0);
      List<String> before = sample(rng, pool);
      List<String> after = sample(rng, pool);
      int strict = rng.nextInt(4) == 0 ? 1 + rng.nextInt(4) : 0;
      TargetKey key1 = rng.nextInt(4) == 0 ? TargetKey.excludingLabels("pod") : TargetKey.identity();
      TargetKey key2 = rng.nextInt(4) == 0 ? TargetKey.onlyLabels("namespace", "pod") : key1;
      Ownership.Builder b1 = Ownership.builder(self).key(key1);
      Ownership.Builder b2 = Ownership.builder(self).key(key2);
      if (strict > 0) {
        b1.strict(strict);
        b2.strict(strict);
      }
      boolean weighted = rng.nextInt(5) == 0;
      Ownership v1 = weighted ? b1.build(Seeded.weights(rng, before)) : b1.build(before);
      Ownership v2 = weighted ? b2.build(Seeded.weights(rng, after)) : b2.build(after);
      OwnershipChange change = v1.changesTo(v2, targets);
      List<Target> gained = new ArrayList<>();
      List<Target> lost = new ArrayList<>();
      boolean[] had = expectedOwns(v1, targets);
      boolean[] has = expectedOwns(v2, targets);
      for (int i = 0; i < targets.size(); i++) {
        if (had[i] != has[i]) {
          (has[i] ? gained : lost).add(targets.get(i));
        }
      }
      assertEquals(gained, change.gained(), "seed " + seed + ": " + v1 + " -> " + v2);
      assertEquals(lost, change.lost(), "seed " + seed + ": " + v1 + " -> " + v2);
      if (!weighted && key1.equals(key2) && v1.members().contains(self)
          && v2.members().contains(self) && strict == 0) {
        fastPath++;
      }
      changed += change.isEmpty() ? 0 : 1;
    }
    assertTrue(fastPath > SEEDS / 2, "the rendezvous shortcut ran only " + fastPath + " times");
    assertTrue(changed > SEEDS, "only " + changed + " changes moved anything");
  }

  @Test
  void anUnchangedListChangesNothing() {
    SplittableRandom rng = new SplittableRandom(11);
    List<String> members = Seeded.members(rng, 10);
    List<Target> targets = Seeded.targets(rng, 1000);
    Ownership v = Ownership.of(members.get(2), members);
    OwnershipChange change = v.update(members, targets);
    assertTrue(change.isEmpty());
    assertEquals(v.fingerprint(), change.after().fingerprint());
    assertEquals(v.owned(targets), change.after().owned(targets));
  }

  @Test
  void changesAreForOneLocalMember() {
    Ownership a = Ownership.of("a", List.of("a", "b"));
    Ownership b = Ownership.of("b", List.of("a", "b"));
    assertThrows(IllegalArgumentException.class, () -> a.changesTo(b, List.of()));
  }

  /** The documented rules, with the rendezvous ring as the only placement code. */
  private static boolean[] expectedOwns(Ownership v, List<Target> targets) {
    boolean[] out = new boolean[targets.size()];
    boolean listed = v.members().contains(v.self());
    if (v.minimumMembers() > 0 && (!listed || v.members().size() < v.minimumMembers())) {
      return out;
    }
    HashRing ring = listed ? HashRings.rendezvous(v.weights()) : null;
    for (int i = 0; i < out.length; i++) {
      out[i] = ring == null || ring.owner(v.key().keyOf(targets.get(i))).equals(v.self());
    }
    return out;
  }

  private static List<String> sample(SplittableRandom rng, List<String> pool) {
    List<String> out = new ArrayList<>();
    // Mostly keep the local member (index 0), so the shortcut path is the common one.
    for (int i = 0; i < pool.size(); i++) {
      if (i == 0 ? rng.nextInt(8) != 0 : rng.nextInt(3) != 0) {
        out.add(pool.get(i));
      }
    }
    return out;
  }
}
