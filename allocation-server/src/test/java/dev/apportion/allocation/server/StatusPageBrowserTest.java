package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Target;
import java.io.File;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The operator's page in a real browser: headless Chromium (Debian's {@code chromium} and {@code
 * chromium-driver}) driven through WebDriver. The page loads and shows the counts of a known config,
 * a collector's page finds a target by label, a hostile collector name shows as text, and a
 * collector removed by a config reload is gone after a refresh, with the change listed. Screenshots
 * go to {@code target/operator-page/}.
 *
 * <p>When {@code chromium} or {@code chromedriver} is missing the test fails if the environment
 * variable {@code CI} is set ({@code .ci/run} installs both) and is skipped otherwise.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StatusPageBrowserTest {
  /** A collector name no page may run: markup, both quotes and an ampersand. */
  static final String HOSTILE = "<script>alert(\"x\")</script> & 'q'";

  static final Path SHOTS = Path.of("target", "operator-page");

  private WebDriver driver;

  @BeforeAll
  void startBrowser() throws Exception {
    String chromium = binary("chromium");
    String chromedriver = binary("chromedriver");
    ChromeOptions options = new ChromeOptions();
    options.setBinary(chromium);
    // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
    options.addArguments(
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
        "--window-size=1280,1500", "--hide-scrollbars", "--force-device-scale-factor=1");
    ChromeDriverService service =
        new ChromeDriverService.Builder().usingDriverExecutable(new File(chromedriver)).usingAnyFreePort().build();
    driver = new ChromeDriver(service, options);
    driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
    Files.createDirectories(SHOTS);
  }

  @AfterAll
  void stopBrowser() {
    if (driver != null) {
      driver.quit();
    }
  }

  /** The executable on PATH; fails under CI and skips elsewhere when it is missing. */
  static String binary(String name) {
    return ExternalBinaries.require(
        name,
        "install the Debian packages (apt-get install -y chromium chromium-driver; .ci/run does it)"
            + " to run the operator page's browser test");
  }

  private void shot(String name) throws Exception {
    Path png = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE).toPath();
    Files.copy(png, SHOTS.resolve(name), StandardCopyOption.REPLACE_EXISTING);
  }

  private String tile(String what) {
    for (WebElement li : driver.findElements(By.cssSelector("ul.tiles li"))) {
      String text = li.getText();
      if (text.endsWith(" " + what)) {
        return text.substring(0, text.length() - what.length() - 1);
      }
    }
    throw new AssertionError("no tile '" + what + "' in " + driver.getPageSource());
  }

  /** The collector names in the collectors table, as the browser shows them. */
  private List<String> collectorNames() {
    return driver.findElements(By.cssSelector("h2#collectors ~ table tr td:first-child a")).stream()
        .map(WebElement::getText)
        .toList();
  }

  private static String config(int port, String collectors) {
    return "listen: 127.0.0.1:" + port + "\n"
        + "strategy: {name: consistent-hashing, loadFactor: 1.1}\n"
        + "refreshInterval: 1s\n"
        + "targets:\n"
        + "  - fileSd: {job: node, files: [nodes.json]}\n"
        + "  - fileSd: {job: apps, files: [apps.json]}\n"
        + "collectors:\n"
        + "  static:\n"
        + collectors;
  }

  @Test
  void thePageShowsAKnownConfigFindsATargetByLabelShowsAHostileNameAsTextAndARemovedCollectorAfterARefresh(
      @TempDir Path dir) throws Exception {
    StringBuilder nodes = new StringBuilder("[");
    for (int i = 0; i < 8; i++) {
      nodes.append(i == 0 ? "" : ",").append("{\"labels\":{\"env\":\"prod\",\"instance_id\":\"i-")
          .append(i).append("\"},\"targets\":[\"10.0.0.").append(i).append(":9100\"]}");
    }
    Files.writeString(dir.resolve("nodes.json"), nodes.append("]").toString());
    StringBuilder apps = new StringBuilder("[");
    for (int i = 0; i < 4; i++) {
      apps.append(i == 0 ? "" : ",").append("{\"labels\":{\"pod\":\"payments-").append(i)
          .append("\"},\"targets\":[\"payments-").append(i).append(":8080\"]}");
    }
    Files.writeString(dir.resolve("apps.json"), apps.append("]").toString());
    String three =
        "    - {name: agent-0, node: node-1, zone: eu-west-1a}\n"
            + "    - {name: agent-1, node: node-2, zone: eu-west-1b}\n"
            + "    - {name: '" + HOSTILE.replace("'", "''") + "'}\n";
    String two =
        "    - {name: agent-0, node: node-1, zone: eu-west-1a}\n"
            + "    - {name: '" + HOSTILE.replace("'", "''") + "'}\n";
    Path file = dir.resolve("apportion.yaml");
    int port = PrometheusEndToEndTest.freePort();
    Files.writeString(file, config(port, three));
    Reloader reloader = new Reloader(file, true);
    Service service = new Service(ServerConfig.read(file), null, reloader).start();
    reloader.started(service);
    try {
      service.feed().refresh();
      String base = "http://127.0.0.1:" + port;
      Http.get(base + "/targets?collector=agent-0");
      Http.get(base + "/targets?collector=agent-1");

      driver.get(base + "/ui");
      assertEquals("Apportion: who scrapes what", driver.getTitle());
      assertEquals("3", tile("collectors"));
      assertEquals("12", tile("targets"));
      assertEquals("12", tile("assigned"));
      assertEquals("0", tile("unassigned"));
      assertEquals("2", tile("jobs"));
      assertEquals("2/2", tile("sources up"));
      assertEquals(List.of(HOSTILE, "agent-0", "agent-1"), collectorNames(), "the hostile name shows as text ('<' sorts first)");
      assertTrue(driver.findElements(By.tagName("script")).isEmpty(), "no script element was made from a name");
      assertTrue(
          driver.findElement(By.id("attention")).findElement(By.xpath("following-sibling::ul")).getText()
              .contains("Collector " + HOSTILE + ": no poll yet."),
          "the collector that never polled needs attention");
      shot("overview.png");

      // The collector page finds a target by label.
      Target wanted =
          service.allocator().snapshot().targets().stream()
              .filter(t -> t.job().equals("apps") && service.allocator().snapshot().collectorOf(t).orElseThrow().equals("agent-0"))
              .findFirst()
              .orElseGet(() -> service.allocator().snapshot().targets().stream()
                  .filter(t -> service.allocator().snapshot().collectorOf(t).orElseThrow().equals("agent-0"))
                  .findFirst().orElseThrow());
      String label = wanted.job().equals("apps") ? "pod" : "instance_id";
      driver.findElement(By.linkText("agent-0")).click();
      assertEquals("Apportion: collector agent-0", driver.getTitle());
      int held = service.allocator().snapshot().targetCount("agent-0");
      assertEquals(held, driver.findElements(By.cssSelector("table#targets tr")).size() - 1, "every target of agent-0");
      WebElement q = driver.findElement(By.name("q"));
      q.sendKeys(label + "=\"" + wanted.labels().get(label) + "\"");
      q.submit();
      List<WebElement> rows = driver.findElements(By.cssSelector("table#targets tr td:nth-child(2)"));
      assertEquals(List.of(wanted.address()), rows.stream().map(WebElement::getText).toList());
      assertTrue(driver.findElement(By.id("matched")).getText().startsWith("1 of " + held + " targets match"));
      assertTrue(driver.getCurrentUrl().contains("?q="), "the filter is a query parameter: " + driver.getCurrentUrl());
      shot("collector.png");

      // The hostile collector's own page: its name as its heading, as text.
      driver.get(base + "/ui");
      driver.findElement(By.linkText(HOSTILE)).click();
      assertEquals("Collector " + HOSTILE, driver.findElement(By.tagName("h1")).getText());
      assertTrue(driver.findElements(By.tagName("script")).isEmpty());

      // A collector removed: reload the config without agent-1, refresh the page.
      driver.get(base + "/ui");
      Files.writeString(file, config(port, two));
      Http.Response reload =
          Http.send(
              HttpRequest.newBuilder(URI.create(base + "/-/reload"))
                  .timeout(Duration.ofSeconds(60))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build());
      assertEquals(200, reload.status(), reload.body());
      driver.navigate().refresh();
      assertEquals("2", tile("collectors"));
      assertEquals("12", tile("assigned"));
      assertEquals(List.of(HOSTILE, "agent-0"), collectorNames());
      String changes = driver.findElement(By.id("changes")).findElement(By.xpath("following-sibling::table")).getText();
      assertTrue(changes.contains("config reload"), changes);
      assertTrue(changes.contains("left agent-1; collectors 3 → 2"), changes);
      assertTrue(driver.findElement(By.cssSelector("#config ~ p")).getText().contains("collectors static"));
      assertFalse(driver.getPageSource().contains("agent-1</code></a></td>"), "agent-1 is not in the table");
      String attention = driver.findElement(By.id("attention")).findElement(By.xpath("following-sibling::ul")).getText();
      assertFalse(attention.contains("agent-1"), attention);
      assertFalse(attention.contains("agent-0"), "the reload kept agent-0's last poll: " + attention);
      shot("after-reload.png");
    } finally {
      reloader.current().close();
    }
  }

  /** The screenshot in docs/operator-page.md: the example config, two of its collectors polling. */
  @Test
  void theExampleConfigsPage(@TempDir Path dir) throws Exception {
    Path example = Path.of("example");
    Files.createDirectories(dir.resolve("sd"));
    for (String f : List.of("sd/nodes.json", "sd/apps.yaml")) {
      Files.copy(example.resolve(f), dir.resolve(f));
    }
    String yaml = Files.readString(example.resolve("apportion.yaml")).replace("listen: 127.0.0.1:8080", "listen: 127.0.0.1:0");
    Files.writeString(dir.resolve("apportion.yaml"), yaml);
    Reloader reloader = new Reloader(dir.resolve("apportion.yaml"), true);
    try (Service service = new Service(ServerConfig.read(dir.resolve("apportion.yaml")), null, reloader).start()) {
      reloader.started(service);
      service.feed().refresh();
      String base = "http://127.0.0.1:" + service.port();
      Http.get(base + "/targets?collector=agent-0&node=node-1");
      Http.get(base + "/jobs/node/targets?collector_id=agent-1");
      driver.get(base + "/ui");
      assertEquals("3", tile("collectors"));
      assertEquals("6", tile("targets"));
      assertEquals("2", tile("jobs"));
      assertEquals(List.of("agent-0", "agent-1", "agent-2"), collectorNames());
      shot("example.png");
    }
  }
}
