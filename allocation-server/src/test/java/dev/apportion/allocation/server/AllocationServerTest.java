package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AllocationServerTest {
  private Allocator allocator;
  private AllocationServer server;
  private final AtomicBoolean ready = new AtomicBoolean(false);
  private String base;

  @BeforeEach
  void start() throws IOException {
    allocator = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    allocator.setCollectors(List.of(Collector.of("a"), Collector.of("b"), Collector.of("c")));
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      targets.add(Target.of("node", "10.0.0." + i + ":9100", Map.of("__meta_kubernetes_pod_name", "p" + i, "team", "x")));
      targets.add(Target.of("app/api", "10.0.1." + i + ":8080", Map.of("team", i % 2 == 0 ? "x" : "y")));
    }
    allocator.setTargets(targets);
    server =
        AllocationServer.builder(allocator)
            .readiness(ready::get)
            .metrics(() -> "# a metric\nup 1\n")
            .scrapeConfigs(Map.of("node", Map.of("scrape_interval", "15s")))
            .build()
            .start();
    base = "http://127.0.0.1:" + server.port();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void httpSdGivesEachCollectorItsTargetsGroupedByJobWithTheJobLabel() {
    Allocation snapshot = allocator.snapshot();
    Set<String> seen = new HashSet<>();
    for (String collector : List.of("a", "b", "c")) {
      Http.Response r = Http.get(base + "/targets?collector=" + collector);
      assertEquals(200, r.status());
      Set<String> mine = new HashSet<>();
      String lastJob = "";
      for (JsonNode group : r.json()) {
        String job = group.get("labels").get("job").asText();
        assertTrue(job.compareTo(lastJob) >= 0, "groups in job order");
        lastJob = job;
        assertTrue(!group.get("labels").has("__address__"));
        for (JsonNode t : group.get("targets")) {
          mine.add(job + " " + t.asText());
        }
      }
      Set<String> expected = new HashSet<>();
      for (String job : snapshot.jobsFor(collector)) {
        for (Target t : snapshot.targetsFor(collector, job)) {
          expected.add(job + " " + t.address());
        }
      }
      assertEquals(expected, mine, collector);
      for (String m : mine) {
        assertTrue(seen.add(m), "served to two collectors: " + m);
      }
    }
    assertEquals(60, seen.size());
  }

  @Test
  void targetsWithTheSameLabelsShareAGroup() {
    Allocator one = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
    one.setCollectors(List.of(Collector.of("only")));
    one.setTargets(
        List.of(
            Target.of("j", "h1:1", Map.of("team", "x")),
            Target.of("j", "h2:1", Map.of("team", "x")),
            Target.of("j", "h3:1", Map.of("team", "y"))));
    JsonNode groups = TargetGroups.JSON.valueToTree(List.of());
    try {
      groups = TargetGroups.JSON.readTree(new Rendering(Map.of()).httpSd(one.snapshot(), "only"));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    assertEquals(2, groups.size(), groups.toString());
    int total = 0;
    for (JsonNode g : groups) {
      total += g.get("targets").size();
      assertEquals("j", g.get("labels").get("job").asText());
    }
    assertEquals(3, total);
  }

  @Test
  void unknownCollectorGetsAnEmptyListAndAMissingOneIsABadRequest() {
    assertEquals("[]", Http.get(base + "/targets?collector=nobody").body().trim());
    Http.Response missing = Http.get(base + "/targets");
    assertEquals(400, missing.status());
    assertTrue(missing.body().contains("collector"));
  }

  @Test
  void jobsListsEveryJobWithItsEscapedLink() {
    JsonNode jobs = Http.get(base + "/jobs").json();
    assertEquals(Set.of("app/api", "node"), fieldNames(jobs));
    assertEquals("/jobs/app%2Fapi/targets", jobs.get("app/api").get("_link").asText());
    assertEquals("/jobs/node/targets", jobs.get("node").get("_link").asText());
  }

  @Test
  void jobTargetsPerCollectorHasUpstreamsShapeOneGroupPerTarget() {
    Allocation snapshot = allocator.snapshot();
    for (String collector : List.of("a", "b", "c")) {
      JsonNode r = Http.get(base + "/jobs/app%2Fapi/targets?collector_id=" + collector).json();
      List<Target> expected = snapshot.targetsFor(collector, "app/api");
      assertEquals(expected.size(), r.size());
      for (int i = 0; i < r.size(); i++) {
        assertEquals(List.of(expected.get(i).address()), List.of(r.get(i).get("targets").get(0).asText()));
        assertEquals(1, r.get(i).get("targets").size());
        assertEquals(expected.get(i).labels().get("team"), r.get(i).get("labels").get("team").asText());
      }
    }
    assertEquals("[]", Http.get(base + "/jobs/nojob/targets?collector_id=a").body().trim());
  }

  @Test
  void jobTargetsWithoutACollectorListsEveryCollectorWithALink() {
    JsonNode r = Http.get(base + "/jobs/node/targets").json();
    assertEquals(Set.of("a", "b", "c"), fieldNames(r));
    int total = 0;
    for (String c : List.of("a", "b", "c")) {
      assertEquals("/jobs/node/targets?collector_id=" + c, r.get(c).get("_link").asText());
      total += r.get(c).get("targets").size();
    }
    assertEquals(30, total);
  }

  @Test
  void scrapeConfigsNamesEveryJobWithItsConfiguredSettings() {
    JsonNode r = Http.get(base + "/scrape_configs").json();
    assertEquals(Set.of("app/api", "node"), fieldNames(r));
    assertEquals("node", r.get("node").get("job_name").asText());
    assertEquals("15s", r.get("node").get("scrape_interval").asText());
    assertEquals("app/api", r.get("app/api").get("job_name").asText());
  }

  @Test
  void healthReadinessAndMetrics() {
    assertEquals(200, Http.get(base + "/livez").status());
    assertEquals(503, Http.get(base + "/readyz").status());
    ready.set(true);
    assertEquals(200, Http.get(base + "/readyz").status());
    Http.Response m = Http.get(base + "/metrics");
    assertEquals(200, m.status());
    assertTrue(m.body().contains("up 1"));
  }

  @Test
  void answersFollowTheAllocatorsLatestSnapshot() {
    String before = Http.get(base + "/jobs").body();
    allocator.setTargets(List.of(Target.of("other", "h:1")));
    JsonNode after = Http.get(base + "/jobs").json();
    assertEquals(Set.of("other"), fieldNames(after), before);
  }

  @Test
  void refusesOtherMethodsBodiesLongUrisAndUnknownPaths() throws IOException {
    Http.Response post =
        Http.send(
            HttpRequest.newBuilder(URI.create(base + "/jobs"))
                .POST(HttpRequest.BodyPublishers.ofString("x"))
                .build());
    assertEquals(405, post.status());
    Http.Response withBody =
        Http.send(
            HttpRequest.newBuilder(URI.create(base + "/jobs"))
                .method("GET", HttpRequest.BodyPublishers.ofString("x"))
                .build());
    assertEquals(413, withBody.status());
    assertEquals(414, Http.get(base + "/targets?collector=" + "x".repeat(AllocationServer.MAX_URI_LENGTH)).status());
    assertEquals(404, Http.get(base + "/etc/passwd").status());
    assertEquals(404, Http.get(base + "/jobs/a/b/targets").status());
    assertTrue(raw("GET /targets?collector=%zz HTTP/1.1").startsWith("HTTP/1.1 400"));
  }

  @Test
  void pathTraversalInARawRequestReachesNoFile() throws IOException {
    for (String path : List.of("/../../etc/passwd", "/jobs/..%2F..%2Fetc%2Fpasswd/targets?collector_id=a")) {
      String answer = raw("GET " + path + " HTTP/1.1");
      assertTrue(
          answer.startsWith("HTTP/1.1 404") || answer.startsWith("HTTP/1.1 400") || answer.contains("\r\n\r\n[]"),
          answer);
      assertTrue(!answer.contains("root:"), answer);
    }
  }

  private String raw(String requestLine) throws IOException {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      OutputStream out = s.getOutputStream();
      out.write((requestLine + "\r\nHost: x\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void pollsAreReportedToTheMembership() {
    List<List<Collector>> published = new ArrayList<>();
    PollMembership polls =
        PollMembership.builder(published::add)
            .settle(java.time.Duration.ofMillis(50))
            .expireAfter(java.time.Duration.ofSeconds(30))
            .holdAtStart(false)
            .build();
    AllocationServer withPolls = AllocationServer.builder(allocator).polls(polls).build();
    try {
      withPolls.start();
      String b = "http://127.0.0.1:" + withPolls.port();
      for (int i = 0; i < 2; i++) { // a name joins after two polls a settle interval apart
        assertEquals(200, Http.get(b + "/targets?collector=x&node=n1").status());
        assertEquals(200, Http.get(b + "/jobs/node/targets?collector_id=y").status());
        assertEquals(200, Http.get(b + "/jobs/node/targets").status());
        Thread.sleep(200);
      }
      polls.evaluate();
      assertEquals(List.of(List.of(Collector.of("x", "n1"), Collector.of("y"))), published);
    } catch (IOException e) {
      throw new AssertionError(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    } finally {
      withPolls.close();
    }
  }

  @Test
  void answersAreWholeSnapshotsWhileAWriterKeepsChangingTheTargets() throws Exception {
    List<Target> setA = new ArrayList<>();
    List<Target> setB = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      setA.add(Target.of("a", "10.1.0." + i + ":1"));
      setB.add(Target.of("b", "10.2.0." + i + ":1"));
    }
    allocator.setTargets(setA);
    Map<String, String> answersA = new java.util.HashMap<>();
    for (String c : List.of("a", "b", "c")) {
      answersA.put(c, Http.get(base + "/targets?collector=" + c).body());
    }
    allocator.setTargets(setB);
    Map<String, String> answersB = new java.util.HashMap<>();
    for (String c : List.of("a", "b", "c")) {
      answersB.put(c, Http.get(base + "/targets?collector=" + c).body());
    }
    AtomicBoolean stop = new AtomicBoolean();
    Thread writer =
        new Thread(
            () -> {
              boolean flip = false;
              while (!stop.get()) {
                allocator.setTargets(flip ? setA : setB);
                flip = !flip;
                try {
                  Thread.sleep(1); // leaves the requests a core on a 2-core machine
                } catch (InterruptedException e) {
                  return;
                }
              }
            });
    writer.start();
    Set<String> seen = new HashSet<>();
    try {
      for (int i = 0; i < 150; i++) {
        String c = List.of("a", "b", "c").get(i % 3);
        String body = Http.get(base + "/targets?collector=" + c).body();
        assertTrue(body.equals(answersA.get(c)) || body.equals(answersB.get(c)), "a mixed answer: " + body);
        seen.add(body.equals(answersA.get(c)) ? "A" : "B");
      }
    } finally {
      stop.set(true);
      writer.join();
    }
    assertEquals(Set.of("A", "B"), seen, "both states were served while the writer ran");
  }

  private static Set<String> fieldNames(JsonNode n) {
    Set<String> out = new HashSet<>();
    n.fieldNames().forEachRemaining(out::add);
    return out;
  }
}
