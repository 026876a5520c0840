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
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reload on POST /-/reload and SIGHUP. */
class ReloadTest {
  @TempDir Path dir;

  private static String config(int port, String collectors) {
    return "listen: 127.0.0.1:" + port + "\nrefreshInterval: 1s\n"
        + "targets: [{fileSd: {job: j, files: [t.json]}}]\n"
        + "collectors: {static: [" + collectors + "]}\n";
  }

  private static Http.Response post(String url) {
    return Http.send(
        HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofSeconds(60))
            .POST(HttpRequest.BodyPublishers.noBody())
            .build());
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(50);
    }
  }

  @Test
  void postReloadSwapsTheConfigUnderTheSameListenerAndABadOneKeepsTheOld() throws Exception {
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\",\"b:1\",\"c:1\",\"d:1\"]}]");
    Path file = dir.resolve("c.yaml");
    int port = PrometheusEndToEndTest.freePort();
    Files.writeString(file, config(port, "x"));
    Reloader reloader = new Reloader(file, true);
    Service first = new Service(ServerConfig.read(file), null, reloader).start();
    reloader.started(first);
    try {
      String base = "http://127.0.0.1:" + port;
      await(() -> Http.get(base + "/readyz").status() == 200, "ready");
      assertEquals(4, Http.get(base + "/targets?collector=x").json().get(0).get("targets").size());

      Files.writeString(file, config(port, "x, y"));
      Http.Response ok = post(base + "/-/reload");
      assertEquals(200, ok.status(), ok.body());
      assertEquals("reloaded", ok.body().strip());
      assertEquals(
          List.of(Collector.of("x"), Collector.of("y")),
          reloader.current().allocator().snapshot().collectors().stream().toList());
      int x = Http.get(base + "/targets?collector=x").json().get(0).get("targets").size();
      int y = Http.get(base + "/targets?collector=y").json().get(0).get("targets").size();
      assertEquals(4, x, "x keeps being served what moved until y has picked it up (the handover)");
      assertEquals(4, reloader.current().allocator().snapshot().targetCount("x") + y);
      assertTrue(y > 0, "the new collector has targets at once: " + y);
      assertTrue(Http.get(base + "/metrics").body().contains("apportion_server_config_last_reload_successful 1.0"));

      Files.writeString(file, config(port, "x, y") + "collectors: {static: []}\n");
      Http.Response bad = post(base + "/-/reload");
      assertEquals(500, bad.status());
      assertTrue(bad.body().startsWith("reload failed, the running config stays"), bad.body());
      assertFalse(bad.body().contains("collectors"), "the answer quotes nothing of the file: " + bad.body());
      assertEquals(2, reloader.current().allocator().snapshot().collectors().size(), "the old config stays");
      assertEquals(200, Http.get(base + "/targets?collector=y").status());
      String metrics = Http.get(base + "/metrics").body();
      assertTrue(metrics.contains("apportion_server_config_last_reload_successful 0.0"), metrics);

      Files.writeString(file, config(port, "x, y"));
      assertEquals("unchanged", post(base + "/-/reload").body().strip());
      assertTrue(Http.get(base + "/metrics").body().contains("apportion_server_config_last_reload_successful 1.0"));
    } finally {
      reloader.current().close();
    }
  }

  @Test
  void sighupReloadsInsteadOfKillingTheProcess() throws Exception {
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\",\"b:1\"]}]");
    Path file = dir.resolve("c.yaml");
    int port = PrometheusEndToEndTest.freePort();
    Files.writeString(file, config(port, "x"));
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process p =
        new ProcessBuilder(
                java.toString(), "-cp", System.getProperty("java.class.path"), Main.class.getName(), file.toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("out.log").toFile())
            .start();
    try {
      String base = "http://127.0.0.1:" + port;
      await(
          () -> {
            try {
              return Http.get(base + "/readyz").status() == 200;
            } catch (RuntimeException e) {
              return false;
            }
          },
          "the process serving");
      Files.writeString(file, config(port, "x, y"));
      assertEquals(0, new ProcessBuilder("kill", "-HUP", Long.toString(p.pid())).start().waitFor());
      await(
          () -> Http.get(base + "/targets?collector=y").body().contains("targets"),
          "collector y to get targets after SIGHUP");
      assertTrue(p.isAlive(), "SIGHUP did not kill it");
      String log = Files.readString(dir.resolve("out.log"));
      assertTrue(log.contains("config reloaded from"), log);
    } finally {
      p.destroy();
      p.waitFor();
    }
  }
}
