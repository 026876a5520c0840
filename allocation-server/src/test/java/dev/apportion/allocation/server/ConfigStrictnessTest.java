package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The config is as strict as documented. */
class ConfigStrictnessTest {
  @TempDir Path dir;

  private static final String T = "targets: [{fileSd: {job: j, files: [t.json]}}]\n";
  private static final String OK = T + "collectors: {static: [a]}\n";

  private String error(String yaml) throws IOException {
    Path f = dir.resolve("c.yaml");
    Files.writeString(f, yaml);
    return error(f);
  }

  private static String error(Path f) {
    ConfigException e =
        assertTimeoutPreemptively(
            Duration.ofSeconds(10), () -> assertThrows(ConfigException.class, () -> ServerConfig.read(f)));
    assertTrue(!e.getMessage().contains("\n"), "one line: " + e.getMessage());
    return e.getMessage();
  }

  @Test
  void duplicateKeysAliasesAndSecondDocumentsAreErrors() throws IOException {
    String dup = error(T + "collectors: {static: [a, b]}\ncollectors: {static: []}\n");
    assertTrue(dup.contains("Duplicate field 'collectors'"), dup);
    String alias = error(T + "collectors: {static: [{name: a, node: &n node-1}, {name: b, node: *n}]}\n");
    assertTrue(alias.contains("YAML aliases (*n)"), alias);
    String second = error(OK + "---\n" + OK);
    assertTrue(second.contains("a second YAML document"), second);
  }

  @Test
  void theConfigPathMustBeARegularFile() throws Exception {
    assertTrue(error(Path.of("/dev/zero")).contains("not a regular file"));
    assertTrue(error(dir).contains("not a regular file"));
    Path fifo = dir.resolve("fifo.yaml");
    if (new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0) {
      assertTrue(error(fifo).contains("not a regular file"));
    }
    Path unreadable = dir.resolve("secret.yaml");
    Files.writeString(unreadable, OK);
    if (unreadable.toFile().setReadable(false) && !Files.isReadable(unreadable)) {
      assertTrue(error(unreadable).contains("permission denied"), error(unreadable));
    }
  }

  @Test
  void badValuesAreNamedByTheirKey() throws IOException {
    String nan = error(OK + "strategy: {name: rendezvous, loadFactor: .nan}\n");
    assertTrue(nan.contains("strategy.loadFactor: "), nan);
    String cap = error(T + "collectors: {static: [{name: a, capacity: .inf}]}\n");
    assertTrue(cap.contains("collectors.static[0].capacity: "), cap);
    assertTrue(error(OK + "refreshInterval: 1ms\n").contains("refreshInterval: shorter than the minimum"));
    assertTrue(error(T + "collectors: {static: [\"a\\0b\"]}\n").contains("collectors.static[0]"));
    assertTrue(error(T + "collectors: {static: [\"a\\eb\"]}\n").contains("control character"));
    assertTrue(error(T + "collectors: {static: [{name: a, node: \"n\\n1\"}]}\n").contains("collectors.static[0].node: contains a control character"));
  }

  @Test
  void fileSdPathsThatCanNeverHoldTargetsAreConfigErrors() throws IOException {
    Files.createDirectory(dir.resolve("sub"));
    String globDir = error("targets: [{fileSd: {job: j, files: ['*/t.json']}}]\ncollectors: {static: [a]}\n");
    assertTrue(globDir.contains("targets[0].fileSd.files[0]: a glob only in the last path element"), globDir);
    String directory = error("targets: [{fileSd: {job: j, files: [sub]}}]\ncollectors: {static: [a]}\n");
    assertTrue(directory.contains("targets[0].fileSd.files[0]: not a regular file"), directory);
    String device = error("targets: [{fileSd: {job: j, files: [/dev/zero]}}]\ncollectors: {static: [a]}\n");
    assertTrue(device.contains("not a regular file"), device);
  }

  @Test
  void scrapeConfigsAreCheckedAgainstPrometheusFieldsAndTypes() throws IOException {
    String noUnit = error(OK + "scrapeConfigs: {j: {scrape_interval: 30}}\n");
    assertTrue(noUnit.contains("scrapeConfigs.j.scrape_interval: must be a Prometheus duration"), noUnit);
    assertTrue(error(OK + "scrapeConfigs: {j: {scrape_intervl: 30s}}\n").contains("scrapeConfigs.j.scrape_intervl: not a Prometheus scrape_config field"));
    assertTrue(error(OK + "scrapeConfigs: {j: {honor_labels: yes please}}\n").contains("scrapeConfigs.j.honor_labels: must be true or false"));
    assertTrue(error(OK + "scrapeConfigs: {j: {sample_limit: -1}}\n").contains("scrapeConfigs.j.sample_limit: "));
    assertTrue(error(OK + "scrapeConfigs: {j: {body_size_limit: 10 MB}}\n").contains("scrapeConfigs.j.body_size_limit: "));
    assertTrue(error(OK + "scrapeConfigs: {j: {scheme: ftp}}\n").contains("scrapeConfigs.j.scheme: must be http or https"));
    assertTrue(error(OK + "scrapeConfigs: {j: {scrape_interval: 10s, scrape_timeout: 1m}}\n").contains("scrapeConfigs.j.scrape_timeout: longer than scrape_interval"));
    assertTrue(error(OK + "scrapeConfigs: {j: {relabel_configs: {a: b}}}\n").contains("scrapeConfigs.j.relabel_configs: must be a list"));
    assertTrue(error(OK + "scrapeConfigs: {j: {kubernetes_sd_configs: []}}\n").contains("service discovery is the server's"));
    assertTrue(error(OK + "scrapeConfigs: {j: {job_name: other}}\n").contains("scrapeConfigs.j.job_name: set by the server"));
    Path good = dir.resolve("good.yaml");
    Files.writeString(
        good,
        OK
            + "scrapeConfigs: {j: {scrape_interval: 1m30s, scrape_timeout: 10s, metrics_path: /m, scheme: https,"
            + " honor_labels: true, sample_limit: 1000, body_size_limit: 10MB,"
            + " relabel_configs: [{action: drop, source_labels: [x]}], params: {module: [a]}}}\n");
    Files.writeString(dir.resolve("t.json"), "[]");
    try {
      assertEquals("1m30s", ServerConfig.read(good).scrapeConfigs().get("j").get("scrape_interval"));
    } catch (ConfigException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  @Test
  void mainPrintsOneLineAndExitsTwoForEachStrictnessError() throws IOException {
    List<String> bad =
        List.of(
            T + "collectors: {static: [a]}\ncollectors: {static: []}\n",
            T + "collectors: {static: [{name: a, node: &n x}, {name: b, node: *n}]}\n",
            OK + "scrapeConfigs: {j: {scrape_interval: 30}}\n",
            OK + "refreshInterval: 1ms\n");
    for (String yaml : bad) {
      Path f = dir.resolve("bad.yaml");
      Files.writeString(f, yaml);
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      int status = Main.run(new String[] {f.toString()}, new PrintStream(bytes, true, StandardCharsets.UTF_8));
      String out = bytes.toString(StandardCharsets.UTF_8);
      assertEquals(2, status, yaml + " -> " + out);
      assertEquals(1, out.lines().count(), out);
    }
  }
}
