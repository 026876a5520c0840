package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class PollMembershipTest {
  private final AtomicLong now = new AtomicLong();
  private final List<List<Collector>> published = new ArrayList<>();

  private PollMembership membership(int expected) {
    return PollMembership.builder(published::add)
        .settle(Duration.ofSeconds(1))
        .expireAfter(Duration.ofSeconds(3))
        .expected(expected)
        .nanoTime(now::get)
        .build();
  }

  private void advance(long seconds) {
    now.addAndGet(Duration.ofSeconds(seconds).toNanos());
  }

  /** Polls from each name twice, one settle interval apart: what makes a name eligible. */
  private void pollTwice(PollMembership m, String... names) {
    for (String n : names) {
      m.heard(n, null);
    }
    advance(1);
    for (String n : names) {
      m.heard(n, null);
    }
  }

  @Test
  void joinsAreBatchedIntoOneChange() {
    PollMembership m = membership(0);
    m.heard("b", null);
    m.heard("a", "n1");
    m.heard("c", "");
    assertTrue(published.isEmpty(), "a poll changes nothing by itself");
    m.evaluate();
    assertTrue(published.isEmpty(), "one poll does not make a member");
    advance(1);
    m.heard("b", null);
    m.heard("a", "n1");
    m.heard("c", "");
    m.evaluate();
    assertEquals(List.of(List.of(Collector.of("a", "n1"), Collector.of("b"), Collector.of("c"))), published);
    m.evaluate();
    assertEquals(1, published.size(), "an unchanged set is not published again");
  }

  @Test
  void aCollectorLeavesOnlyAfterTheExpiryWindowAndARestartWithinItMovesNothing() {
    PollMembership m = membership(0);
    pollTwice(m, "a", "b");
    m.evaluate();
    advance(2);
    m.heard("a", null); // b restarts: silent for a while
    m.evaluate();
    advance(1);
    m.heard("a", null);
    m.heard("b", null); // b is back within 3 s
    m.evaluate();
    assertEquals(1, published.size(), "b's restart did not change the set: " + published);
    advance(2);
    m.heard("a", null);
    m.evaluate();
    advance(2);
    m.heard("a", null);
    m.evaluate();
    assertEquals(List.of(Collector.of("a")), published.get(published.size() - 1));
    assertEquals(List.of(Collector.of("a")), m.current());
  }

  @Test
  void strictModeWaitsForTheExpectedCountOnceThenFollowsLeaves() {
    PollMembership m = membership(3);
    pollTwice(m, "a", "b");
    m.evaluate();
    assertTrue(published.isEmpty());
    assertFalse(m.hasPublished());
    m.heard("c", null);
    m.evaluate();
    assertTrue(published.isEmpty(), "c polled once");
    m.heard("a", null);
    m.heard("b", null);
    advance(1);
    m.heard("c", null);
    m.evaluate();
    assertEquals(List.of(List.of(Collector.of("a"), Collector.of("b"), Collector.of("c"))), published);
    advance(4);
    m.heard("a", null);
    m.heard("b", null);
    m.evaluate();
    assertEquals(List.of(Collector.of("a"), Collector.of("b")), m.current(), "below the count after start: c still leaves");
  }

  @Test
  void aNodeChangeIsAChange() {
    PollMembership m = membership(0);
    m.heard("a", "n1");
    advance(1);
    m.heard("a", "n1");
    m.evaluate();
    m.heard("a", "n2");
    m.evaluate();
    assertEquals(List.of(Collector.of("a", "n2")), m.current());
    assertEquals(2, published.size());
  }

  @Test
  void blankNamesAreIgnoredAndTheNumberOfNamesIsBounded() {
    PollMembership m = membership(0);
    m.heard("", null);
    m.heard(null, null);
    m.evaluate();
    assertTrue(published.isEmpty());
    for (int i = 0; i < PollMembership.MAX_MEMBERS + 5; i++) {
      m.heard("c" + i, null);
    }
    advance(1);
    for (int i = 0; i < PollMembership.MAX_MEMBERS + 5; i++) {
      m.heard("c" + i, null);
    }
    for (int round = 0; round < 200; round++) {
      m.evaluate();
    }
    assertEquals(PollMembership.MAX_MEMBERS, m.current().size());
  }

  @Test
  void onlyNamesTheAllowPatternMatchesEntirelyJoin() {
    PollMembership m =
        PollMembership.builder(published::add)
            .settle(Duration.ofSeconds(1))
            .allow("prom-[0-9]+")
            .nanoTime(now::get)
            .build();
    pollTwice(m, "prom-0", "made-up", "prom-1x", "xprom-2", "prom-3\nINFO forged");
    m.evaluate();
    assertEquals(List.of(Collector.of("prom-0")), m.current());
  }

  @Test
  void withAnAllowPatternAFirstPollPlacesTheCollectorBeforeItIsAnswered() {
    PollMembership m =
        PollMembership.builder(published::add)
            .settle(Duration.ofSeconds(1))
            .allow("prom-[0-9]+")
            .maxJoins(2)
            .nanoTime(now::get)
            .build();
    m.heard("prom-0", "n1");
    assertEquals(List.of(List.of(Collector.of("prom-0", "n1"))), published, "placed by the poll itself");
    m.heard("prom-1", null);
    assertEquals(List.of(Collector.of("prom-0", "n1"), Collector.of("prom-1")), m.current());
    m.heard("prom-1", null);
    m.heard("made-up", null);
    assertEquals(2, published.size(), "a member's next poll and a name the pattern refuses change nothing");
    // The budget: at most maxJoins such joins per settle interval; the rest join at the next
    // evaluation, from their one poll.
    m.heard("prom-2", null);
    assertEquals(2, m.current().size(), "past the budget");
    m.evaluate();
    assertEquals(3, m.current().size(), "joined at the evaluation from one poll");
    advance(1);
    m.heard("prom-3", null);
    assertEquals(4, m.current().size(), "a new interval, a new budget");
  }

  @Test
  void withoutAnAllowPatternOrBeforeAStrictPublicationAFirstPollPlacesNothing() {
    PollMembership open = membership(0);
    open.heard("prom-0", null);
    assertTrue(published.isEmpty(), "without allow a name must poll twice");
    PollMembership strict =
        PollMembership.builder(published::add)
            .settle(Duration.ofSeconds(1))
            .allow("prom-[0-9]+")
            .expected(2)
            .nanoTime(now::get)
            .build();
    strict.heard("prom-0", null);
    assertTrue(published.isEmpty(), "strict: nothing before the expected count");
    strict.heard("prom-1", null);
    assertTrue(published.isEmpty(), "strict: the first publication is the evaluation's");
    strict.evaluate();
    assertEquals(List.of(List.of(Collector.of("prom-0"), Collector.of("prom-1"))), published);
    strict.heard("prom-2", null);
    assertEquals(3, strict.current().size(), "once published, a first poll places");
  }

  @Test
  void aFloodOfOneOffNamesTakesNothingFromTheMembersAndARepeatedFloodJoinsBoundedly() {
    PollMembership m =
        PollMembership.builder(published::add)
            .settle(Duration.ofSeconds(1))
            .expireAfter(Duration.ofSeconds(30))
            .maxJoins(5)
            .nanoTime(now::get)
            .build();
    pollTwice(m, "prom-0", "prom-1", "prom-2");
    m.evaluate();
    assertEquals(3, m.current().size());
    // 20,000 made-up names, each once: none joins, and the members stay.
    for (int i = 0; i < 20_000; i++) {
      m.heard("phantom-" + i, null);
    }
    advance(1);
    m.heard("prom-0", null);
    m.heard("prom-1", null);
    m.heard("prom-2", null);
    m.evaluate();
    assertEquals(List.of(Collector.of("prom-0"), Collector.of("prom-1"), Collector.of("prom-2")), m.current());
    // The same names again one interval later: at most maxJoins of them join per evaluation.
    for (int i = 0; i < 20_000; i++) {
      m.heard("phantom-" + i, null);
    }
    m.evaluate();
    assertEquals(3 + 5, m.current().size());
    m.evaluate();
    assertEquals(3 + 10, m.current().size());
  }

  @Test
  void aPathologicalNameIsDecidedQuicklyByTheLinearTimeAllowPattern() {
    PollMembership m =
        PollMembership.builder(published::add)
            .settle(Duration.ofSeconds(1))
            .allow(".*-.*-.*-[0-9]+")
            .nanoTime(now::get)
            .build();
    String evil = "a-".repeat(1000) + "x";
    // java.util.regex took about 10 s for this name; RE2J is linear. A functional bound only.
    org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
        Duration.ofSeconds(2),
        () -> {
          for (int i = 0; i < 10; i++) {
            m.heard(evil, null);
          }
        });
    pollTwice(m, "a-b-c-1");
    m.evaluate();
    assertEquals(List.of(Collector.of("a-b-c-1")), m.current());
    assertTrue(PollMembership.compileAllow("a|b").matches("a"));
    assertFalse(PollMembership.compileAllow("a|b").matches("ab"), "anchored around the alternation");
    assertFalse(PollMembership.compileAllow("prom").matches("prom\n"));
  }

  @Test
  void aMembershipChangeIsOneShortEscapedLine() {
    List<Collector> many = new ArrayList<>();
    for (int i = 0; i < 40_000; i++) {
      many.add(Collector.of("collector-with-a-long-name-" + i));
    }
    many.add(Collector.of("evil\nINFO forged line", "n\u001b[31m"));
    String line = PollMembership.change(null, many);
    assertTrue(line.length() < 2_000, "length " + line.length());
    assertTrue(line.startsWith("collectors from polls: 40001 (first publication); joined 40001 ["), line);
    assertFalse(line.contains("\n"), line);
    assertFalse(line.contains("\u001b"), line);
    String left = PollMembership.change(many, List.of(Collector.of("collector-with-a-long-name-7")));
    assertTrue(left.contains("joined 0 []; left 40000 ["), left);
    assertEquals("a\\nb", LogSafe.text("a\nb"));
  }

  /**
   * Through the service: with polls.allow, a collector's very first poll, on either protocol, is
   * answered with its targets (a receiver asks again only a refresh interval later).
   */
  @Test
  void theFirstPollOfAnAllowedNameIsAnsweredWithItsTargets(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
      throws Exception {
    java.nio.file.Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\",\"b:1\"]}]");
    java.nio.file.Path config = dir.resolve("c.yaml");
    java.nio.file.Files.writeString(
        config,
        """
        listen: 127.0.0.1:0
        refreshInterval: 1h
        targets: [{fileSd: {job: j, files: [t.json]}}]
        collectors: {polls: {allow: 'prom-[0-9]+', expireAfter: 1s}}
        """);
    try (Service s = new Service(ServerConfig.read(config)).start()) {
      String base = "http://127.0.0.1:" + s.port();
      // A running server: membership settles once the expiry window has passed since the start
      // (the hourly refresh would evaluate it only later, so the test evaluates it itself).
      Thread.sleep(1100);
      s.polls().evaluate();
      assertTrue(s.polls().settled(), "settled after the expiry window");
      for (int i = 0; i < 100 && Http.get(base + "/readyz").status() != 200; i++) {
        Thread.sleep(50);
      }
      assertEquals(2, s.allocator().snapshot().targets().size(), "the targets were read");
      Http.Response first = Http.get(base + "/jobs/j/targets?collector_id=prom-0");
      assertEquals(200, first.status());
      assertEquals(2, first.json().size(), "the only collector's first poll holds every target: " + first.body());
      Http.Response second = Http.get(base + "/targets?collector=prom-1");
      assertEquals(List.of(Collector.of("prom-0"), Collector.of("prom-1")), s.allocator().snapshot().collectors().stream().toList());
      int ofSecond = 0;
      for (com.fasterxml.jackson.databind.JsonNode group : second.json()) {
        ofSecond += group.get("targets").size();
      }
      assertEquals(
          s.allocator().snapshot().targetsFor("prom-1", "j").size(), ofSecond, "answered from the set it joined: " + second.body());
      assertEquals(2, Http.get(base + "/jobs/j/targets?collector_id=prom-0").json().size() + ofSecond);
      assertEquals("[]", Http.get(base + "/targets?collector=curl-test").body().strip(), "a refused name gets nothing");
    }
  }

  /** Through the service: a phantom name polling a config with polls.allow gets no targets. */
  @Test
  void theConfigsAllowPatternKeepsPhantomsOut(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
      throws Exception {
    java.nio.file.Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\",\"b:1\"]}]");
    java.nio.file.Path config = dir.resolve("c.yaml");
    java.nio.file.Files.writeString(
        config,
        """
        listen: 127.0.0.1:0
        refreshInterval: 1s
        targets: [{fileSd: {job: j, files: [t.json]}}]
        collectors: {polls: {allow: 'prom-[0-9]+', expireAfter: 1h, expected: 1}}
        """);
    try (Service s = new Service(ServerConfig.read(config)).start()) {
      String base = "http://127.0.0.1:" + s.port();
      // 503 until membership has settled after the start (strict: the expected one has joined)
      assertEquals(503, Http.get(base + "/targets?collector=prom-0").status());
      assertEquals(503, Http.get(base + "/targets?collector=curl-test").status());
      assertEquals(503, Http.get(base + "/jobs/j/targets?collector_id=phantom").status());
      Thread.sleep(1100);
      s.polls().evaluate();
      assertEquals(List.of(Collector.of("prom-0")), s.allocator().snapshot().collectors().stream().toList());
      assertTrue(s.polls().settled(), "every name heard that may join has joined");
      assertEquals(2, Http.get(base + "/targets?collector=prom-0").json().get(0).get("targets").size());
      assertEquals("[]", Http.get(base + "/targets?collector=curl-test").body().strip());
    }
  }
}
