package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A restart nobody notices (settling) and leaving on purpose, in the membership and end to end. */
class SettleAndLeaveTest {
  private final AtomicLong now = new AtomicLong();
  private final List<List<Collector>> published = new ArrayList<>();
  private final Set<String> drained = new HashSet<>();

  private PollMembership.Builder builder() {
    return PollMembership.builder(published::add)
        .settle(Duration.ofSeconds(1))
        .expireAfter(Duration.ofSeconds(3))
        .drained(drained::contains)
        .nanoTime(now::get);
  }

  private void advance(long seconds) {
    now.addAndGet(Duration.ofSeconds(seconds).toNanos());
  }

  private void poll(PollMembership m, String... names) {
    for (String n : names) {
      m.heard(n, null);
    }
  }

  @Test
  void nobodyIsAnsweredUntilTheExpiryWindowHasPassedSinceTheStart() {
    PollMembership m = builder().build();
    poll(m, "a", "b");
    advance(1);
    poll(m, "a", "b");
    m.evaluate();
    assertEquals(1, published.size(), "published as before");
    assertFalse(m.settled(), "but a collector that has not polled yet may still be alive");
    assertFalse(m.answering("a"));
    advance(1);
    poll(m, "a", "b");
    m.evaluate();
    assertFalse(m.settled());
    advance(1);
    poll(m, "a", "b");
    m.evaluate();
    assertTrue(m.settled(), "three seconds, the expiry window, after the start");
    assertTrue(m.answering("a"));
    assertTrue(m.answering("newcomer"), "once settled a newcomer is answered (with nothing yet)");
  }

  @Test
  void strictModeSettlesWhenTheExpectedHaveJoinedAndEveryNameHeardIsAMember() {
    PollMembership m = builder().expected(2).build();
    poll(m, "a", "b", "c");
    advance(1);
    poll(m, "a", "b");
    m.evaluate();
    assertFalse(m.settled(), "c has polled once only: it joins at the next evaluation");
    assertTrue(m.answering("a"), "the members of the published set are answered");
    assertFalse(m.answering("c"));
    poll(m, "c");
    m.evaluate();
    assertTrue(m.settled());
    assertEquals(List.of(Collector.of("a"), Collector.of("b"), Collector.of("c")), m.current());
  }

  @Test
  void aReloadKeepsTheSettlingStateAndOneThatDoesNotHoldAtStartIsSettledAtOnce() {
    PollMembership settled = builder().holdAtStart(false).build();
    PollMembership seeded = builder().build();
    seeded.seed(List.of(Collector.of("a")), settled);
    assertTrue(seeded.settled(), "a reload of a settled membership");
    PollMembership settling = builder().build();
    advance(2);
    PollMembership early = builder().build();
    early.seed(List.of(Collector.of("a")), settling);
    assertFalse(early.settled(), "a reload while the first one was still settling");
    advance(1);
    early.heard("a", null);
    early.evaluate();
    assertTrue(early.settled(), "settles when the first one would have, not a whole window later");
    assertTrue(builder().holdAtStart(false).build().settled());
  }

  @Test
  void nothingHeardAtAllSettlesOnTimeAlone() {
    PollMembership m = builder().build();
    m.evaluate();
    assertFalse(m.settled());
    advance(3);
    m.evaluate();
    assertTrue(m.settled(), "no collector to protect");
  }

  /**
   * A standby replica nobody polled until the collectors were moved to it: each of them holds the
   * targets the other replica gave it, so the first poll starts the settling again instead of being
   * answered with nothing.
   */
  @Test
  void aStartNobodyPolledSettlesAgainFromTheFirstPoll() {
    PollMembership m = builder().build();
    advance(3);
    m.evaluate();
    assertTrue(m.settled(), "nobody polled: settled on time alone");
    poll(m, "a");
    assertFalse(m.settled(), "the first poll settles again");
    assertFalse(m.answering("a"), "answered 503: it keeps what it has");
    for (int i = 0; i < 2; i++) {
      advance(1);
      poll(m, "a", "b");
      m.evaluate();
      assertFalse(m.settled(), "within the expiry window of the first poll");
    }
    advance(1);
    poll(m, "a", "b");
    m.evaluate();
    assertTrue(m.settled(), "the expiry window after the first poll, everyone heard has joined");
    assertEquals(List.of(Collector.of("a"), Collector.of("b")), m.current());
    poll(m, "c");
    assertTrue(m.settled(), "only once");
  }

