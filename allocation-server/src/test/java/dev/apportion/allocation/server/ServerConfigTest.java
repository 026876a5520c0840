package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerConfigTest {
  @TempDir Path dir;

  private ServerConfig parse(String yaml) throws IOException, ConfigException {
    Path f = dir.resolve("c.yaml");
    Files.writeString(f, yaml);
    return ServerConfig.read(f);
  }

  private String error(String yaml) throws IOException {
    Path f = dir.resolve("c.yaml");
    Files.writeString(f, yaml);
    ConfigException e = assertThrows(ConfigException.class, () -> ServerConfig.read(f));
    assertTrue(!e.getMessage().contains("\n"), "one line: " + e.getMessage());
    return e.getMessage();
  }

  @Test
  void aFullConfigParses() throws Exception {
    ServerConfig c =
        parse(
            """
            listen: ':9000'
            strategy: {name: per-node, fallback: rendezvous, loadFactor: 1.25}
            refreshInterval: 2s
            requestTimeout: 500ms
            targets:
              - fileSd: {job: nodes, files: [sd/*.json, /abs/x.yaml]}
              - httpSd: {job: apps, url: 'http://sd:8080/targets'}
              - prometheus: {url: 'http://prometheus:9090'}
            collectors:
              static:
                - {name: a, node: n1}
                - b
            scrapeConfigs:
              nodes: {scrape_interval: 30s, metrics_path: /metrics}
            """);
    assertEquals(9000, c.listen().getPort());
    assertEquals("per-node", c.strategy().name());
    assertEquals("rendezvous", c.strategy().fallback());
    assertEquals(1.25, c.strategy().loadFactor());
    assertEquals(Duration.ofSeconds(2), c.refreshInterval());
    assertEquals(Duration.ofMillis(500), c.requestTimeout());
    ServerConfig.FileSd f = assertInstanceOf(ServerConfig.FileSd.class, c.targets().get(0));
    assertEquals(List.of(dir.resolve("sd/*.json"), Path.of("/abs/x.yaml")), f.files());
    assertEquals(URI.create("http://sd:8080/targets"), ((ServerConfig.HttpSd) c.targets().get(1)).url());
    assertInstanceOf(ServerConfig.PrometheusApi.class, c.targets().get(2));
    assertEquals(
        List.of(Collector.of("a", "n1"), Collector.of("b")),
        ((ServerConfig.StaticCollectors) c.collectors()).collectors());
    assertEquals("30s", c.scrapeConfigs().get("nodes").get("scrape_interval"));
  }

  @Test
  void theShippedExampleIsValidAndReadsItsTargets() throws Exception {
    // Surefire runs in the module's folder.
    ServerConfig c = ServerConfig.read(Path.of("example/apportion.yaml"));
    try (Service s = new Service(c)) {
      s.feed().refresh();
      assertEquals(6, s.allocator().snapshot().targets().size());
      assertTrue(s.isReady());
    }
  }

  /** The annotated config in docs/server.md, with every key, is a valid config. */
  @Test
  void theDocumentedConfigParses() throws Exception {
    String doc = Files.readString(Path.of("../docs/server.md"));
    int start = doc.indexOf("```yaml\nlisten: 0.0.0.0:8080");
    assertTrue(start >= 0, "docs/server.md has the annotated config");
    String yaml = doc.substring(start + "```yaml\n".length(), doc.indexOf("```", start + 7));
    ServerConfig c = parse(yaml);
    assertEquals(Allocators.ZONE, c.strategy().partitionBy());
    assertEquals(500, c.strategy().maxTargetsPerCollector());
    assertEquals(3, ((ServerConfig.StaticCollectors) c.collectors()).collectors().size());
  }

  @Test
  void defaultsAndPolls() throws Exception {
    ServerConfig c =
        parse(
            """
            targets: [{fileSd: {job: j, files: [t.json]}}]
            refreshInterval: 5s
            collectors: {polls: {expected: 3}}
            """);
    assertEquals(8080, c.listen().getPort());
    assertEquals("consistent-hashing", c.strategy().name());
    ServerConfig.PollCollectors p = (ServerConfig.PollCollectors) c.collectors();
    assertEquals(Duration.ofSeconds(15), p.expireAfter());
    assertEquals(3, p.expected());
  }

  @Test
  void kubernetesCollectors() throws Exception {
    ServerConfig c =
        parse(
            """
            targets: [{prometheus: {url: 'http://p:9090'}}]
            collectors:
              kubernetes: {namespace: monitoring, labelSelector: 'app=agent', notReadyGracePeriod: 10s}
            """);
    assertEquals(
        new ServerConfig.KubernetesCollectors("monitoring", "app=agent", Duration.ofSeconds(10), true, false, false),
        c.collectors());
    ServerConfig k =
        parse(
            """
            targets: [{prometheus: {url: 'http://p:9090'}}]
            collectors:
              kubernetes: {namespace: m, labelSelector: 'app=agent', readyFirst: false, nodeZones: true}
            """);
    assertEquals(
        new ServerConfig.KubernetesCollectors("m", "app=agent", Duration.ofSeconds(30), false, true, false),
        k.collectors());
  }

  @Test
  void everyStrategyOptionAndCollectorAttributeParses() throws Exception {
    ServerConfig c =
        parse(
            """
            strategy:
              name: consistent-hashing
              loadFactor: 1.5
              zoneAware: true
              maxSkew: 2
              maxTargetsPerCollector: 100
              maxCostPerCollector: 5000000000
              movedShareWarning: 0.25
              replicas: 2
            targets: [{fileSd: {job: j, files: [t.json]}}]
            collectors:
              static:
                - {name: a, node: n1, zone: z1, capacity: 2.5, labels: {rack: r1}}
                - {name: b, zone: z2}
            """);
    assertEquals(
        new ServerConfig.StrategyConfig(
            "consistent-hashing", null, 1.5, Allocators.ZONE, 2.0, 100, 5_000_000_000L, 0.25, 2),
        c.strategy());
    assertEquals(
        List.of(
            Collector.of("a", "n1", "z1").withCapacity(2.5).withLabels(Map.of("rack", "r1")),
            Collector.of("b", null, "z2")),
        ((ServerConfig.StaticCollectors) c.collectors()).collectors());
    String ok = "targets: [{fileSd: {job: j, files: [t.json]}}]\ncollectors: {static: [a]}\n";
    assertEquals("", parse(ok + "strategy: {name: per-node, zoneAware: false}\n").strategy().partitionBy());
    assertEquals("", parse(ok + "strategy: {name: per-node, partitionBy: ''}\n").strategy().partitionBy());
    assertEquals("rack", parse(ok + "strategy: {name: rendezvous, partitionBy: rack}\n").strategy().partitionBy());
    ServerConfig.PollCollectors p =
        (ServerConfig.PollCollectors)
            parse("targets: [{fileSd: {job: j, files: [t.json]}}]\ncollectors: {polls: {allow: 'prom-[0-9]+'}}\n")
                .collectors();
    assertEquals("prom-[0-9]+", p.allow());
  }

  /** Zones and the zone-aware option reach the allocator: each zone's targets stay in it. */
  @Test
  void zoneAwarePlacementKeepsTargetsInTheirCollectorsZone() throws Exception {
    StringBuilder sd = new StringBuilder();
    for (String zone : List.of("z1", "z2")) {
      sd.append("- labels: {__meta_kubernetes_endpointslice_endpoint_zone: ").append(zone).append("}\n  targets: [");
      for (int i = 0; i < 8; i++) {
        sd.append(i == 0 ? "" : ", ").append("'").append(zone).append("-t").append(i).append(":1'");
      }
      sd.append("]\n");
    }
    Files.writeString(dir.resolve("t.yaml"), sd);
    ServerConfig c =
        parse(
            """
            strategy: {name: consistent-hashing, zoneAware: true, loadFactor: 4}
            targets: [{fileSd: {job: j, files: [t.yaml]}}]
            collectors:
              static:
                - {name: a, zone: z1}
                - {name: b, zone: z2}
                - {name: c, zone: z2}
            """);
    try (Service s = new Service(c)) {
      s.feed().refresh();
      Allocation snap = s.allocator().snapshot();
      assertEquals(16, snap.targets().size());
      assertEquals(8, snap.targetsFor("a", "j").size(), "a alone serves z1");
      for (Target t : snap.targetsFor("a", "j")) {
        assertTrue(t.address().startsWith("z1-"), t.address());
      }
      for (String other : List.of("b", "c")) {
        for (Target t : snap.targetsFor(other, "j")) {
          assertTrue(t.address().startsWith("z2-"), other + " holds " + t.address());
        }
      }
    }
  }

  /** The per-collector limit and capacities reach the allocator. */
  @Test
  void maxTargetsPerCollectorScalesWithCapacity() throws Exception {
    StringBuilder sd = new StringBuilder("- targets: [");
    for (int i = 0; i < 8; i++) {
      sd.append(i == 0 ? "" : ", ").append("'t").append(i).append(":1'");
    }
    Files.writeString(dir.resolve("t.yaml"), sd.append("]\n"));
    ServerConfig c =
        parse(
            """
            strategy: {name: rendezvous, maxTargetsPerCollector: 2}
            targets: [{fileSd: {job: j, files: [t.yaml]}}]
            collectors:
              static:
                - {name: a, capacity: 2}
                - {name: b}
            """);
    try (Service s = new Service(c)) {
      s.feed().refresh();
      Allocation snap = s.allocator().snapshot();
      assertEquals(4, snap.targetsFor("a", "j").size());
      assertEquals(2, snap.targetsFor("b", "j").size());
      assertEquals(2, snap.unassigned().size());
    }
  }

  @Test
  void badConfigsAreOneLineErrorsNamingTheKey() throws IOException {
    String ok = "targets: [{fileSd: {job: j, files: [t.json]}}]\ncollectors: {static: [a]}\n";
    assertTrue(error(ok + "strategy: nope\n").contains("strategy: unknown strategy 'nope'"));
    assertTrue(error(ok + "listen: nowhere\n").contains("listen: must be host:port"));
    assertTrue(error(ok + "refreshInterval: soon\n").contains("refreshInterval: must be a duration"));
    assertTrue(error(ok + "colectors: {}\n").contains("colectors: unknown key"));
    assertTrue(error("collectors: {static: [a]}\n").contains("targets: must be a non-empty list"));
    assertTrue(error("targets: [{fileSd: {job: j, files: [t.json]}}]\n").contains("collectors: missing"));
    assertTrue(
        error("targets: [{ftp: {}}]\ncollectors: {static: [a]}\n").contains("targets[0]: unknown source 'ftp'"));
    assertTrue(
        error("targets: [{httpSd: {job: j, url: 'file:///etc/passwd'}}]\ncollectors: {static: [a]}\n")
            .contains("targets[0].httpSd.url: must be an http or https URL"));
    assertTrue(
        error("targets: [{fileSd: {job: j, files: [t.json]}}]\ncollectors: {static: [a, a]}\n")
            .contains("duplicate collector name 'a'"));
    assertTrue(error(ok + "strategy: {name: rendezvous, loadFactor: 0.5}\n").contains("loadFactor"));
    assertTrue(error("targets: [unclosed\n").contains("not valid YAML"));

    // Strategy options and collector attributes: each error names its key's path.
    assertTrue(error(ok + "strategy: {name: rendezvous, maxSkw: 2}\n").contains("strategy.maxSkw: unknown key"));
    assertTrue(error(ok + "strategy: {name: rendezvous, maxSkew: 0.5}\n").contains("strategy.maxSkew: "));
    assertTrue(error(ok + "strategy: {name: rendezvous, zoneAware: 3}\n").contains("strategy.zoneAware: must be true or false"));
    assertTrue(
        error(ok + "strategy: {name: rendezvous, zoneAware: true, partitionBy: rack}\n")
            .contains("strategy.partitionBy: give zoneAware or partitionBy, not both"));
    assertTrue(error(ok + "strategy: {name: rendezvous, maxTargetsPerCollector: 0}\n").contains("strategy.maxTargetsPerCollector: must be a whole number"));
    assertTrue(error(ok + "strategy: {name: rendezvous, maxTargetsPerCollector: 3000000000}\n").contains("strategy.maxTargetsPerCollector: "));
    assertTrue(error(ok + "strategy: {name: rendezvous, maxCostPerCollector: 1.5}\n").contains("strategy.maxCostPerCollector: "));
    assertTrue(
        error(ok + "strategy: {name: rendezvous, maxCostPerCollector: 99999999999999999999999}\n")
            .contains("strategy.maxCostPerCollector: "));
    assertTrue(error(ok + "strategy: {name: rendezvous, movedShareWarning: 2}\n").contains("strategy.movedShareWarning: "));
    assertTrue(error(ok + "strategy: {name: rendezvous, loadFactor: 1e999}\n").contains("strategy.loadFactor: "));
    for (String replicas : List.of("0", "9", "1.5", "two", "-1", "[2]", "99999999999999999999")) {
      assertTrue(
          error(ok + "strategy: {name: consistent-hashing, replicas: " + replicas + "}\n")
              .contains("strategy.replicas: must be a whole number from 1 to 8"),
          replicas);
    }
    String t = "targets: [{fileSd: {job: j, files: [t.json]}}]\n";
    assertTrue(
        error(t + "collectors: {static: [{name: a, node: [x]}]}\n").contains("collectors.static[0].node: must be a scalar"));
    assertTrue(error(t + "collectors: {static: [{name: a, capacity: 0}]}\n").contains("collectors.static[0].capacity: "));
    assertTrue(error(t + "collectors: {static: [{name: a, capacity: x}]}\n").contains("collectors.static[0].capacity: "));
    assertTrue(error(t + "collectors: {static: [{name: a, zone: z, rack: r}]}\n").contains("collectors.static[0].rack: unknown key"));
    assertTrue(
        error(t + "collectors: {kubernetes: {namespace: m, labelSelector: a=b, readyFirst: maybe}}\n")
            .contains("collectors.kubernetes.readyFirst: must be true or false"));
    assertTrue(
        error(t + "collectors: {kubernetes: {namespace: m, labelSelector: a=b, nodeZone: true}}\n")
            .contains("collectors.kubernetes.nodeZone: unknown key"));
    assertTrue(error(t + "collectors: {polls: {allow: '(unclosed'}}\n").contains("collectors.polls.allow: bad regular expression"));

    // Values that used to escape as exceptions.
    assertTrue(error(ok + "refreshInterval: 3000000h\n").contains("refreshInterval: longer than 8760h"));
    assertTrue(error(ok + "refreshInterval: 99999999999999999999999s\n").contains("refreshInterval: longer than"));
    assertTrue(error(ok + "requestTimeout: 9223372036854775807ms\n").contains("requestTimeout: longer than"));
    assertTrue(
        error(t + "collectors: {polls: {expireAfter: 600000m}}\n").contains("collectors.polls.expireAfter: longer than"));
    assertTrue(
        error("targets: [{fileSd: {job: j, files: ['sd/[.json']}}]\ncollectors: {static: [a]}\n")
            .contains("targets[0].fileSd.files[0]: bad glob '[.json'"));
    assertTrue(error(ok + "listen: 'no-such-host.invalid:8080'\n").contains("listen: cannot resolve host 'no-such-host.invalid'"));
  }

  @Test
  void mainExitsWithTwoAndOneLineForValuesThatUsedToThrow() throws IOException {
    String ok = "targets: [{fileSd: {job: j, files: [t.json]}}]\ncollectors: {static: [a]}\n";
    List<String> bad =
        List.of(
            ok + "refreshInterval: 3000000h\n",
            ok + "listen: 'no-such-host.invalid:8080'\n",
            "targets: [{fileSd: {job: j, files: ['[.json']}}]\ncollectors: {static: [a]}\n",
            ok + "strategy: {name: rendezvous, maxSkew: 0.5}\n",
            ok + "strategy: {name: per-node, replicas: 0}\n");
    for (String yaml : bad) {
      Path f = dir.resolve("bad.yaml");
      Files.writeString(f, yaml);
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      int status = Main.run(new String[] {f.toString()}, new PrintStream(bytes, true, StandardCharsets.UTF_8));
      String out = bytes.toString(StandardCharsets.UTF_8);
      assertEquals(2, status, yaml + " -> " + out);
      assertEquals(1, out.lines().count(), out);
      assertTrue(out.startsWith("apportion-server: bad config: " + f + ": "), out);
    }
  }

  @Test
  void aStrategyThatRefusesAnOptionIsAConfigErrorAtLoadTime() throws Exception {
    String e =
        error(
            """
            strategy: {name: rendezvous, fallback: per-node}
            targets: [{fileSd: {job: j, files: [t.json]}}]
            collectors: {static: [a]}
            """);
    assertTrue(e.contains(": strategy.fallback: strategy 'rendezvous' uses no fallback strategy"), e);
  }

  @Test
  void mainExitsWithTwoAndOneLineForABadConfig() throws IOException {
    Path f = dir.resolve("bad.yaml");
    Files.writeString(f, "strategy: nope\n");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status = Main.run(new String[] {f.toString()}, new PrintStream(bytes, true, StandardCharsets.UTF_8));
    assertEquals(2, status);
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertEquals(1, out.lines().count(), out);
    assertTrue(out.startsWith("apportion-server: bad config: " + f), out);

    bytes.reset();
    assertEquals(2, Main.run(new String[] {}, new PrintStream(bytes, true, StandardCharsets.UTF_8)));
    assertEquals(2, Main.run(new String[] {dir.resolve("missing.yaml").toString()}, new PrintStream(bytes, true, StandardCharsets.UTF_8)));
    assertTrue(bytes.toString(StandardCharsets.UTF_8).contains("no such file"));
  }
}
