package dev.apportion.allocation.ownership;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Local ownership with replicas, property by property over seeded member lists and targets:
 * each target owned by its top k members, every member agreeing on who they are, and changes
 * that move only the replicas they must.
 */
class OwnershipReplicasTest {
  private static final int SEEDS = 40;

  private static List<Ownership> views(List<String> members, int k) {
    List<Ownership> out = new ArrayList<>();
    for (String m : members) {
      out.add(Ownership.builder(m).replicas(k).build(members));
    }
    return out;
  }

  @Test
  void everyTargetIsOwnedByMinOfKAndTheMemberCountAndEveryMemberAgreesWhichOnes() {
    for (int seed = 0; seed < SEEDS; seed++) {
      SplittableRandom rng = new SplittableRandom(seed);
      String at = "seed " + seed;
      int k = 1 + rng.nextInt(4);
      List<String> members = Seeded.members(rng, 1 + rng.nextInt(12));
      List<Target> targets = Seeded.targets(rng, 300);
      List<Ownership> views = views(members, k);
      for (Target t : targets) {
        List<String> owners = views.get(0).ownersOf(t);
        assertEquals(Math.min(k, members.size()), owners.size(), at);
        assertEquals(owners.size(), new HashSet<>(owners).size(), at + ": distinct " + owners);
        assertEquals(views.get(0).ownerOf(t).orElseThrow(), owners.get(0), at + ": primary");
        Set<String> owning = new HashSet<>();
        for (Ownership v : views) {
          assertEquals(owners, v.ownersOf(t), at + ": every member computes the same owners");
          if (v.owns(t)) {
            owning.add(v.self());
          }
        }
        assertEquals(new HashSet<>(owners), owning, at + ": owns agrees with ownersOf");
      }
    }
  }

  @Test
  void weightedMembersAgreeToo() {
    for (int seed = 0; seed < SEEDS; seed++) {
      SplittableRandom rng = new SplittableRandom(100 + seed);
      int k = 2 + rng.nextInt(2);
      List<String> members = Seeded.members(rng, 2 + rng.nextInt(10));
      Map<String, Double> weights = Seeded.weights(rng, members);
      for (Target t : Seeded.targets(rng, 200)) {
        int owning = 0;
        List<String> owners = null;
        for (String m : members) {
          Ownership v = Ownership.builder(m).replicas(k).build(weights);
          owners = owners == null ? v.ownersOf(t) : owners;
          assertEquals(owners, v.ownersOf(t));
          owning += v.owns(t) ? 1 : 0;
          assertEquals(owners.contains(m), v.owns(t));
        }
        assertEquals(Math.min(k, members.size()), owning, "seed " + seed);
      }
    }
  }

  @Test
  void oneReplicaIsExactlyTheViewWithoutReplicas() {
    SplittableRandom rng = new SplittableRandom(7);
    List<String> members = Seeded.members(rng, 9);
    List<Target> targets = Seeded.targets(rng, 500);
    for (String m : members) {
      Ownership plain = Ownership.of(m, members);
      Ownership one = Ownership.builder(m).replicas(1).build(members);
      assertEquals(plain.fingerprint(), one.fingerprint());
      assertEquals(plain.owned(targets), one.owned(targets));
      for (Target t : targets) {
        assertEquals(List.of(plain.ownerOf(t).orElseThrow()), one.ownersOf(t));
      }
    }
    Ownership two = Ownership.builder(members.get(0)).replicas(2).build(members);
    assertTrue(two.fingerprint() != Ownership.of(members.get(0), members).fingerprint(),
        "the replicas decide placement, so they are in the fingerprint");
  }

  @Test
  void aMemberLeavingMovesOnlyItsReplicasEachToOneSurvivor() {
    for (int seed = 0; seed < SEEDS; seed++) {
      SplittableRandom rng = new SplittableRandom(200 + seed);
      String at = "seed " + seed;
      int k = 2 + rng.nextInt(2);
      List<String> members = Seeded.members(rng, 2 + rng.nextInt(12));
      List<Target> targets = Seeded.targets(rng, 400);
      String leaver = members.get(rng.nextInt(members.size()));
      List<String> rest = new ArrayList<>(members);
      rest.remove(leaver);
      Set<Target> leavers = new HashSet<>(
          Ownership.builder(leaver).replicas(k).build(members).owned(targets));
      Map<Target, Integer> taken = new HashMap<>();
      for (String m : rest) {
        Ownership before = Ownership.builder(m).replicas(k).build(members);
        OwnershipChange change = before.update(rest, targets);
        assertEquals(List.of(), change.lost(), at + ": a survivor lost a target");
        for (Target t : change.gained()) {
          assertTrue(leavers.contains(t), () -> at + ": gained a target the leaver did not hold");
          taken.merge(t, 1, Integer::sum);
        }
        assertEquals(bruteForce(before, change.after(), targets), summary(change), at);
      }
      // With more members than replicas each of the leaver's targets goes to one survivor;
      // otherwise every survivor held it already.
      Set<Target> expected = members.size() > k ? leavers : Set.of();
      assertEquals(expected, taken.keySet(), at);
      for (int n : taken.values()) {
        assertEquals(1, n, at + ": a replica was taken twice");
      }
    }
  }