  @Test
  void aLeavingCollectorLeavesAtOnceAndRejoinsOnlyAfterItWasDrainedForTheWindow() {
    PollMembership m = builder().holdAtStart(false).build();
    poll(m, "a", "b");
    advance(1);
    poll(m, "a", "b");
    m.evaluate();
    assertEquals(List.of(Collector.of("a"), Collector.of("b")), m.current());

    assertTrue(m.leave("a"));
    assertEquals(List.of(Collector.of("b")), m.current(), "published at once, not at the expiry");
    for (int i = 0; i < 5; i++) {
      advance(1);
      poll(m, "a", "b");
      m.evaluate();
    }
    assertEquals(List.of(Collector.of("b")), m.current(), "its polls do not make it a member while not drained");
    drained.add("a");
    for (int i = 0; i < 3; i++) {
      advance(1);
      poll(m, "a", "b");
      m.evaluate();
    }
    assertEquals(List.of(Collector.of("b")), m.current(), "drained, but not yet for the window");
    for (int i = 0; i < 3; i++) {
      advance(1);
      poll(m, "a", "b");
      m.evaluate();
    }
    assertEquals(List.of(Collector.of("a"), Collector.of("b")), m.current(), "a restart under the name rejoins");
    assertTrue(m.leave("never-heard"), "a name never heard is a no-op");
    assertFalse(m.leave(" "));
  }

  @Test
  void throughTheServerSettlingAnswers503AndALeaveDrains(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\",\"b:1\",\"c:1\",\"d:1\",\"e:1\",\"f:1\"]}]");
    Path config = dir.resolve("c.yaml");
    Files.writeString(
        config,
        """
        listen: 127.0.0.1:0
        refreshInterval: 1s
        targets: [{fileSd: {job: j, files: [t.json]}}]
        collectors: {polls: {expireAfter: 5s}}
        handover: {hold: 1s}
        """);
    try (Service s = new Service(ServerConfig.read(config)).start()) {
      String base = "http://127.0.0.1:" + s.port();
      assertEquals(503, Http.get(base + "/readyz").status(), "not ready while membership settles");
      assertEquals(503, Http.get(base + "/targets?collector=x").status());
      assertEquals(503, Http.get(base + "/jobs/j/targets?collector_id=y").status());
      PrometheusEndToEndTest.await(
          Duration.ofSeconds(20),
          () -> {
            Http.get(base + "/targets?collector=x");
            Http.get(base + "/jobs/j/targets?collector_id=y");
            PrometheusEndToEndTest.sleep(300);
            return Http.get(base + "/readyz").status() == 200;
          },
          () -> "never settled");
      assertEquals(200, Http.get(base + "/targets?collector=x").status());
      assertEquals(2, s.allocator().snapshot().collectors().size());
      int xHad = s.allocator().snapshot().targetCount("x");
      assertTrue(xHad > 0);

      Http.Response leave =
          Http.send(HttpRequest.newBuilder(URI.create(base + "/targets?collector=x")).DELETE().build());
      assertEquals(202, leave.status(), leave.body());
      assertEquals(List.of(Collector.of("y")), s.allocator().snapshot().collectors().stream().toList());
      assertEquals(
          xHad,
          Http.get(base + "/targets?collector=x").json().get(0).get("targets").size(),
          "x is still served what it had");
      assertEquals(503, Http.get(base + "/drained?collector=x").status());
      assertEquals(6, Http.get(base + "/jobs/j/targets?collector_id=y").json().size(), "y has everything");
      PrometheusEndToEndTest.sleep(1200);
      String after = Http.get(base + "/targets?collector=x").body();
      assertEquals(
          200,
          Http.get(base + "/drained?collector=x").status(),
          () -> "drained one hold after y's fetch: x " + after + ", held " + s.handover().heldCount()
              + ", collectors " + s.allocator().snapshot().collectors());
      assertEquals("[]", Http.get(base + "/targets?collector=x").body().strip());
      assertEquals(503, Http.get(base + "/drained?collector=y").status());
    }
  }

  @Test
  void withStaticCollectorsALeaveIsTheListsBusiness(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\"]}]");
    Path config = dir.resolve("c.yaml");
    Files.writeString(
        config,
        """
        listen: 127.0.0.1:0
        refreshInterval: 1s
        targets: [{fileSd: {job: j, files: [t.json]}}]
        collectors: {static: [x]}
        """);
    try (Service s = new Service(ServerConfig.read(config)).start()) {
      String base = "http://127.0.0.1:" + s.port();
      assertEquals(200, Http.get(base + "/readyz").status(), "the listener starts after the first read");
      Http.Response leave =
          Http.send(HttpRequest.newBuilder(URI.create(base + "/targets?collector=x")).DELETE().build());
      assertEquals(409, leave.status());
      assertEquals(503, Http.get(base + "/drained?collector=x").status());
      assertEquals(200, Http.get(base + "/drained?collector=other").status());
      assertEquals(400, Http.get(base + "/drained").status());
    }
  }
}
