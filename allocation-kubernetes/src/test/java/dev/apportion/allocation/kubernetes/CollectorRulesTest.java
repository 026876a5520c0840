package dev.apportion.allocation.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.fabric8.kubernetes.api.model.Pod;
import dev.apportion.allocation.Collector;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pod rules as a pure function, without a server. */
class CollectorRulesTest {

  private static final Instant NOW = Instant.parse("2030-01-01T00:00:00Z");
  private static final Duration GRACE = Duration.ofSeconds(30);

  private static PodBuilder pod(String name, String node) {
    return Pods.builder("ns", name, node);
  }

  private static Pod notReady(String name, String since) {
    return pod(name, "n1")
        .withNewStatus()
        .withPhase("Running")
        .addNewCondition()
        .withType("Ready")
        .withStatus("False")
        .withLastTransitionTime(since)
        .endCondition()
        .endStatus()
        .build();
  }

  private static List<String> names(CollectorRules.Result r) {
    return Deliveries.names(r.collectors());
  }

  @Test
  void scheduledPodsAreCollectorsSortedByNameWithTheirNode() {
    CollectorRules.Result r =
        new CollectorRules(GRACE)
            .evaluate(List.of(pod("b", "n2").build(), pod("a", "n1").build()), NOW);
    assertEquals(List.of("a@n1", "b@n2"), names(r));
    assertNull(r.nextDeadline());
  }

  @Test
  void unscheduledTerminatingAndFinishedPodsAreNot() {
    List<Pod> pods =
        List.of(
            pod("unscheduled", null).build(),
            pod("empty-node", "").build(),
            pod("terminating", "n1").editMetadata().withDeletionTimestamp(NOW.toString()).endMetadata().build(),
            pod("succeeded", "n1").withNewStatus().withPhase("Succeeded").endStatus().build(),
            pod("failed", "n1").withNewStatus().withPhase("Failed").endStatus().build(),
            pod("ok", "n1").build());
    assertEquals(List.of("ok@n1"), names(new CollectorRules(Duration.ZERO).evaluate(pods, NOW)));
    assertEquals(List.of("ok@n1"), names(new CollectorRules(GRACE).evaluate(pods, NOW)));
  }

  @Test
  void notReadyCountsFromTheReadyConditionsLastTransition() {
    CollectorRules rules = new CollectorRules(GRACE);
    Pod within = notReady("within", NOW.minusSeconds(29).toString());
    Pod beyond = notReady("beyond", NOW.minusSeconds(31).toString());
    CollectorRules.Result r = rules.evaluate(List.of(within, beyond), NOW);
    assertEquals(List.of("within@n1"), names(r));
    assertEquals(NOW.plusSeconds(1), r.nextDeadline());
    // Exactly at the deadline the pod is out.
    assertEquals(List.of(), names(rules.evaluate(List.of(within), NOW.plusSeconds(1))));
  }

  @Test
  void timestampsWithAnOffsetAreUnderstood() {
    Pod p = notReady("p", "2029-12-31T19:00:00-05:00"); // = NOW
    CollectorRules.Result r = new CollectorRules(GRACE).evaluate(List.of(p), NOW);
    assertEquals(List.of("p@n1"), names(r));
    assertEquals(NOW.plus(GRACE), r.nextDeadline());
  }

  @Test
  void readyPodAndPodWithoutConditionsAreHealthy() {
    Pod ready =
        pod("ready", "n1")
            .withNewStatus()
            .withPhase("Running")
            .addNewCondition()
            .withType("Ready")
            .withStatus("True")
            .withLastTransitionTime(NOW.minusSeconds(3600).toString())
            .endCondition()
            .endStatus()
            .build();
    Pod bare = pod("bare", "n1").build();
    CollectorRules.Result r = new CollectorRules(GRACE).evaluate(List.of(ready, bare), NOW);
    assertEquals(List.of("bare@n1", "ready@n1"), names(r));
    assertNull(r.nextDeadline());
  }

  @Test
  void notRunningCountsFromTheStartTime() {
    Pod pending =
        pod("pending", "n1")
            .withNewStatus()
            .withPhase("Pending")
            .withStartTime(NOW.minusSeconds(20).toString())
            .endStatus()
            .build();
    CollectorRules.Result r = new CollectorRules(GRACE).evaluate(List.of(pending), NOW);
    assertEquals(List.of("pending@n1"), names(r));
    assertEquals(NOW.plusSeconds(10), r.nextDeadline());
    assertEquals(List.of(), names(new CollectorRules(GRACE).evaluate(List.of(pending), NOW.plusSeconds(10))));
  }