  @Test
  void aMemberJoiningTakesReplicasOnlyFromThoseItNowOutranks() {
    for (int seed = 0; seed < SEEDS; seed++) {
      SplittableRandom rng = new SplittableRandom(300 + seed);
      String at = "seed " + seed;
      int k = 2 + rng.nextInt(2);
      List<String> more = Seeded.members(rng, 2 + rng.nextInt(12));
      List<Target> targets = Seeded.targets(rng, 400);
      String joiner = more.get(rng.nextInt(more.size()));
      List<String> fewer = new ArrayList<>(more);
      fewer.remove(joiner);
      Set<Target> joiners = new HashSet<>(
          Ownership.builder(joiner).replicas(k).build(more).owned(targets));
      Map<Target, Integer> given = new HashMap<>();
      for (String m : fewer) {
        Ownership before = Ownership.builder(m).replicas(k).build(fewer);
        OwnershipChange change = before.update(more, targets);
        assertEquals(List.of(), change.gained(), at + ": a member gained from a join");
        for (Target t : change.lost()) {
          assertTrue(joiners.contains(t), () -> at + ": lost a target the joiner does not take");
          given.merge(t, 1, Integer::sum);
        }
        assertEquals(bruteForce(before, change.after(), targets), summary(change), at);
      }
      assertEquals(fewer.size() >= k ? joiners : Set.of(), given.keySet(), at);
    }
  }

  @Test
  void weightedAndMixedChangesReportWhatBothViewsSay() {
    for (int seed = 0; seed < SEEDS; seed++) {
      SplittableRandom rng = new SplittableRandom(400 + seed);
      int k = 1 + rng.nextInt(3);
      List<String> members = Seeded.members(rng, 2 + rng.nextInt(10));
      List<String> next = new ArrayList<>(members.subList(0, 1 + rng.nextInt(members.size())));
      next.addAll(Seeded.members(rng, rng.nextInt(4)));
      List<Target> targets = Seeded.targets(rng, 300);
      String self = members.get(0);
      Ownership before = Ownership.builder(self).replicas(k).build(Seeded.weights(rng, members));
      OwnershipChange weighted = before.update(next, targets);
      assertEquals(bruteForce(before, weighted.after(), targets), summary(weighted));
      Ownership plain = Ownership.builder(self).replicas(k).build(members);
      OwnershipChange mixed = plain.update(next, targets);
      assertEquals(bruteForce(plain, mixed.after(), targets), summary(mixed));
    }
  }

  @Test
  void theModesKeepTheirMeaning() {
    List<String> peers = List.of("a", "b", "c");
    List<Target> targets = Seeded.targets(new SplittableRandom(1), 100);
    Ownership failSafe = Ownership.builder("z").replicas(2).build(peers);
    assertEquals(Ownership.State.FAIL_SAFE, failSafe.state());
    assertEquals(targets, failSafe.owned(targets), "not listed: owns everything");
    assertEquals(List.of("z"), failSafe.ownersOf(targets.get(0)));
    Ownership waiting = Ownership.builder("a").replicas(2).strict(4).build(peers);
    assertEquals(Ownership.State.WAITING, waiting.state());
    assertEquals(List.of(), waiting.owned(targets));
    assertEquals(List.of(), waiting.ownersOf(targets.get(0)));
    Ownership alone = Ownership.builder("a").replicas(3).build(List.of("a"));
    assertEquals(targets, alone.owned(targets));
    Ownership shared = Ownership.builder("a").replicas(3).strict(3).build(peers);
    assertEquals(targets, shared.owned(targets), "three members, three replicas: all own all");
    assertThrows(IllegalArgumentException.class, () -> Ownership.builder("a").replicas(0));
    assertThrows(IllegalArgumentException.class, () -> Ownership.builder("a").replicas(9));
    assertEquals(2, failSafe.withMembers(List.of("z", "y")).replicas());
  }

  /** Gained and lost by asking both views, target by target. */
  private static String bruteForce(Ownership before, Ownership after, List<Target> targets) {
    List<Target> gained = new ArrayList<>();
    List<Target> lost = new ArrayList<>();
    for (Target t : targets) {
      boolean had = before.owns(t);
      boolean has = after.owns(t);
      if (had != has) {
        (has ? gained : lost).add(t);
      }
    }
    return "+" + gained + " -" + lost;
  }

  private static String summary(OwnershipChange change) {
    return "+" + change.gained() + " -" + change.lost();
  }
}
