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

  @Test
  void joinsAreBatchedIntoOneChange() {
    PollMembership m = membership(0);
    m.heard("b", null);
    m.heard("a", "n1");
    m.heard("c", "");
    assertTrue(published.isEmpty(), "a poll changes nothing by itself");
    m.evaluate();
    assertEquals(List.of(List.of(Collector.of("a", "n1"), Collector.of("b"), Collector.of("c"))), published);
    m.evaluate();
    assertEquals(1, published.size(), "an unchanged set is not published again");
  }

  @Test
  void aCollectorLeavesOnlyAfterTheExpiryWindowAndARestartWithinItMovesNothing() {
    PollMembership m = membership(0);
    m.heard("a", null);
    m.heard("b", null);
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
    m.heard("a", null);
    m.heard("b", null);
    m.evaluate();
    assertTrue(published.isEmpty());
    assertFalse(m.hasPublished());
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
    m.evaluate();
    assertEquals(PollMembership.MAX_MEMBERS, m.current().size());
  }

  @Test
  void onlyNamesTheAllowPatternMatchesEntirelyJoin() {
    PollMembership m =
        PollMembership.builder(published::add)
            .settle(Duration.ofSeconds(1))
            .allow(java.util.regex.Pattern.compile("prom-[0-9]+"))
            .nanoTime(now::get)
            .build();
    m.heard("prom-0", null);
    m.heard("made-up", null);
    m.heard("prom-1x", null);
    m.heard("xprom-2", null);
    m.evaluate();
    assertEquals(List.of(Collector.of("prom-0")), m.current());
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
        refreshInterval: 1h
        targets: [{fileSd: {job: j, files: [t.json]}}]
        collectors: {polls: {allow: 'prom-[0-9]+'}}
        """);
    try (Service s = new Service(ServerConfig.read(config)).start()) {
      String base = "http://127.0.0.1:" + s.port();
      assertEquals(200, Http.get(base + "/targets?collector=prom-0").status());
      assertEquals(200, Http.get(base + "/targets?collector=curl-test").status());
      assertEquals(200, Http.get(base + "/jobs/j/targets?collector_id=phantom").status());
      s.polls().evaluate();
      assertEquals(List.of(Collector.of("prom-0")), s.allocator().snapshot().collectors().stream().toList());
    }
  }
}
