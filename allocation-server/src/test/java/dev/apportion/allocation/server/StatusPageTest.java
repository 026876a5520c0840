package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator's page and its JSON: counts from a known allocation, escaping of every field that
 * carries outside text, the label filter, paging that bounds a page's size, the change log, and
 * the same routing, limits and TLS as every other endpoint.
 */
class StatusPageTest {
  /** Outside text at its worst: markup, both quotes, an ampersand, a newline and a backslash. */
  static final String HOSTILE = "<script>alert(\"x\")</script> & 'q'\nnext\\";
  /** How {@link Html#escape} writes it. */
  static final String ESCAPED =
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;\\nnext\\\\";

  @TempDir Path dir;

  private static final long NOW = 1_800_000_000_000L;

  /** A page over {@code allocator} with the given sources, changes and config. */
  private static StatusPage page(
      Allocator allocator,
      boolean perNodeWithoutFallback,
      Supplier<List<TargetFeed.SourceStatus>> sources,
      Supplier<List<ChangeLog.Entry>> changes,
      Supplier<StatusPage.ConfigStatus> config) {
    return new StatusPage(
        new StatusPage.Context(
            "static", allocator.strategy(), null, perNodeWithoutFallback, false, sources, () -> null,
            changes, config, () -> NOW));
  }

  private static StatusPage page(Allocator allocator) {
    return page(allocator, false, List::of, List::of, () -> null);
  }

