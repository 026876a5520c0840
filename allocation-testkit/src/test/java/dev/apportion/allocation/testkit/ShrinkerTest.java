package dev.apportion.allocation.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** The shrinker drops the identity labels a failure does not need, never merging two targets. */
class ShrinkerTest {
  /** A correct toy that leaves unassigned every target {@code lost} picks. */
  private static PropertyRunner losing(Predicate<Target> lost) {
    return BrokenStrategiesTest.isolated(PropertyRunner.forAllocator("loses-some",
        () -> new ToyAllocator.Correct() {
          @Override
          Map<Target, String> place(List<Target> targets, List<Collector> collectors,
              Map<Target, String> previous) {
            Map<Target, String> out = new HashMap<>(super.place(targets, collectors, previous));
            out.keySet().removeIf(t -> lost.test(t));
            return out;
          }
        })).invariants(Invariants.allAssigned());
  }

  private static Target pod(String address, String... identity) {
    Map<String, String> labels = new HashMap<>();
    labels.put("__meta_kubernetes_pod_node_name", "n1");
    labels.put("__meta_kubernetes_pod_uid", "uid-" + address);
    for (int i = 0; i < identity.length; i += 2) {
      labels.put(identity[i], identity[i + 1]);
    }
    return Target.of("kubernetes-pods", address, labels);
  }

  @Test
  void aFailureThatDependsOnOneIdentityLabelKeepsThatLabelAndDropsTheOthers() {
    Scenario noisy = Scenario.of(3)
        .addCollectors(Collector.of("c-1", "n1"), Collector.of("c-2", "n2"))
        .addTargets(
            pod("10.0.0.1:80", "namespace", "shop", "pod", "cart-0", "team", "search",
                "tier", "web"),
            pod("10.0.0.2:80", "namespace", "shop", "pod", "cart-1", "team", "payments",
                "tier", "web"),
            pod("10.0.0.3:80", "namespace", "blog", "pod", "cms-0", "team", "content",
                "tier", "db"))
        .relabelTargets(pod("10.0.0.2:80", "namespace", "shop", "pod", "cart-1", "team",
            "payments", "tier", "web"));
    Failure f = losing(t -> "payments".equals(t.labels().get("team"))).check(noisy).failure()
        .orElseThrow();
    assertEquals("all-assigned", f.invariant());
    String java = f.minimal().toJava();
    assertTrue(java.contains("\"team\", \"payments\""), "the label the failure needs: " + java);
    for (String dropped : List.of("\"namespace\"", "\"pod\"", "\"tier\"", "\"shop\"",
        "__meta_kubernetes_pod_uid", "10.0.0.1", "10.0.0.3")) {
      assertFalse(java.contains(dropped), dropped + " plays no part: " + java);
    }
    assertEquals(2, f.minimal().size(), f::toString);
    assertEquals("all-assigned", losing(t -> "payments".equals(t.labels().get("team")))
        .check(f.minimal()).failure().orElseThrow().invariant(), "the minimal one fails too");
  }

  @Test
  void labelsThatKeepTwoTargetsApartAreNeverDropped() {
    // Two targets at one address told apart by `pod` alone; the failure needs both.
    Scenario s = Scenario.of(5)
        .addCollectors(Collector.of("c-1", "n1"))
        .addTargets(
            pod("10.0.0.9:80", "namespace", "shop", "pod", "a", "team", "x"),
            pod("10.0.0.9:80", "namespace", "shop", "pod", "b", "team", "x"),
            pod("10.0.0.8:80", "namespace", "shop", "pod", "c", "team", "x"));
    PropertyRunner runner = BrokenStrategiesTest.isolated(PropertyRunner.forAllocator("twins",
        () -> new ToyAllocator.Correct() {
          @Override
          Map<Target, String> place(List<Target> targets, List<Collector> collectors,
              Map<Target, String> previous) {
            Map<Target, String> out = new HashMap<>(super.place(targets, collectors, previous));
            out.keySet().removeIf(t -> targets.stream()
                .filter(o -> o.address().equals(t.address())).count() > 1);
            return out;
          }
        })).invariants(Invariants.allAssigned());
    Failure f = runner.check(s).failure().orElseThrow();
    String java = f.minimal().toJava();
    Set<Target> targets = new HashSet<>();
    f.minimal().steps().forEach(step -> targets.addAll(step.targets()));
    assertEquals(2, targets.size(), "both twins stay, still two targets: " + java);
    assertTrue(targets.stream().allMatch(t -> t.address().equals("10.0.0.9:80")), java);
    assertTrue(java.contains("\"pod\""), "what tells them apart stays: " + java);
    assertFalse(java.contains("\"namespace\"") || java.contains("\"team\"")
        || java.contains("10.0.0.8"), java);
  }

  @Test
  void aDropThatWouldMergeTwoTargetsIsNotACandidate() {
    Target a = pod("10.0.0.9:80", "pod", "a", "team", "x");
    Target b = pod("10.0.0.9:80", "pod", "b", "team", "x");
    Scenario s = Scenario.of(1).addTargets(a).removeTargets(b);
    assertNull(Shrinker.relabeled(s, t -> Target.of(t.job(), t.address())),
        "dropping `pod` would make the added and the removed target one");
    assertNull(Shrinker.relabeled(s, t -> t), "no change is no candidate");
    Scenario noTeam = Shrinker.relabeled(s, t -> Target.of(t.job(), t.address(),
        Map.of("pod", t.labels().get("pod"))));
    assertNotNull(noTeam);
    assertEquals(Scenario.of(1)
        .addTargets(Target.of("kubernetes-pods", "10.0.0.9:80", Map.of("pod", "a")))
        .removeTargets(Target.of("kubernetes-pods", "10.0.0.9:80", Map.of("pod", "b"))),
        noTeam);
    assertEquals(List.of(), Shrinker.labelDrops(Scenario.of(1)
        .addTargets(Target.of("j", "a:1", Map.of("__meta_x", "1")))),
        "__meta_* labels are not identity labels");
  }
}
