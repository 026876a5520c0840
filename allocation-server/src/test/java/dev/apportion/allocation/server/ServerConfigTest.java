package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.server.ServerConfig.ConfigException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
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
    assertEquals("per-node", c.strategy());
    assertEquals("rendezvous", c.fallback());
    assertEquals(1.25, c.loadFactor());
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
    assertEquals("consistent-hashing", c.strategy());
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
        new ServerConfig.KubernetesCollectors("monitoring", "app=agent", Duration.ofSeconds(10)),
        c.collectors());
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
  }

  @Test
  void aStrategyThatRefusesAnOptionIsAConfigError() throws Exception {
    ServerConfig c =
        parse(
            """
            strategy: {name: rendezvous, fallback: per-node}
            targets: [{fileSd: {job: j, files: [t.json]}}]
            collectors: {static: [a]}
            """);
    ConfigException e = assertThrows(ConfigException.class, () -> new Service(c));
    assertTrue(e.getMessage().startsWith("strategy: "), e.getMessage());
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
