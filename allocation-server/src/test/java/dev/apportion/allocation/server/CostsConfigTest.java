package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The {@code costs:} block: defaults, every option, and errors that name the key. */
class CostsConfigTest {
  private static final Path BASE = Path.of("/etc/apportion");

  private static ServerConfig parse(String costs) throws ConfigException {
    return parse(costs, BASE);
  }

  private static ServerConfig parse(String costs, Path base) throws ConfigException {
    try {
      return ServerConfig.parse(TargetGroups.YAML.readTree("""
          targets: [{prometheus: {url: 'http://p:9090'}}]
          collectors: {static: [a]}
          """ + costs), base);
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void absentMeansCountsAndTheDefaultsAreTheScrapesSamplesByJobAndInstance() throws Exception {
    assertNull(parse("").costs());
    CostsConfig c = parse("costs: {url: 'http://thanos-query.monitoring:9090'}").costs();
    assertEquals(List.of(URI.create("http://thanos-query.monitoring:9090")), c.urls());
    assertEquals("scrape_samples_scraped", c.query());
    assertEquals(Duration.ofMinutes(1), c.refreshInterval());
    assertEquals(List.of("job", "instance"), c.labels());
    assertEquals(HttpClientOptions.NONE, c.http());
  }

  @Test
  void everyOption(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    java.nio.file.Files.createDirectories(dir.resolve("secrets"));
    java.nio.file.Files.writeString(dir.resolve("secrets/token"), "t0ken\n");
    CostsConfig c = parse("""
        costs:
          url: ['http://prom-0:9090', 'https://mimir.example/prometheus']
          query: 'max by (job, instance) (scrape_series_added)'
          refreshInterval: 2m
          labels: [job, instance, pod]
          authorization: {credentials_file: secrets/token}
          tls_config: {ca_file: /etc/ca.pem, insecure_skip_verify: true}
        """, dir).costs();
    assertEquals(List.of(URI.create("http://prom-0:9090"), URI.create("https://mimir.example/prometheus")), c.urls());
    assertEquals("max by (job, instance) (scrape_series_added)", c.query());
    assertEquals(Duration.ofMinutes(2), c.refreshInterval());
    assertEquals(List.of("job", "instance", "pod"), c.labels());
    assertEquals(new HttpClientOptions(null, null, null, "Bearer", null, dir.resolve("secrets/token"),
        Path.of("/etc/ca.pem"), null, null, true), c.http());
    CostsConfig b = parse("costs: {url: 'http://p', basic_auth: {username: u, password: hunter2}}").costs();
    assertEquals("u", b.http().username());
    assertFalse(b.toString().contains("hunter2"), b.toString());
  }

  @Test
  void errorsNameTheKey() {
    Map<String, String> bad = Map.ofEntries(
        Map.entry("costs: yes", "costs: must be a mapping"),
        Map.entry("costs: {}", "costs.url: required"),
        Map.entry("costs: {url: []}", "costs.url: must be a URL or a non-empty list of URLs"),
        Map.entry("costs: {url: 'ftp://p'}", "costs.url: must be an http or https URL"),
        Map.entry("costs: {url: ['http://p', 'x']}", "costs.url[1]: must be an http or https URL"),
        Map.entry("costs: {url: 'http://p/api/v1/query?query=up'}", "costs.url: must be the API's base URL"),
        Map.entry("costs: {url: 'http://u:hunter2@p'}", "costs.url: must not carry credentials"),
        Map.entry("costs: {url: 'http://p', querry: up}", "costs.querry: unknown key"),
        Map.entry("costs: {url: 'http://p', query: ''}", "costs.query: must not be empty"),
        Map.entry("costs: {url: 'http://p', refreshInterval: 5}", "costs.refreshInterval: must be a duration"),
        Map.entry("costs: {url: 'http://p', labels: []}", "costs.labels: must be a non-empty list"),
        Map.entry("costs: {url: 'http://p', labels: [job, job]}", "costs.labels[1]: 'job' given twice"),
        Map.entry("costs: {url: 'http://p', labels: [team-name]}", "costs.labels[0]: not a label name"),
        Map.entry("costs: {url: 'http://p', basic_auth: {password: x}}", "costs.basic_auth.username: required"),
        Map.entry("costs: {url: 'http://p', basic_auth: {username: u, password: x, password_file: f}}",
            "costs.basic_auth: give password or password_file, not both"),
        Map.entry("costs: {url: 'http://p', basic_auth: {username: u}, authorization: {credentials: t}}",
            "costs.authorization: give basic_auth or authorization, not both"),
        Map.entry("costs: {url: 'http://p', authorization: {type: Bearer}}",
            "costs.authorization: give exactly one of credentials, credentials_file"),
        Map.entry("costs: {url: 'http://p', authorization: {type: Basic, credentials: x}}",
            "costs.authorization.type: use basic_auth for Basic"),
        Map.entry("costs: {url: 'http://p', tls_config: {insecure_skip_verify: maybe}}",
            "costs.tls_config.insecure_skip_verify: must be true or false"),
        Map.entry("costs: {url: 'http://p', tls_config: {certfile: c}}", "costs.tls_config.certfile: unknown key"));
    for (Map.Entry<String, String> e : bad.entrySet()) {
      ConfigException x = assertThrows(ConfigException.class, () -> parse(e.getKey()), e.getKey());
      assertTrue(x.getMessage().startsWith(e.getValue()), e.getKey() + " -> " + x.getMessage());
      assertFalse(x.getMessage().contains("hunter2"));
    }
  }
}
