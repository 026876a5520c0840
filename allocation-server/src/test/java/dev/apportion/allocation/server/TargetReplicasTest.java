package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Target;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code strategy.replicas} as a user of the server meets it: each collector is served every
 * replica it holds on both protocols, the operator's page and its JSON show the setting and each
 * target's owners, {@code /metrics} counts replicas, and a reload changes the count.
 */
class TargetReplicasTest {
  @TempDir Path dir;

  private static final int TARGETS = 60;
  private static final List<String> COLLECTORS = List.of("c1", "c2", "c3", "c4", "c5");
  private static final List<String> TWO = List.of("c1", "c2");

  private Path config(int port, String strategy, String collectors) throws Exception {
    StringBuilder web = new StringBuilder("[");
    StringBuilder db = new StringBuilder("[");
    for (int i = 0; i < TARGETS; i++) {
      StringBuilder file = i % 2 == 0 ? web : db;
      file.append(file.length() > 1 ? "," : "")
          .append("{\"targets\":[\"10.0.0.%d:9100\"],\"labels\":{\"rack\":\"r%d\"}}".formatted(i, i % 3));
    }
    Files.writeString(dir.resolve("web.json"), web.append(']'));
    Files.writeString(dir.resolve("db.json"), db.append(']'));
    Path c = dir.resolve("c.yaml");
    Files.writeString(
        c,
        """
        listen: 127.0.0.1:%d
        strategy: %s
        refreshInterval: 1h
        targets:
          - fileSd: {job: web, files: [web.json]}
          - fileSd: {job: db, files: [db.json]}
        collectors:
          static: %s
        """
            .formatted(port, strategy, collectors));
    return c;
  }