  @Test
  void notReadyWithoutAUsableTransitionTimeCountsFromWhenFirstSeen() {
    CollectorRules rules = new CollectorRules(GRACE);
    Pod p = notReady("p", "not a time");
    assertEquals(List.of("p@n1"), names(rules.evaluate(List.of(p), NOW)));
    assertEquals(List.of("p@n1"), names(rules.evaluate(List.of(p), NOW.plusSeconds(29))));
    assertEquals(List.of(), names(rules.evaluate(List.of(p), NOW.plusSeconds(30))));
    // Once the pod is gone its memory is dropped: a new pod of the same name starts afresh.
    rules.evaluate(List.of(), NOW.plusSeconds(31));
    assertEquals(List.of("p@n1"), names(rules.evaluate(List.of(p), NOW.plusSeconds(40))));
  }

  @Test
  void zeroGraceIgnoresReadiness() {
    Pod p = notReady("p", NOW.minusSeconds(3600).toString());
    CollectorRules.Result r = new CollectorRules(Duration.ZERO).evaluate(List.of(p), NOW);
    assertEquals(List.of("p@n1"), names(r));
    assertNull(r.nextDeadline());
  }

  // ---- Ready first ----------------------------------------------------------------------------

  private static Pod withUid(Pod p, String uid) {
    p.getMetadata().setUid(uid);
    return p;
  }

  private static Pod ready(String name, String uid) {
    return withUid(pod(name, "n1")
        .withNewStatus()
        .withPhase("Running")
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .withLastTransitionTime(NOW.minusSeconds(5).toString())
        .endCondition()
        .endStatus()
        .build(), uid);
  }

  @Test
  void aPodNeverReadyIsNotACollectorEvenWithinGrace() {
    CollectorRules rules = new CollectorRules(Duration.ofSeconds(30), true);
    Pod fresh = withUid(notReady("fresh", NOW.minusSeconds(2).toString()), "u1");
    assertEquals(List.of(), rules.evaluate(List.of(fresh), NOW).collectors());
  }

  @Test
  void onceReadyAPodStaysThroughTheGracePeriodAndLeavesAfterIt() {
    CollectorRules rules = new CollectorRules(Duration.ofSeconds(30), true);
    assertEquals(List.of(Collector.of("p", "n1")),
        rules.evaluate(List.of(ready("p", "u1")), NOW).collectors());
    Pod blip = withUid(notReady("p", NOW.minusSeconds(10).toString()), "u1");
    assertEquals(List.of(Collector.of("p", "n1")), rules.evaluate(List.of(blip), NOW).collectors());
    assertEquals(List.of(), rules.evaluate(List.of(blip), NOW.plusSeconds(25)).collectors());
  }

  @Test
  void aPodRecreatedUnderTheSameNameMustBeReadyAgain() {
    CollectorRules rules = new CollectorRules(Duration.ofSeconds(30), true);
    rules.evaluate(List.of(ready("p", "u1")), NOW);
    Pod again = withUid(notReady("p", NOW.minusSeconds(1).toString()), "u2");
    assertEquals(List.of(), rules.evaluate(List.of(again), NOW).collectors());
  }

  @Test
  void aPendingPodWithoutConditionsIsNotYetReadyButARunningOneIs() {
    CollectorRules rules = new CollectorRules(Duration.ofSeconds(30), true);
    Pod pending = withUid(pod("a", "n1").withNewStatus().withPhase("Pending").endStatus().build(),
        "ua");
    Pod running = withUid(pod("b", "n1").withNewStatus().withPhase("Running").endStatus().build(),
        "ub");
    assertEquals(List.of(Collector.of("b", "n1")),
        rules.evaluate(List.of(pending, running), NOW).collectors());
  }

  @Test
  void aZeroGracePeriodTurnsReadyFirstOffToo() {
    CollectorRules rules = new CollectorRules(Duration.ZERO, true);
    Pod fresh = withUid(notReady("fresh", NOW.minusSeconds(2).toString()), "u1");
    assertEquals(List.of(Collector.of("fresh", "n1")),
        rules.evaluate(List.of(fresh), NOW).collectors());
  }
}
