package dev.apportion.allocation.ownership;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRing;
import dev.apportion.allocation.ring.HashRings;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Replicas with the same member list own every target exactly once, and agree with the ring. */
class OwnershipCoverageTest {
  private static final int SEEDS = 90;

  @Test
  void sameMemberListOwnsEveryTargetExactlyOnce() {
    long checked = 0;
    for (int seed = 0; seed < SEEDS; seed++) {
      SplittableRandom rng = new SplittableRandom(seed);
      String at = "seed " + seed;
      List<String> members = Seeded.members(rng, 2 + rng.nextInt(25));
      List<Target> targets = Seeded.targets(rng, 1 + rng.nextInt(1000));
      TargetKey key = seed % 3 == 0 ? TargetKey.identity()
          : seed % 3 == 1 ? TargetKey.excludingLabels("pod") : TargetKey.onlyLabels("pod");
      List<Ownership> views = Seeded.replicas(members, key);
      Map<String, Integer> share = new HashMap<>();
      for (Target t : targets) {
        int owners = Seeded.owners(views, t);
        assertEquals(1, owners, () -> at + ": " + t + " has " + owners + " owners");
        Optional<String> first = views.get(0).ownerOf(t);
        for (Ownership v : views) {
          assertEquals(first, v.ownerOf(t), () -> at + ": replicas disagree on " + t);
        }
        share.merge(first.orElseThrow(), 1, Integer::sum);
        checked++;
      }
      for (Ownership v : views) {
        assertEquals(Ownership.State.SHARED, v.state());
        assertEquals(share.getOrDefault(v.self(), 0), v.owned(targets).size(), "seed " + seed);
      }
    }
    assertTrue(checked > SEEDS * 100L, "too few targets checked: " + checked);
  }

  @Test
  void weightedMemberListOwnsEveryTargetExactlyOnce() {
    for (int seed = 0; seed < 20; seed++) {
      SplittableRandom rng = new SplittableRandom(1000 + seed);
      String at = "seed " + seed;
      List<String> members = Seeded.members(rng, 2 + rng.nextInt(20));
      Map<String, Double> weights = Seeded.weights(rng, members);
      List<Target> targets = Seeded.targets(rng, 1 + rng.nextInt(1000));
      List<Ownership> views = new ArrayList<>();
      for (String m : members) {
        views.add(Ownership.builder(m).build(weights));
      }
      HashRing ring = HashRings.rendezvous(weights);
      for (Target t : targets) {
        assertEquals(1, Seeded.owners(views, t), () -> at + ": " + t);
        String owner = ring.owner(t.hash());
        for (Ownership v : views) {
          assertEquals(v.self().equals(owner), v.owns(t), () -> at + ": " + t);
          assertEquals(Optional.of(owner), v.ownerOf(t), () -> at + ": " + t);
        }
      }
    }
  }

  @Test
  void heavierMembersOwnMore() {
    Map<String, Double> weights = Map.of("a", 1.0, "b", 1.0, "c", 1.0, "d", 3.0);
    List<Target> targets = Seeded.targets(new SplittableRandom(7), 12_000);
    Map<String, Integer> owned = new HashMap<>();
    int total = 0;
    for (String m : weights.keySet()) {
      owned.put(m, Ownership.builder(m).build(weights).owned(targets).size());
      total += owned.get(m);
    }
    assertEquals(targets.size(), total);
    // Expected shares 2000 and 6000, standard deviations about 41 and 55.
    assertTrue(Math.abs(owned.get("a") - 2000) < 200, "light member owns " + owned);
    assertTrue(Math.abs(owned.get("d") - 6000) < 250, "heavy member owns " + owned);
  }

  @Test
  void ownerIsTheRendezvousRingsAndTheCentralAllocatorsOwner() {
    for (int seed = 0; seed < 10; seed++) {
      SplittableRandom rng = new SplittableRandom(2000 + seed);
      String at = "seed " + seed;
      List<String> members = Seeded.members(rng, 2 + rng.nextInt(40));
      List<Target> targets = Seeded.targets(rng, 500 + rng.nextInt(1500));
      HashRing ring = HashRings.rendezvous(members);
      Allocator central = Allocators.builder("rendezvous").build();
      List<Collector> collectors = new ArrayList<>();
      for (String m : members) {
        collectors.add(Collector.of(m));
      }
      central.setCollectors(collectors);
      central.setTargets(targets);
      Ownership view = Ownership.of(members.get(rng.nextInt(members.size())), members);
      Allocation snapshot = central.snapshot();
      for (Target t : targets) {
        Optional<String> expected = Optional.of(ring.owner(t.hash()));
        assertEquals(expected, view.ownerOf(t), () -> at + ": ring " + t);
        assertEquals(expected, snapshot.collectorOf(t), () -> at + ": central " + t);
        assertEquals(view.self().equals(expected.get()), view.owns(t), () -> at + ": " + t);
      }
    }
  }

  @Test
  void memberOrderAndDuplicatesDoNotMatter() {
    SplittableRandom rng = new SplittableRandom(3);
    List<String> members = Seeded.members(rng, 12);
    List<String> shuffled = new ArrayList<>(members);
    Collections.shuffle(shuffled, new java.util.Random(5));
    shuffled.addAll(members.subList(0, 4));
    List<Target> targets = Seeded.targets(rng, 2000);
    Ownership a = Ownership.of(members.get(3), members);
    Ownership b = Ownership.of(members.get(3), shuffled);
    assertEquals(a.members(), b.members());
    assertEquals(a.fingerprint(), b.fingerprint());
    assertEquals(a.owned(targets), b.owned(targets));
  }

  @Test
  void fingerprintSeparatesWhatChangesPlacement() {
    List<String> members = List.of("a", "b", "c");
    long base = Ownership.of("a", members).fingerprint();
    assertEquals(base, Ownership.of("b", members).fingerprint(), "self is not in the print");
    assertTrue(base != Ownership.of("a", List.of("a", "b")).fingerprint());
    assertTrue(base != Ownership.builder("a").key(TargetKey.excludingLabels("pod"))
        .build(members).fingerprint());
    assertTrue(base != Ownership.builder("a").strict(2).build(members).fingerprint());
    assertTrue(base != Ownership.builder("a")
        .build(Map.of("a", 1.0, "b", 1.0, "c", 2.0)).fingerprint());
  }
}