  private static String body(AllocationServer.Reply reply) {
    if (reply.stream == null) {
      return new String(reply.body, StandardCharsets.UTF_8);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      reply.stream.writeTo(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  private static String get(StatusPage page, Allocation snapshot, String path, Map<String, String> query) {
    return body(page.answer(snapshot, path, query));
  }

  private static String overview(StatusPage page, Allocator a) {
    return get(page, a.snapshot(), "/ui", Map.of());
  }

  /** The escaped form is there, and nothing of the raw text is. */
  private static void assertEscaped(String html, String what) {
    assertTrue(html.contains(ESCAPED), what + ": the escaped text is shown\n" + html);
    assertFalse(html.contains("<script"), what + ": no raw markup");
    assertFalse(html.contains("alert(\"x\")"), what + ": no raw quote");
    assertFalse(html.contains("'q'"), what + ": no raw apostrophe");
    assertFalse(html.contains(" & "), what + ": no raw ampersand");
  }

  private static Allocator allocator(String strategy) {
    return Allocators.builder(strategy).build();
  }

  private static int tile(String html, String what) {
    Matcher m = Pattern.compile("<b>(\\d+)</b> " + what + "<").matcher(html);
    assertTrue(m.find(), what + " in\n" + html);
    return Integer.parseInt(m.group(1));
  }

  // ---------------------------------------------------------------------------------------------
  // Counts

  @Test
  void theOverviewCountsCollectorsTargetsJobsAndUnassignedOfTheSnapshot() {
    Allocator a = Allocators.builder(Allocators.PER_NODE).noFallback().build();
    a.setCollectors(List.of(Collector.of("c-0", "n-0"), Collector.of("c-1", "n-1")));
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      targets.add(Target.of("node", "10.0.0." + i + ":9100", Map.of("__meta_kubernetes_pod_node_name", "n-" + i % 2)));
    }
    targets.add(Target.of("apps", "a:1", Map.of("__meta_kubernetes_pod_node_name", "n-0")));
    targets.add(Target.of("apps", "lost:1", Map.of("__meta_kubernetes_pod_node_name", "n-9")));
    targets.add(Target.of("apps", "nowhere:1"));
    a.setTargets(targets);
    StatusPage page = page(a, true, List::of, List::of, () -> null);
    String html = overview(page, a);
    assertEquals(2, tile(html, "collectors"));
    assertEquals(9, tile(html, "targets"));
    assertEquals(7, tile(html, "assigned"));
    assertEquals(2, tile(html, "unassigned"));
    assertEquals(2, tile(html, "jobs"));
    assertTrue(html.contains("no collector on its node (per-node without a fallback)"), html);
    assertTrue(html.contains("no node label (per-node without a fallback)"), html);
    assertTrue(html.contains("<code>apps lost:1</code> <span class=\"muted\">node n-9</span>"), html);
    // Jobs: apps has 3 targets, 1 assigned, 2 unassigned, on 1 collector.
    assertTrue(
        html.contains("<tr><td><code>apps</code></td><td class=\"n\">3</td><td class=\"n\">1</td>"
            + "<td class=\"n bad\">2</td><td class=\"n\">1</td></tr>"),
        html);
    // Nobody polled: every collector needs attention, and says so.
    assertTrue(html.contains("no poll yet"), html);
    page.polled("c-0", a.snapshot());
    page.polled("c-1", a.snapshot());
    assertFalse(overview(page, a).contains("no poll yet"));

    JsonNode json = TargetGroupsJson.read(get(page, a.snapshot(), "/api/v1/status", Map.of()));
    assertEquals(2, json.get("summary").get("collectors").asInt());
    assertEquals(9, json.get("summary").get("targets").asInt());
    assertEquals(2, json.get("summary").get("unassigned").asInt());
    assertEquals(2, json.get("collectors").size());
    assertEquals("c-0", json.get("collectors").get(0).get("name").asText());
    assertEquals(4, json.get("collectors").get(0).get("targets").asInt());
    assertEquals("2027-01-15T08:00:00Z", json.get("collectors").get(0).get("lastPoll").asText());
    assertEquals(2, json.get("unassigned").size());
  }

  @Test
  void aCollectorOutsideTheCostBandIsMarkedAndTheShareColumnsSayWhy() {
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).loadFactor(1.1).build();
    a.setCollectors(List.of(Collector.of("big").withCapacity(3), Collector.of("small")));
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      targets.add(Target.of("j", "t" + i + ":1"));
    }
    a.setTargets(targets);
    StatusPage page =
        new StatusPage(
            new StatusPage.Context("static", "consistent-hashing", 1.1, false, false, List::of, () -> null,
                List::of, () -> null, () -> NOW));
    String html = overview(page, a);
    assertTrue(html.contains("at most 1.10 (rounded up to a whole target), and with costs or capacities at least 0.90"), html);
    assertTrue(html.contains("<td class=\"n\">75.0%</td>"), "big's capacity share: " + html);
    assertFalse(html.contains("above band") || html.contains("below band"), "the strategy kept both in the band: " + html);

    // A strategy that keeps no band, shown against one: the collector with the costly target is
    // above it, the other below.
    Allocator r = Allocators.builder(Allocators.RENDEZVOUS).build();
    r.setCollectors(List.of(Collector.of("x"), Collector.of("y")));
    List<Target> costly = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      costly.add(Target.of("j", "t" + i + ":1").withCost(i == 0 ? 1000 : 1));
    }
    r.setTargets(costly);
    String heavy = r.snapshot().collectorOf(costly.get(0)).orElseThrow();
    String light = heavy.equals("x") ? "y" : "x";
    String skewed = overview(page, r);
    assertTrue(skewed.contains("<code>" + heavy + "</code></a>: no poll yet, above band."), skewed);
    assertTrue(skewed.contains("<code>" + light + "</code></a>: no poll yet, below band."), skewed);
  }

  // ---------------------------------------------------------------------------------------------
  // Escaping: one test per field that carries outside text

  @Test
  void aCollectorNameIsEscapedInTheListTheLinkAndItsOwnPage() {
    Allocator a = allocator(Allocators.CONSISTENT_HASHING);
    a.setCollectors(List.of(Collector.of(HOSTILE)));
    a.setTargets(List.of(Target.of("j", "a:1")));
    StatusPage page = page(a);
    String html = overview(page, a);
    assertEscaped(html, "collector name");
    String href = "/ui/collectors/" + Html.component(HOSTILE);
    assertTrue(html.contains("href=\"" + Html.escape(href) + "\""), html);
    String own = get(page, a.snapshot(), "/ui/collectors/" + Html.component(HOSTILE), Map.of());
    assertEscaped(own, "the collector's page");
    assertTrue(own.contains("<b>1</b> of 1 targets match"), own);
    JsonNode json = TargetGroupsJson.read(get(page, a.snapshot(), "/api/v1/status/collectors/" + Html.component(HOSTILE), Map.of()));
    assertEquals(HOSTILE, json.get("collector").get("name").asText(), "JSON carries the name as it is");
  }

  @Test
  void aNodeAndAZoneAreEscaped() {
    Allocator a = allocator(Allocators.CONSISTENT_HASHING);
    a.setCollectors(List.of(Collector.of("c", HOSTILE, HOSTILE)));
    a.setTargets(List.of(Target.of("j", "a:1")));
    StatusPage page = page(a);
    String html = overview(page, a);
    assertEscaped(html, "node and zone");
    assertEquals(2, count(html, ESCAPED), "node and zone columns");
    assertEscaped(get(page, a.snapshot(), "/ui/collectors/c", Map.of()), "node and zone on the collector's page");
  }

  @Test
  void aJobNameIsEscapedInTheJobsTableAndTheTargets() {
    Allocator a = allocator(Allocators.CONSISTENT_HASHING);
    a.setCollectors(List.of(Collector.of("c")));
    a.setTargets(List.of(Target.of(HOSTILE, "a:1")));
    StatusPage page = page(a);
    assertEscaped(overview(page, a), "job");
    assertEscaped(get(page, a.snapshot(), "/ui/collectors/c", Map.of()), "job on the collector's page");
  }

  @Test
  void anAddressIsEscaped() {
    Allocator a = allocator(Allocators.CONSISTENT_HASHING);
    a.setCollectors(List.of(Collector.of("c")));
    a.setTargets(List.of(Target.of("j", HOSTILE)));
    StatusPage page = page(a);
    assertEscaped(get(page, a.snapshot(), "/ui/collectors/c", Map.of()), "address");
  }

  @Test
  void aLabelNameAndALabelValueAreEscaped() {
    Allocator a = allocator(Allocators.CONSISTENT_HASHING);
    a.setCollectors(List.of(Collector.of("c")));
    a.setTargets(List.of(Target.of("j", "a:1", Map.of(HOSTILE, "v")), Target.of("j", "b:1", Map.of("k", HOSTILE))));
    StatusPage page = page(a);
    String html = get(page, a.snapshot(), "/ui/collectors/c", Map.of());
    assertEscaped(html, "label name and value");
    assertEquals(2, count(html, ESCAPED), "once as a name, once as a value");
  }

  @Test
  void anUnassignedTargetsJobAddressAndNodeAreEscaped() {
    Allocator a = Allocators.builder(Allocators.PER_NODE).noFallback().build();
    a.setCollectors(List.of(Collector.of("c", "n")));
    a.setTargets(List.of(Target.of(HOSTILE, HOSTILE, Map.of("__meta_kubernetes_pod_node_name", HOSTILE))));
    String html = overview(page(a, true, List::of, List::of, () -> null), a);
    assertEscaped(html, "unassigned example");
    assertEquals(4, count(html, ESCAPED), "job in the jobs table; job, address and node in the example");
  }

  @Test
  void aSourceItsErrorAndTheConfigAreEscaped() {
    Allocator a = allocator(Allocators.CONSISTENT_HASHING);
    a.setCollectors(List.of(Collector.of("c")));
    StatusPage page =
        page(
            a,
            false,
            () -> List.of(new TargetFeed.SourceStatus(HOSTILE, false, 0, 3, HOSTILE, NOW - 5000)),
            List::of,
            () -> new StatusPage.ConfigStatus(HOSTILE, true, false, NOW - 60_000, HOSTILE));
    String html = overview(page, a);
    assertEscaped(html, "source, its error, the config summary and the reload error");
    // The source twice (attention, table), its error once, the config summary once, the reload
    // error twice (attention, config).
    assertEquals(6, count(html, ESCAPED), html);
    assertTrue(html.contains("<span class=\"bad\">down</span>"), html);
  }

  @Test
  void collectorNamesInTheChangeLogAreEscaped() {
    ChangeLog log = new ChangeLog(() -> NOW);
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).listener(log).build();
    a.setTargets(List.of(Target.of("j", "a:1"), Target.of("j", "b:1")));
    a.setCollectors(List.of(Collector.of("c"), Collector.of(HOSTILE)));
    a.setCollectors(List.of(Collector.of("c")));
    StatusPage page = page(a, false, List::of, log::entries, () -> null);
    String html = overview(page, a);
    assertEscaped(html, "joined and left names");
    assertEquals(2, count(html, ESCAPED), "joined once, left once");
  }

  @Test
  void theSearchQueryIsEscapedWhereItIsEchoed() {
    Allocator a = allocator(Allocators.CONSISTENT_HASHING);
    a.setCollectors(List.of(Collector.of("c")));
    a.setTargets(List.of(Target.of("j", "a:1")));
    StatusPage page = page(a);
    String html = get(page, a.snapshot(), "/ui/collectors/c", Map.of("q", HOSTILE));
    assertEscaped(html, "query in the search box");
    String bad = body(page.answer(a.snapshot(), "/ui/collectors/c", Map.of("q", "x=~\"" + HOSTILE + "(\"")));
    assertFalse(bad.contains("<script"), bad);
  }

  @Test
  void theEscapingHelperLeavesPlainTextAloneAndShowsControlCharacters() {
    assertEquals("agent-0 ünïcode 日本", Html.escape("agent-0 ünïcode 日本"));
    assertEquals(ESCAPED, Html.escape(HOSTILE));
    assertEquals("a\\u001bb\\u0000c\\rd\\te\\u2028", Html.escape("a\u001bb\u0000c\rd\te\u2028"));
    assertEquals("pair \uD83D\uDE00 lone \\ud83d", Html.escape("pair \uD83D\uDE00 lone \uD83D"));
    assertEquals("", Html.escape(null));
    assertEquals("a%20b%2Fc%3Cd%26%2B", Html.component("a b/c<d&+"));
  }

  // ---------------------------------------------------------------------------------------------
  // The filter

  @Test
  void theFilterMatchesLabelsAsPrometheusMatchersDoAndPlainTextAnywhere() {
    Target api = Target.of("api", "10.0.0.1:8080", Map.of("namespace", "prod-eu", "pod", "api-1"));
    Target db = Target.of("db", "10.0.0.2:5432", Map.of("namespace", "staging", "team", "a b"));
    assertTrue(TargetFilter.parse("").matches(api));
    assertTrue(TargetFilter.parse("job=api").matches(api));
    assertFalse(TargetFilter.parse("job=api").matches(db));
    assertTrue(TargetFilter.parse("job=\"api\" namespace=~\"prod-.*\"").matches(api));
    assertFalse(TargetFilter.parse("job=\"api\" namespace=~\"prod\"").matches(api), "anchored");
    assertTrue(TargetFilter.parse("namespace!=prod-eu").matches(db));
    assertTrue(TargetFilter.parse("namespace!~\"prod-.*\"").matches(db));
    assertTrue(TargetFilter.parse("team=\"a b\"").matches(db), "a quoted value keeps its space");
    assertTrue(TargetFilter.parse("team=\"\"").matches(api), "a missing label is the empty string");
    assertTrue(TargetFilter.parse("__address__=~\".*:5432\"").matches(db));
    assertTrue(TargetFilter.parse("API-1").matches(api), "plain text ignores case");
    assertTrue(TargetFilter.parse("10.0.0.2:5432").matches(db), "plain text finds the address");
    assertFalse(TargetFilter.parse("10.0.0.2:5432").matches(api));
    assertThrows(IllegalArgumentException.class, () -> TargetFilter.parse("a=\"open"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TargetFilter.parse("a=~\"(\""));
    assertTrue(e.getMessage().contains("bad regular expression for a"), e.getMessage());
  }

  @Test
  void theCollectorPageFindsATargetByLabelAndPagesTheRest() {
    Allocator a = allocator(Allocators.CONSISTENT_HASHING);
    a.setCollectors(List.of(Collector.of("only")));
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      targets.add(Target.of("j", "t" + i + ":1", Map.of("pod", "pod-" + i)));
    }
    a.setTargets(targets);
    StatusPage page = page(a);
    String all = get(page, a.snapshot(), "/ui/collectors/only", Map.of());
    assertTrue(all.contains("<b>500</b> of 500 targets match"), all);
    assertTrue(all.contains("targets 1–200 of 500 · page 1 of 3"), all);
    assertEquals(StatusPage.TARGETS_PER_PAGE, count(all, "<tr><td><code>j</code>"));
    String last = get(page, a.snapshot(), "/ui/collectors/only", Map.of("page", "3"));
    assertEquals(100, count(last, "<tr><td><code>j</code>"));
    String one = get(page, a.snapshot(), "/ui/collectors/only", Map.of("q", "pod=\"pod-417\""));
    assertTrue(one.contains("<b>1</b> of 500 targets match"), one);
    assertTrue(one.contains("<code>t417:1</code>"), one);
    AllocationServer.Reply bad = page.answer(a.snapshot(), "/ui/collectors/only", Map.of("q", "pod=~\"(\""));
    assertEquals(400, bad.status);
    assertEquals(404, page.answer(a.snapshot(), "/ui/collectors/nobody", Map.of()).status);
    assertEquals(400, page.answer(a.snapshot(), "/ui/collectors/%zz", Map.of()).status);
    assertEquals(404, page.answer(a.snapshot(), "/api/v1/status/collectors/nobody", Map.of()).status);
    JsonNode json = TargetGroupsJson.read(get(page, a.snapshot(), "/api/v1/status/collectors/only", Map.of("q", "pod=~\"pod-4..\"")));
    assertEquals(100, json.get("matched").asInt());
    assertEquals(100, json.get("targets").size());
    assertEquals(500, json.get("total").asInt());
  }

  @Test
  void aSourceThatFailsIsDownWithItsErrorAndKeepsItsLastGoodCount() throws Exception {
    Allocator a = allocator(Allocators.CONSISTENT_HASHING);
    a.setCollectors(List.of(Collector.of("c")));
    boolean[] fail = {false};
    TargetSource flaky =
        new TargetSource() {
          @Override
          public String describe() {
            return "flaky";
          }

          @Override
          public List<Target> read() throws IOException {
            if (fail[0]) {
              throw new IOException("connection refused");
            }
            return List.of(Target.of("j", "a:1"), Target.of("j", "b:1"));
          }
        };
    try (TargetFeed feed = TargetFeed.builder(a).source(flaky).build()) {
      assertEquals(List.of(new TargetFeed.SourceStatus("flaky", false, 0, 0, null, 0)), feed.sourceStatus(), "never read");
      long before = System.currentTimeMillis();
      feed.refresh();
      TargetFeed.SourceStatus up = feed.sourceStatus().get(0);
      assertTrue(up.up() && up.targets() == 2 && up.lastReadMillis() >= before && up.lastError() == null, up.toString());
      fail[0] = true;
      feed.refresh();
      TargetFeed.SourceStatus down = feed.sourceStatus().get(0);
      assertFalse(down.up());
      assertEquals(2, down.targets(), "its last good targets are kept");
      assertEquals(up.lastReadMillis(), down.lastReadMillis(), "the last good read is the earlier one");
      assertEquals("connection refused", down.lastError());
      assertTrue(down.lastErrorMillis() >= up.lastReadMillis());
      StatusPage page = page(a, false, feed::sourceStatus, List::of, () -> null);
      String html = overview(page, a);
      assertTrue(html.contains("<b>0/1</b> sources up"), html);
      assertTrue(html.contains("Source <code>flaky</code> is down: its last good 2 targets are kept."), html);
      assertTrue(html.contains("<code>connection refused</code>"), html);
    }
  }

  @Test
  void theCostFeedIsShownAndItsFailureNeedsAttention() {
    Allocator a = allocator(Allocators.CONSISTENT_HASHING);
    a.setCollectors(List.of(Collector.of("c")));
    StatusPage.CostStatus[] costs = {new StatusPage.CostStatus(true, 40, 7)};
    StatusPage page =
        new StatusPage(
            new StatusPage.Context("static", "consistent-hashing", 1.15, false, false,
                () -> List.of(new TargetFeed.SourceStatus("s", true, NOW, 41, null, 0)), () -> costs[0],
                List::of, () -> null, () -> NOW));
    String html = overview(page, a);
    assertTrue(html.contains("<span class=\"good\">up</span> · 40 targets priced by a sample · the others cost 7"), html);
    assertFalse(html.contains("cost query failed"), html);
    costs[0] = new StatusPage.CostStatus(false, 40, 7);
    html = overview(page, a);
    assertTrue(html.contains("<li>The last cost query failed: targets keep their last costs.</li>"), html);
    assertTrue(html.contains("<span class=\"bad\">down</span> · 40 targets priced"), html);
  }

  // ---------------------------------------------------------------------------------------------
  // Size

  @Test
  void theOverviewOfAThousandCollectorsStaysSmallByPaging() {
    Allocator a = allocator(Allocators.CONSISTENT_HASHING);
    List<Collector> collectors = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      collectors.add(Collector.of(String.format("collector-%04d", i), "node-" + i, "zone-" + i % 3));
    }
    a.setCollectors(collectors);
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < 20_000; i++) {
      targets.add(Target.of("job-" + i % 20, "10." + (i >> 8) + "." + (i & 255) + ".1:9100"));
    }
    a.setTargets(targets);
    StatusPage page = page(a);
    String html = overview(page, a);
    assertEquals(1000, tile(html, "collectors"));
    assertEquals(StatusPage.COLLECTORS_PER_PAGE, count(html, "<tr><td><a href=\"/ui/collectors/collector-"));
    int bytes = html.getBytes(StandardCharsets.UTF_8).length;
    assertTrue(bytes < 80_000, "a page of 100 collectors, " + StatusPage.ATTENTION + " listed for attention: " + bytes + " bytes");
    String tenth = get(page, a.snapshot(), "/ui", Map.of("page", "10"));
    assertTrue(tenth.contains("collectors 901–1000 of 1000 · page 10 of 10"), tenth);
    assertTrue(tenth.contains("collector-0999"), tenth);
    JsonNode json = TargetGroupsJson.read(get(page, a.snapshot(), "/api/v1/status", Map.of()));
    assertEquals(1000, json.get("collectors").size(), "the JSON has every collector");
  }

  // ---------------------------------------------------------------------------------------------
  // Changes

  @Test
  void theChangeLogSaysWhoJoinedAndLeftWhatMovedAndCostChangesAsSuch() {
    ChangeLog log = new ChangeLog(() -> NOW);
    Allocator a = Allocators.builder(Allocators.CONSISTENT_HASHING).listener(log).build();
    a.setCollectors(List.of(Collector.of("a"), Collector.of("b")));
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      targets.add(Target.of("j", "t" + i + ":1"));
    }
    a.setTargets(targets);
    a.setTargets(targets); // the same: nothing recorded
    a.setCollectors(List.of(Collector.of("a")));
    a.setCollectors(List.of(Collector.of("a"), Collector.of("c", "node-c")));
    // Every target on c costs 100 from now on: c is far above its share, so targets move.
    List<Target> costly = new ArrayList<>();
    for (Target t : targets) {
      costly.add(t.withCost(a.snapshot().collectorOf(t).orElseThrow().equals("c") ? 100 : 1));
    }
    Allocator fa = a;
    log.asCosts(() -> fa.setTargets(costly));
    List<ChangeLog.Entry> e = log.entries();
    assertEquals(
        List.of(ChangeLog.Why.COSTS, ChangeLog.Why.COLLECTORS, ChangeLog.Why.COLLECTORS, ChangeLog.Why.TARGETS,
            ChangeLog.Why.COLLECTORS),
        e.stream().map(ChangeLog.Entry::why).toList());
    assertEquals(100, e.get(3).placed());
    assertEquals(List.of("b"), e.get(2).left());
    assertEquals(List.of("c"), e.get(1).joined());
    assertTrue(e.get(2).reassigned() > 0 && e.get(2).reassigned() == e.get(2).moved(), e.get(2).toString());
    String left = StatusPage.what(e.get(2));
    assertTrue(left.startsWith("left <a href=\"/ui/collectors/b\"><code>b</code></a>; collectors 2 → 1;"), left);
  }

  // ---------------------------------------------------------------------------------------------
  // Through the server: routes, limits, headers, TLS

  @Test
  void theServerRoutesThePageWithItsHeadersAndTheSameLimitsAsEveryEndpoint() throws Exception {
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\",\"b:1\",\"c:1\"],\"labels\":{\"team\":\"x\"}}]");
    Path config = dir.resolve("c.yaml");
    Files.writeString(
        config,
        """
        listen: 127.0.0.1:0
        targets: [{fileSd: {job: j, files: [t.json]}}]
        collectors: {static: [agent-0, agent-1]}
        """);
    try (Service s = new Service(ServerConfig.read(config)).start()) {
      s.feed().refresh();
      String base = "http://127.0.0.1:" + s.port();
      Http.get(base + "/targets?collector=agent-0");
      HttpResponse<String> ui =
          Http.CLIENT.send(HttpRequest.newBuilder(URI.create(base + "/ui")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, ui.statusCode());
      assertEquals("text/html; charset=utf-8", ui.headers().firstValue("content-type").orElseThrow());
      assertTrue(ui.headers().firstValue("content-security-policy").orElseThrow().startsWith("default-src 'none'"));
      assertEquals("nosniff", ui.headers().firstValue("x-content-type-options").orElseThrow());
      assertEquals(2, tile(ui.body(), "collectors"));
      assertEquals(3, tile(ui.body(), "targets"));
      assertTrue(ui.body().contains("<b>1/1</b> sources up"), ui.body());
      assertTrue(ui.body().contains("Collector <a href=\"/ui/collectors/agent-1\"><code>agent-1</code></a>: no poll yet."), ui.body());
      assertFalse(ui.body().contains("agent-0</code></a>: no poll yet"), "agent-0 polled");
      JsonNode status = Http.get(base + "/api/v1/status").json();
      assertEquals(3, status.get("summary").get("targets").asInt());
      assertEquals("static", status.get("collectorsKnownBy").asText());
      assertTrue(status.get("sources").get(0).get("up").asBoolean());
      assertEquals(3, status.get("sources").get(0).get("targets").asInt());
      assertEquals("j", status.get("jobs").get(0).get("job").asText());
      assertTrue(status.get("changes").size() >= 1, status.toString());
      assertEquals(405, Http.send(HttpRequest.newBuilder(URI.create(base + "/ui")).POST(HttpRequest.BodyPublishers.noBody()).build()).status());
      assertEquals(414, Http.get(base + "/ui/collectors/" + "x".repeat(AllocationServer.MAX_URI_LENGTH)).status());
      assertEquals(404, Http.get(base + "/ui/collectors/a%2Fb/c").status());
      HttpResponse<String> head =
          Http.CLIENT.send(
              HttpRequest.newBuilder(URI.create(base + "/api/v1/status")).method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, head.statusCode());
      assertEquals("", head.body());
      assertTrue(Http.get(base + "/metrics").body().contains("endpoint=\"ui\""));
    }
  }

  @Test
  void aStreamedAnswerEndsWithItsNewlineAndKeepsTheConnectionOpen() throws Exception {
    Allocator a = allocator(Allocators.CONSISTENT_HASHING);
    a.setCollectors(List.of(Collector.of("only")));
    a.setTargets(List.of(Target.of("j", "t:1", Map.of())));
    try (AllocationServer server = AllocationServer.builder(a).build().start();
        java.net.Socket socket = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), server.port())) {
      socket.setSoTimeout(10_000);
      java.io.InputStream in = socket.getInputStream();
      java.io.OutputStream out = socket.getOutputStream();
      // Three answers on one connection: a streamed one can be followed by any other.
      for (String path : List.of("/api/v1/status", "/api/v1/status/collectors/only", "/ui")) {
        out.write(("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        String answer = readAnswer(in);
        assertTrue(answer.startsWith("HTTP/1.1 200 "), path + ": " + answer);
        assertFalse(answer.toLowerCase(java.util.Locale.ROOT).contains("connection: close"), path + ": " + answer);
        if (path.startsWith("/api")) {
          assertTrue(answer.endsWith("}\n"), path + " ends with its newline: " + answer);
        }
      }
    }
  }

  /** Reads one HTTP/1.1 answer (chunked or with a length) and returns its head and decoded body. */
  private static String readAnswer(java.io.InputStream in) throws IOException {
    String head = line(in);
    StringBuilder headers = new StringBuilder(head).append('\n');
    long length = -1;
    boolean chunked = false;
    for (String h = line(in); !h.isEmpty(); h = line(in)) {
      headers.append(h).append('\n');
      String lower = h.toLowerCase(java.util.Locale.ROOT);
      if (lower.startsWith("content-length:")) {
        length = Long.parseLong(lower.substring(15).trim());
      } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
        chunked = true;
      }
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (chunked) {
      for (int size = Integer.parseInt(line(in).trim(), 16); size > 0; size = Integer.parseInt(line(in).trim(), 16)) {
        body.write(in.readNBytes(size));
        line(in); // the CRLF after the chunk
      }
      line(in); // the empty trailer
    } else {
      body.write(in.readNBytes((int) length));
    }
    return headers + "\n" + body.toString(StandardCharsets.UTF_8);
  }

  private static String line(java.io.InputStream in) throws IOException {
    StringBuilder b = new StringBuilder();
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c < 0) {
        throw new IOException("the server closed the connection after: " + b);
      }
      if (c != '\r') {
        b.append((char) c);
      }
    }
    return b.toString();
  }

  @Test
  void theCollectorsJsonIsStreamedNotBuffered() throws Exception {
    Allocator a = allocator(Allocators.CONSISTENT_HASHING);
    a.setCollectors(List.of(Collector.of("only")));
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < 20_000; i++) {
      targets.add(Target.of("j", "t" + i + ":1", Map.of("pod", "pod-" + i)));
    }
    a.setTargets(targets);
    try (AllocationServer server = AllocationServer.builder(a).build().start()) {
      HttpResponse<String> r =
          Http.CLIENT.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/api/v1/status/collectors/only")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode());
      assertTrue(r.headers().firstValue("content-length").isEmpty(), "no length known up front: " + r.headers().map());
      assertEquals("chunked", r.headers().firstValue("transfer-encoding").orElseThrow());
      JsonNode json = TargetGroupsJson.read(r.body());
      assertEquals(20_000, json.get("matched").asInt());
      assertEquals(20_000, json.get("targets").size());
      // A server built by a program has a page too: the allocator alone.
      String ui = Http.get("http://127.0.0.1:" + server.port() + "/ui").body();
      assertTrue(ui.contains("collectors known by <b>the program that embeds the server</b>"), ui);
    }
  }

  @Test
  void thePageIsBehindTheSameTlsAndClientCertificateRulesAsEveryEndpoint() throws Exception {
    Certs.make(dir, "server", "localhost");
    Path operator = Certs.make(dir, "operator", "operator");
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\"]}]");
    Files.writeString(
        dir.resolve("web.yml"),
        """
        tls_server_config:
          cert_file: server.crt
          key_file: server.key
          client_auth_type: RequireAndVerifyClientCert
          client_ca_file: operator.crt
        """);
    Path config = dir.resolve("c.yaml");
    Files.writeString(
        config,
        """
        listen: 127.0.0.1:0
        webConfigFile: web.yml
        targets: [{fileSd: {job: j, files: [t.json]}}]
        collectors: {static: [prometheus-0]}
        """);
    try (Service s = new Service(ServerConfig.read(config)).start()) {
      s.feed().refresh();
      String ui = "https://127.0.0.1:" + s.port() + "/ui";
      String json = "https://127.0.0.1:" + s.port() + "/api/v1/status/collectors/prometheus-0";
      var withCert = TlsTest.client(dir.resolve("server.crt"), operator);
      HttpResponse<String> ok = TlsTest.get(withCert, ui);
      assertEquals(200, ok.statusCode());
      assertEquals(1, tile(ok.body(), "targets"));
      assertEquals(200, TlsTest.get(withCert, json).statusCode());
      var anonymous = TlsTest.client(dir.resolve("server.crt"), null);
      assertThrows(IOException.class, () -> TlsTest.get(anonymous, ui), "no certificate, no page");
      assertThrows(IOException.class, () -> TlsTest.get(anonymous, json), "nor its JSON");
      var stranger = TlsTest.client(dir.resolve("server.crt"), Certs.make(dir, "stranger", "stranger"));
      assertThrows(IOException.class, () -> TlsTest.get(stranger, ui), "nor with a certificate the CA did not sign");
      assertThrows(IOException.class, () -> Http.CLIENT.send(
          HttpRequest.newBuilder(URI.create(ui.replace("https", "http"))).build(), HttpResponse.BodyHandlers.ofString()));
    }
  }

  private static int count(String s, String what) {
    int n = 0;
    for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + what.length())) {
      n++;
    }
    return n;
  }

  /** Reads JSON with the server's own mapper. */
  static final class TargetGroupsJson {
    private TargetGroupsJson() {}

    static JsonNode read(String body) {
      try {
        return TargetGroups.JSON.readTree(body);
      } catch (IOException e) {
        throw new UncheckedIOException(body, e);
      }
    }
  }
}