  private static String collectors() {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < COLLECTORS.size(); i++) {
      b.append(i == 0 ? "" : ", ")
          .append("{name: %s, node: n%d, zone: z%d}".formatted(COLLECTORS.get(i), i, i % 2));
    }
    return b.append(']').toString();
  }

  /** Each address and the collectors it is served to, from every collector's answer on one protocol. */
  private static Map<String, List<String>> servedTo(String base, boolean httpSd) {
    return servedTo(base, httpSd, COLLECTORS);
  }

  private static Map<String, List<String>> servedTo(String base, boolean httpSd, List<String> collectors) {
    Map<String, List<String>> out = new TreeMap<>();
    for (String c : collectors) {
      List<JsonNode> answers = new ArrayList<>();
      if (httpSd) {
        answers.add(Http.get(base + "/targets?collector=" + c).json());
      } else {
        for (String job : List.of("web", "db")) {
          answers.add(Http.get(base + "/jobs/" + job + "/targets?collector_id=" + c).json());
        }
      }
      for (JsonNode groups : answers) {
        for (JsonNode g : groups) {
          for (JsonNode t : g.get("targets")) {
            out.computeIfAbsent(t.asText(), k -> new ArrayList<>()).add(c);
          }
        }
      }
    }
    return out;
  }

  /** Each address and its owners as a set, from the allocator's snapshot. */
  private static Map<String, Set<String>> owners(Allocation a) {
    Map<String, Set<String>> out = new TreeMap<>();
    for (Target t : a.targets()) {
      out.put(t.address(), new TreeSet<>(a.ownersOf(t)));
    }
    return out;
  }

  private static Map<String, Set<String>> asSets(Map<String, List<String>> served) {
    Map<String, Set<String>> out = new TreeMap<>();
    served.forEach(
        (address, cs) -> {
          assertEquals(cs.size(), new TreeSet<>(cs).size(), address + " served twice to one collector: " + cs);
          out.put(address, new TreeSet<>(cs));
        });
    return out;
  }

  @Test
  void bothProtocolsServeEachCollectorEveryReplicaItHolds() throws Exception {
    for (String strategy : List.of("consistent-hashing", "rendezvous", "least-weighted", "per-node")) {
      try (Service s =
          new Service(ServerConfig.read(config(0, "{name: " + strategy + ", replicas: 2}", collectors())))) {
        s.start();
        String base = "http://127.0.0.1:" + s.port();
        Allocation a = s.allocator().snapshot();
        assertEquals(2, a.replicas());
        assertEquals(TARGETS, a.targets().size());
        Map<String, Set<String>> expected = owners(a);
        for (boolean httpSd : List.of(true, false)) {
          Map<String, Set<String>> served = asSets(servedTo(base, httpSd));
          assertEquals(TARGETS, served.size(), strategy);
          for (Set<String> cs : served.values()) {
            assertEquals(2, cs.size(), strategy + ": two distinct collectors per target: " + cs);
          }
          assertEquals(expected, served, strategy + (httpSd ? " HTTP SD" : " target allocator"));
        }
        // Without collector_id, every collector's list of a job: each target under both owners.
        Map<String, Set<String>> all = new TreeMap<>();
        for (String job : List.of("web", "db")) {
          JsonNode byCollector = Http.get(base + "/jobs/" + job + "/targets").json();
          for (Map.Entry<String, JsonNode> e : byCollector.properties()) {
            for (JsonNode g : e.getValue().get("targets")) {
              for (JsonNode t : g.get("targets")) {
                all.computeIfAbsent(t.asText(), k -> new TreeSet<>()).add(e.getKey());
              }
            }
          }
        }
        assertEquals(expected, all, strategy);
      }
    }
  }

  @Test
  void jobsAndScrapeConfigsAreTheSameWhateverTheReplicas() throws Exception {
    List<String> one = new ArrayList<>();
    List<String> two = new ArrayList<>();
    for (List<String> out : List.of(one, two)) {
      String strategy = out == one ? "consistent-hashing" : "{name: consistent-hashing, replicas: 2}";
      try (Service s = new Service(ServerConfig.read(config(0, strategy, collectors())))) {
        s.start();
        String base = "http://127.0.0.1:" + s.port();
        out.add(Http.get(base + "/jobs").body());
        out.add(Http.get(base + "/scrape_configs").body());
      }
    }
    assertEquals(one, two);
  }

  @Test
  void thePageTheJsonAndTheMetricsShowReplicasAndOwners() throws Exception {
    try (Service s =
        new Service(ServerConfig.read(config(0, "{name: consistent-hashing, replicas: 2}", collectors())))) {
      s.start();
      String base = "http://127.0.0.1:" + s.port();
      Allocation a = s.allocator().snapshot();

      JsonNode status = Http.get(base + "/api/v1/status").json();
      assertEquals(2, status.get("replicas").asInt());
      assertTrue(status.get("strategy").asText().contains("replicas=2"), status.get("strategy").asText());
      assertEquals(TARGETS, status.get("summary").get("targets").asInt());
      assertEquals(TARGETS, status.get("summary").get("assigned").asInt());
      assertEquals(0, status.get("summary").get("underReplicated").asInt());
      int held = 0;
      for (JsonNode c : status.get("collectors")) {
        held += c.get("targets").asInt();
      }
      assertEquals(2 * TARGETS, held, "each collector counts every replica it holds");
      for (JsonNode job : status.get("jobs")) {
        assertEquals(TARGETS / 2, job.get("targets").asInt(), "a job counts its targets once: " + job);
      }

      JsonNode c1 = Http.get(base + "/api/v1/status/collectors/c1").json();
      assertTrue(c1.get("targets").size() > 0);
      Set<Integer> ranks = new TreeSet<>();
      for (JsonNode t : c1.get("targets")) {
        Target target = find(a, t.get("address").asText());
        List<String> owners = new ArrayList<>();
        t.get("owners").forEach(o -> owners.add(o.asText()));
        assertEquals(a.ownersOf(target), owners, "the owners, primary first");
        assertEquals(owners.indexOf("c1"), t.get("replica").asInt());
        ranks.add(t.get("replica").asInt());
      }
      assertEquals(Set.of(0, 1), ranks, "c1 holds primaries and second replicas");

      String page = Http.get(base + "/ui/collectors/c1").body();
      assertTrue(page.contains("<th>owners (primary first)</th>"), page);
      Target first = find(a, c1.get("targets").get(0).get("address").asText());
      String other = a.ownersOf(first).get(a.ownersOf(first).get(0).equals("c1") ? 1 : 0);
      assertTrue(page.contains("/ui/collectors/" + other + "\""), "links to the other owner " + other);
      String overview = Http.get(base + "/ui").body();
      assertTrue(overview.contains("every target on <b>2</b> collectors"), overview);
      assertTrue(overview.contains("unassigned (fewer than 2 owners)"), overview);

      String metrics = Http.get(base + "/metrics").body();
      assertTrue(metrics.contains("apportion_server_replicas 2.0"), metrics);
      Matcher m = Pattern.compile("(?m)^allocator_targets_per_collector\\{[^}]*} ([0-9.]+)$").matcher(metrics);
      double perCollector = 0;
      while (m.find()) {
        perCollector += Double.parseDouble(m.group(1));
      }
      assertEquals(2.0 * TARGETS, perCollector, "per collector, every replica counted");
    }
  }

  @Test
  void withFewerCollectorsThanReplicasThePageSaysWhoHoldsWhat() throws Exception {
    try (Service s =
        new Service(
            ServerConfig.read(config(0, "{name: rendezvous, replicas: 3}", "[{name: c1, node: n1}, {name: c2, node: n2}]")))) {
      s.start();
      String base = "http://127.0.0.1:" + s.port();
      JsonNode status = Http.get(base + "/api/v1/status").json();
      assertEquals(TARGETS, status.get("summary").get("unassigned").asInt(), "fewer than 3 owners");
      assertEquals(TARGETS, status.get("summary").get("underReplicated").asInt(), "but each on both");
      for (JsonNode job : status.get("jobs")) {
        assertEquals(TARGETS / 2, job.get("targets").asInt(), job.toString());
      }
      JsonNode reason = status.get("unassigned").get(0);
      assertEquals("on 2 of 3 collectors: fewer collectors than replicas", reason.get("reason").asText());
      assertEquals(2, reason.get("examples").get(0).get("owners").size());
      String overview = Http.get(base + "/ui").body();
      assertTrue(overview.contains("60 targets have fewer than 3 owners"), overview);
      assertFalse(overview.contains("nobody scrapes them"), overview);
      Map<String, List<String>> served = servedTo(base, true, TWO);
      assertEquals(TARGETS, served.size());
      for (List<String> cs : served.values()) {
        assertEquals(List.of("c1", "c2"), cs, "every target on both collectors");
      }
    }
  }

  @Test
  void aTargetWithoutItsPrimaryGivesThePrimarysReasonWhateverFurtherReplicasItHas() throws Exception {
    try (Service s =
        new Service(ServerConfig.read(config(0, "{name: per-node, fallback: '', replicas: 2}", collectors())))) {
      s.start();
      Allocation a = s.allocator().snapshot();
      JsonNode status = Http.get("http://127.0.0.1:" + s.port() + "/api/v1/status").json();
      JsonNode reason = status.get("unassigned").get(0);
      assertEquals("no node label (per-node without a fallback)", reason.get("reason").asText(), status.toString());
      assertEquals(TARGETS, reason.get("count").asInt());
      for (JsonNode example : reason.get("examples")) {
        Target t = find(a, example.get("address").asText());
        assertTrue(a.collectorOf(t).isEmpty());
        assertEquals(a.ownersOf(t).size(), example.get("owners").size(), "the further replica is listed");
      }
    }
  }

  @Test
  void aReloadChangesTheReplicas() throws Exception {
    int port = PrometheusEndToEndTest.freePort();
    Path file = config(port, "consistent-hashing", collectors());
    Reloader reloader = new Reloader(file, true);
    Service first = new Service(ServerConfig.read(file), null, reloader).start();
    reloader.started(first);
    try {
      String base = "http://127.0.0.1:" + port;
      for (Set<String> cs : asSets(servedTo(base, true)).values()) {
        assertEquals(1, cs.size());
      }
      config(port, "{name: consistent-hashing, replicas: 2}", collectors());
      Http.Response ok =
          Http.send(
              HttpRequest.newBuilder(URI.create(base + "/-/reload"))
                  .timeout(Duration.ofSeconds(60))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build());
      assertEquals(200, ok.status(), ok.body());
      Allocation a = reloader.current().allocator().snapshot();
      assertEquals(2, a.replicas());
      Map<String, Set<String>> served = asSets(servedTo(base, true));
      assertEquals(owners(a), served, "every target on its two owners at once (new replicas hand nothing over)");
      assertTrue(Http.get(base + "/metrics").body().contains("apportion_server_replicas 2.0"));
      JsonNode reload = Http.get(base + "/api/v1/status").json().get("changes").get(0);
      assertEquals("config reload", reload.get("why").asText(), reload.toString());
      assertEquals(TARGETS, reload.get("placed").asInt(), "every second replica placed: " + reload);
      assertEquals(0, reload.get("reassigned").asInt(), "no primary moved: " + reload);
      assertEquals(0, reload.get("dropped").asInt(), reload.toString());

      config(port, "{name: consistent-hashing, replicas: 9}", collectors());
      Http.Response bad =
          Http.send(
              HttpRequest.newBuilder(URI.create(base + "/-/reload"))
                  .timeout(Duration.ofSeconds(60))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build());
      assertEquals(500, bad.status());
      assertTrue(String.valueOf(reloader.lastError()).contains("strategy.replicas: must be a whole number"),
          String.valueOf(reloader.lastError()));
      assertEquals(2, reloader.current().allocator().snapshot().replicas(), "the running config stays");
    } finally {
      reloader.current().close();
    }
  }

  @Test
  void aCollectorThatLeavesIsDrainedOnlyOnceEveryReplicaItHeldWasPickedUp() throws Exception {
    StringBuilder t = new StringBuilder("[{\"targets\":[");
    for (int i = 0; i < 30; i++) {
      t.append(i == 0 ? "" : ",").append("\"10.0.9.").append(i).append(":9100\"");
    }
    Files.writeString(dir.resolve("t.json"), t.append("]}]"));
    Path config = dir.resolve("leave.yaml");
    Files.writeString(
        config,
        """
        listen: 127.0.0.1:0
        strategy: {name: rendezvous, replicas: 2}
        refreshInterval: 1s
        targets: [{fileSd: {job: j, files: [t.json]}}]
        collectors: {polls: {expireAfter: 3s}}
        handover: {hold: 1s}
        """);
    try (Service s = new Service(ServerConfig.read(config)).start()) {
      String base = "http://127.0.0.1:" + s.port();
      PrometheusEndToEndTest.await(
          Duration.ofSeconds(20),
          () -> {
            for (String c : List.of("x", "y", "z")) {
              Http.get(base + "/targets?collector=" + c);
            }
            PrometheusEndToEndTest.sleep(300);
            return Http.get(base + "/readyz").status() == 200
                && s.allocator().snapshot().collectors().size() == 3;
          },
          () -> "never settled");
      List<String> xyz = List.of("x", "y", "z");
      Allocation before = s.allocator().snapshot();
      Map<String, List<String>> served = servedTo(base, true, xyz);
      Set<String> xHad = new TreeSet<>();
      served.forEach((address, cs) -> {
        if (cs.contains("x")) {
          xHad.add(address);
        }
      });
      assertEquals(2 * 30, before.targetCount("x") + before.targetCount("y") + before.targetCount("z"));
      assertEquals(before.targetCount("x"), xHad.size());

      Http.Response leave =
          Http.send(HttpRequest.newBuilder(URI.create(base + "/targets?collector=x")).DELETE().build());
      assertEquals(202, leave.status(), leave.body());
      Allocation after = s.allocator().snapshot();
      Set<String> zGained = new TreeSet<>();
      for (Target target : after.targets()) {
        if (after.ownersOf(target).contains("z") && !before.ownersOf(target).contains("z")) {
          zGained.add(target.address());
        }
      }
      assertFalse(zGained.isEmpty(), "z takes some of x's replicas, y the others");
      // y and x poll; z does not: what z gained stays with x, whatever rank x held it under.
      for (int i = 0; i < 6; i++) {
        Http.get(base + "/targets?collector=y");
        Http.get(base + "/targets?collector=x");
        PrometheusEndToEndTest.sleep(300);
      }
      assertEquals(503, Http.get(base + "/drained?collector=x").status());
      Set<String> xNow = new TreeSet<>(servedTo(base, true, List.of("x")).keySet());
      assertEquals(zGained, xNow, "x keeps exactly what z has not picked up");
      Http.get(base + "/targets?collector=z");
      PrometheusEndToEndTest.await(
          Duration.ofSeconds(10),
          () -> {
            Http.get(base + "/targets?collector=x");
            PrometheusEndToEndTest.sleep(200);
            return Http.get(base + "/drained?collector=x").status() == 200;
          },
          () -> "x never drained; held " + s.handover().heldCount());
      assertEquals("[]", Http.get(base + "/targets?collector=x").body().strip());
    }
  }

  private static Target find(Allocation a, String address) {
    for (Target t : a.targets()) {
      if (t.address().equals(address)) {
        return t;
      }
    }
    throw new AssertionError("no target " + address);
  }
}
