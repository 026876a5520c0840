package dev.apportion.allocation.server;

import static dev.apportion.allocation.server.Html.escape;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The operator's page: who scrapes what, and is anything unscraped. Server-rendered HTML (no
 * script, one inline style sheet, readable in a terminal browser) and the same data as JSON:
 *
 * <ul>
 *   <li>{@code GET /ui}: collectors (paged, {@value #COLLECTORS_PER_PAGE} a page, those that need
 *       attention listed first), jobs, unassigned targets by reason, sources, the last changes and
 *       the config; {@code ?page=N} for the next collectors;
 *   <li>{@code GET /ui/collectors/NAME}: one collector and its targets, {@value #TARGETS_PER_PAGE}
 *       a page, filtered by {@code ?q=} ({@link TargetFilter});
 *   <li>{@code GET /api/v1/status}: the overview as JSON, every collector, streamed;
 *   <li>{@code GET /api/v1/status/collectors/NAME}: one collector's matching targets as JSON,
 *       streamed.
 * </ul>
 *
 * Every answer reads one allocator snapshot (the one the request read); what depends only on it
 * (per-collector counts and shares, jobs, unassigned targets by reason) is computed once per
 * snapshot and cached, so a page costs what its rows take to write. Every name, label, message and
 * query is escaped with {@link Html#escape}. Thread-safe.
 */
final class StatusPage {
  static final String UI = "/ui";
  static final String UI_COLLECTOR = "/ui/collectors/";
  static final String API = "/api/v1/status";
  static final String API_COLLECTOR = "/api/v1/status/collectors/";

  /** Collectors per page of the overview. */
  static final int COLLECTORS_PER_PAGE = 100;
  /** Targets per page of a collector's page. */
  static final int TARGETS_PER_PAGE = 200;
  /** Collectors listed under "needs attention" at most. */
  static final int ATTENTION = 20;
  /** Example targets per unassigned reason. */
  static final int EXAMPLES = 5;

  private static final JsonFactory JSON = new JsonFactory();
  private static final String HTML = "text/html; charset=utf-8";
  private static final String ADDRESS = "__address__";

  /**
   * The config's state, as the page shows it.
   *
   * @param summary a one-line summary of what runs (strategy, refresh interval, sources)
   * @param reloadEnabled whether {@code SIGHUP} and {@code POST /-/reload} reload it
   * @param lastSuccessful whether the last reload succeeded (true before any)
   * @param lastSuccessMillis when it was last loaded successfully, epoch ms
   * @param lastError the last failed reload's message; null for none
   */
  record ConfigStatus(
      String summary, boolean reloadEnabled, boolean lastSuccessful, long lastSuccessMillis, String lastError) {}

  /**
   * The cost feed's state.
   *
   * @param up whether its last read succeeded
   * @param matched targets whose cost came from a sample
   * @param fallback the cost of the others
   */
  record CostStatus(boolean up, int matched, long fallback) {}

  /**
   * What the page knows of the service around the allocator; every supplier is called on a
   * request thread and must not block.
   *
   * @param knownBy how collectors are known: {@code static}, {@code kubernetes}, {@code polls}, or
   *     {@code program} when an embedding program sets them
   * @param strategy the strategy and its options, one line
   * @param band the cost band's upper bound (its lower one is {@code 2 - band}); null when the
   *     strategy keeps none
   * @param perNodeWithoutFallback whether targets without a collector on their node stay
   *     unassigned
   * @param limited whether a per-collector limit can leave targets unassigned
   * @param sources the target sources' states
   * @param costs the cost feed's state; the supplier returns null without a cost feed
   * @param changes the last changes, newest first
   * @param config the config's state; the supplier returns null when not run from a file
   * @param clock epoch milliseconds
   */
  record Context(
      String knownBy,
      String strategy,
      Double band,
      boolean perNodeWithoutFallback,
      boolean limited,
      Supplier<List<TargetFeed.SourceStatus>> sources,
      Supplier<CostStatus> costs,
      Supplier<List<ChangeLog.Entry>> changes,
      Supplier<ConfigStatus> config,
      LongSupplier clock) {

    /** What a server built by an embedding program knows: the allocator alone. */
    static Context program(String strategy) {
      return new Context(
          "program", strategy, null, false, false, List::of, () -> null, List::of, () -> null,
          System::currentTimeMillis);
    }
  }

  private final Context context;
  private final LastPolls polls;
  private volatile Summary cached;

  StatusPage(Context context) {
    this.context = context;
    this.polls = new LastPolls(context.clock());
  }

  /** Whether {@code path} (raw, still percent-encoded) is one of this page's. */
  static boolean serves(String path) {
    return path.equals(UI) || path.equals(API) || path.startsWith(UI_COLLECTOR) || path.startsWith(API_COLLECTOR);
  }

  /** Records that {@code collector} polled; never blocks. */
  void polled(String collector, Allocation snapshot) {
    polls.polled(collector, snapshot);
  }

  /** Keeps what {@code older} heard (a reload). */
  void inherit(StatusPage older) {
    polls.inherit(older.polls);
  }

  /**
   * Answers one of this page's paths (see {@link #serves}) from {@code snapshot}.
   *
   * @param path the raw path
   * @param query the decoded query parameters
   */
  AllocationServer.Reply answer(Allocation snapshot, String path, Map<String, String> query) {
    if (path.equals(UI)) {
      return html(200, overview(snapshot, page(query)));
    }
    if (path.equals(API)) {
      return AllocationServer.Reply.streamed("status", 200, "application/json", out -> statusJson(snapshot, out));
    }
    boolean api = path.startsWith(API_COLLECTOR);
    String raw = path.substring((api ? API_COLLECTOR : UI_COLLECTOR).length());
    String name;
    try {
      name = Queries.decode(raw);
    } catch (IllegalArgumentException e) {
      return AllocationServer.Reply.error("status", 400, e.getMessage());
    }
    if (name.isEmpty() || raw.indexOf('/') >= 0) {
      return AllocationServer.Reply.error("status", 404, "no such endpoint");
    }
    Summary s = summary(snapshot);
    Row row = s.byName.get(name);
    String q = query.getOrDefault("q", "");
    TargetFilter filter;
    try {
      filter = TargetFilter.parse(q);
    } catch (IllegalArgumentException e) {
      if (api) {
        return AllocationServer.Reply.error("status", 400, "q: " + e.getMessage());
      }
      return row == null
          ? html(404, missing(name))
          : html(400, collectorPage(s, row, q, TargetFilter.NONE, "q: " + e.getMessage(), 1));
    }
    if (row == null) {
      return api ? AllocationServer.Reply.error("status", 404, "no such collector in this snapshot") : html(404, missing(name));
    }
    if (api) {
      return AllocationServer.Reply.streamed(
          "status", 200, "application/json", out -> collectorJson(s, row, q, filter, out));
    }
    return html(200, collectorPage(s, row, q, filter, null, page(query)));
  }

  private static AllocationServer.Reply html(int status, String body) {
    return new AllocationServer.Reply("ui", status, HTML, body.getBytes(StandardCharsets.UTF_8));
  }

  private static int page(Map<String, String> query) {
    try {
      return Math.max(1, Integer.parseInt(query.getOrDefault("page", "1")));
    } catch (NumberFormatException e) {
      return 1;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // What one snapshot says, computed once per snapshot.

  /**
   * One collector's line: its counts and shares in the snapshot; {@code ratio} is cost share over
   * capacity share (1: exactly its share), NaN while no target costs anything.
   */
  record Row(Collector collector, int targets, long cost, double costShare, double capacityShare, double ratio) {
    String name() {
      return collector.name();
    }
  }

  /** A job's counts. */
  record Job(String name, int targets, int unassigned, int collectors) {}

  /** The unassigned targets of one reason: how many, and a few of them. */
  record Reason(String reason, int count, List<Target> examples) {}

  /**
   * What the page shows of one snapshot, whatever the request. Costs one look at each collector's
   * jobs and one pass over the unassigned targets, never a pass over every target: a job's count
   * is the sum of its collectors' lists' sizes and its unassigned targets.
   */
  static final class Summary {
    final Allocation snapshot;
    final List<Row> rows;
    final Map<String, Row> byName;
    final List<Job> jobs;
    final List<Reason> reasons;
    final int targets;
    /** Targets with fewer than {@code replicas} owners, those with none included. */
    final int unassigned;
    /** Of those, the targets with at least one owner (only with replicas): scraped, but fewer times. */
    final int underReplicated;
    /** How many collectors hold each target when there are enough: the allocator's replicas. */
    final int replicas;
    final long totalCost;
    /** Whether costs or capacities weigh the targets (else every target and collector weighs 1). */
    final boolean weighed;

    Summary(Allocation snapshot, Context context) {
      this.snapshot = snapshot;
      double capacity = 0;
      long cost = 0;
      for (Collector c : snapshot.collectors()) {
        capacity += c.capacity();
        cost += snapshot.costOf(c.name());
      }
      this.totalCost = cost;
      List<Row> rs = new ArrayList<>(snapshot.collectors().size());
      Map<String, Row> names = new HashMap<>();
      this.replicas = snapshot.replicas();
      // Per job: replicas held by collectors, unassigned targets, collectors, the owners those have.
      Map<String, int[]> perJob = new TreeMap<>();
      for (Collector c : snapshot.collectors()) {
        long own = snapshot.costOf(c.name());
        double costShare = cost == 0 ? 0 : (double) own / cost;
        double capacityShare = c.capacity() / capacity;
        Row r =
            new Row(
                c,
                snapshot.targetCount(c.name()),
                own,
                costShare,
                capacityShare,
                cost == 0 ? Double.NaN : costShare / capacityShare);
        rs.add(r);
        names.put(c.name(), r);
        for (String job : snapshot.jobsFor(c.name())) {
          int[] n = perJob.computeIfAbsent(job, k -> new int[4]);
          n[0] += snapshot.targetsFor(c.name(), job).size();
          n[2]++;
        }
      }
      this.rows = List.copyOf(rs);
      this.byName = names;
      Set<String> nodes = new HashSet<>();
      for (Collector c : snapshot.collectors()) {
        c.node().ifPresent(nodes::add);
      }
      Map<String, List<Target>> byReason = new LinkedHashMap<>();
      Map<String, Integer> counts = new HashMap<>();
      int under = 0;
      for (Target t : snapshot.unassigned()) {
        int[] n = perJob.computeIfAbsent(t.job(), k -> new int[4]);
        int owners = snapshot.ownersOf(t).size();
        n[1]++;
        n[3] += owners;
        under += owners > 0 ? 1 : 0;
        // A target with a primary lacks only further replicas; one without (per-node without a
        // fallback) has the primary's reason, whatever further replicas it has.
        String why =
            owners > 0 && snapshot.collectorOf(t).isPresent()
                ? fewerOwners(owners, replicas, snapshot.collectors().size(), context)
                : reason(t, snapshot.collectors().isEmpty(), nodes, context);
        counts.merge(why, 1, Integer::sum);
        List<Target> ex = byReason.computeIfAbsent(why, k -> new ArrayList<>());
        if (ex.size() < EXAMPLES) {
          ex.add(t);
        }
      }
      List<Reason> rr = new ArrayList<>();
      byReason.forEach((why, ex) -> rr.add(new Reason(why, counts.get(why), List.copyOf(ex))));
      rr.sort((a, b) -> a.count != b.count ? Integer.compare(b.count, a.count) : a.reason.compareTo(b.reason));
      this.reasons = List.copyOf(rr);
      List<Job> js = new ArrayList<>(perJob.size());
      // Each fully placed target is held replicas times; the unassigned ones as many as they have.
      perJob.forEach((job, n) -> js.add(new Job(job, (n[0] - n[3]) / replicas + n[1], n[1], n[2])));
      this.underReplicated = under;
      this.jobs = List.copyOf(js);
      this.targets = snapshot.targets().size();
      this.unassigned = snapshot.unassigned().size();
      boolean w = cost != targets - unassigned;
      for (Collector c : snapshot.collectors()) {
        w |= c.capacity() != Collector.DEFAULT_CAPACITY;
      }
      this.weighed = w;
    }
  }

  /**
   * Why {@code t} is unassigned, from what the snapshot and the strategy's settings say (the
   * allocator gives no reason; {@link Allocation#unassigned()} lists the only causes there are).
   */
  static String reason(Target t, boolean noCollectors, Set<String> nodes, Context context) {
    if (noCollectors) {
      return "no collectors yet";
    }
    if (context.perNodeWithoutFallback()) {
      if (t.node().isEmpty()) {
        return "no node label (per-node without a fallback)";
      }
      if (!nodes.contains(t.node().get())) {
        return "no collector on its node (per-node without a fallback)";
      }
    }
    if (context.limited()) {
      return "fits on no collector (maxTargetsPerCollector or maxCostPerCollector)";
    }
    return "not placed by the strategy";
  }

  /**
   * Why a target has {@code owners} owners, fewer than {@code replicas} but at least one: too few
   * collectors, or the per-collector limits.
   */
  static String fewerOwners(int owners, int replicas, int collectors, Context context) {
    String held = "on " + owners + " of " + replicas + " collectors: ";
    if (collectors < replicas) {
      return held + "fewer collectors than replicas";
    }
    if (context.limited()) {
      return held + "fits on no further collector (maxTargetsPerCollector or maxCostPerCollector)";
    }
    return held + "no further collector found by the strategy";
  }

  Summary summary(Allocation snapshot) {
    Summary s = cached;
    if (s == null || s.snapshot != snapshot) {
      s = new Summary(snapshot, context);
      cached = s;
    }
    return s;
  }

  /** What is wrong with one collector, from its row and its last poll; empty when nothing. */
  List<String> states(Summary s, Row r, long lastPoll) {
    List<String> out = new ArrayList<>(2);
    if (lastPoll == 0) {
      out.add("no poll yet");
    }
    if (r.targets == 0 && s.targets > s.unassigned) {
      out.add("no targets");
    }
    Double band = context.band();
    if (band != null && s.totalCost > 0 && r.capacityShare > 0) {
      double share = s.totalCost * r.capacityShare;
      if (r.cost > Math.ceil(band * share)) {
        out.add("above band");
      } else if (s.weighed && r.cost < Math.floor((2 - band) * share)) {
        // The lower bound holds only where costs or capacities weigh targets; counts alone have
        // the upper one only.
        out.add("below band");
      }
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // HTML

  private static final String STYLE =
      """
      body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#1b1f24;background:#fff}
      h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.1em;margin:1.4em 0 .4em;border-bottom:1px solid #d0d7de}
      .sub{color:#57606a;margin:0 0 .8em}
      ul.tiles{list-style:none;padding:0;margin:.6em 0;display:flex;flex-wrap:wrap;gap:.5em}
      ul.tiles li{border:1px solid #d0d7de;border-radius:6px;padding:.35em .8em;background:#f6f8fa}
      ul.tiles b{font-size:1.3em;margin-right:.25em}
      li.bad,td.bad,span.bad{background:#ffebe9;color:#a40e26}li.good,span.good{background:#dafbe1;color:#116329}
      span.bad,span.good,span.warn{padding:0 .35em;border-radius:4px}span.warn{background:#fff8c5;color:#7d4e00}
      table{border-collapse:collapse;margin:.3em 0}th,td{text-align:left;padding:.2em .7em;border-bottom:1px solid #eaeef2;vertical-align:top}
      th{background:#f6f8fa}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
      code,.mono{font-family:ui-monospace,monospace;font-size:.92em;overflow-wrap:anywhere}
      ul.attention{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:.5em 1em .5em 2em;margin:.4em 0}
      .muted{color:#57606a}input[name=q]{width:32em;font-family:ui-monospace,monospace}
      """;

  private StringBuilder start(String title) {
    StringBuilder b = new StringBuilder(16 << 10);
    b.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        .append("<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">")
        .append("<title>").append(escape(title)).append("</title><style>").append(STYLE)
        .append("</style></head><body>\n");
    return b;
  }

  private static String end(StringBuilder b) {
    return b.append("</body></html>\n").toString();
  }

  String overview(Allocation snapshot, int page) {
    Summary s = summary(snapshot);
    long now = context.clock().getAsLong();
    StringBuilder b = start("Apportion: who scrapes what");
    b.append("<h1>Apportion: who scrapes what</h1>\n<p class=\"sub\">strategy <code>")
        .append(escape(context.strategy())).append("</code>")
        .append(s.replicas > 1 ? " · every target on <b>" + s.replicas + "</b> collectors" : "")
        .append(" · collectors known by <b>")
        .append(escape(knownBy())).append("</b> · snapshot read ").append(time(now))
        .append(" · <a href=\"").append(API).append("\">JSON</a></p>\n");

    List<TargetFeed.SourceStatus> sources = context.sources().get();
    int up = 0;
    for (TargetFeed.SourceStatus src : sources) {
      up += src.up() ? 1 : 0;
    }
    ConfigStatus config = context.config().get();
    CostStatus costs = context.costs().get();
    b.append("<ul class=\"tiles\">");
    tile(b, s.rows.size(), "collectors", s.rows.isEmpty() ? "bad" : null);
    tile(b, s.targets, "targets", null);
    tile(b, s.targets - s.unassigned, "assigned", null);
    tile(
        b,
        s.unassigned,
        s.replicas > 1 ? "unassigned (fewer than " + s.replicas + " owners)" : "unassigned",
        s.unassigned > 0 ? "bad" : "good");
    tile(b, s.jobs.size(), "jobs", null);
    if (!sources.isEmpty()) {
      b.append("<li class=\"").append(up == sources.size() ? "good" : "bad").append("\"><b>").append(up)
          .append('/').append(sources.size()).append("</b> sources up</li>");
    }
    if (snapshot.outsidePartition() > 0) {
      tile(b, snapshot.outsidePartition(), "outside their zone", null);
    }
    if (config != null) {
      b.append("<li class=\"").append(config.lastSuccessful() ? "good" : "bad").append("\">config ")
          .append(config.lastSuccessful() ? "loaded" : "<b>reload failed</b>").append("</li>");
    }
    b.append("</ul>\n");

    attention(b, s, sources, costs, config);
    collectors(b, s, page, now);
    jobs(b, s);
    unassigned(b, s);
    sources(b, sources, costs, now);
    changes(b, context.changes().get(), now);
    config(b, config, now);
    return end(b);
  }

  private String knownBy() {
    return switch (context.knownBy()) {
      case "polls" -> "their polls";
      case "program" -> "the program that embeds the server";
      default -> context.knownBy();
    };
  }

  private static void tile(StringBuilder b, long n, String what, String cls) {
    b.append(cls == null ? "<li>" : "<li class=\"" + cls + "\">").append("<b>").append(n).append("</b> ")
        .append(what).append("</li>");
  }

  private void attention(
      StringBuilder b, Summary s, List<TargetFeed.SourceStatus> sources, CostStatus costs, ConfigStatus config) {
    List<String> items = new ArrayList<>();
    if (s.rows.isEmpty()) {
      items.add("No collectors: every target is unassigned.");
    }
    if (s.unassigned - s.underReplicated > 0) {
      items.add((s.unassigned - s.underReplicated)
          + " targets are unassigned: nobody scrapes them (<a href=\"#unassigned\">why</a>).");
    }
    if (s.underReplicated > 0) {
      items.add(s.underReplicated + " targets have fewer than " + s.replicas
          + " owners: scraped, but a collector's loss would leave them unscraped (<a href=\"#unassigned\">why</a>).");
    }
    for (TargetFeed.SourceStatus src : sources) {
      if (!src.up()) {
        items.add("Source <code>" + escape(src.source()) + "</code> is down: its last good "
            + src.targets() + " targets are kept.");
      }
    }
    if (costs != null && !costs.up()) {
      items.add("The last cost query failed: targets keep their last costs.");
    }
    if (config != null && !config.lastSuccessful()) {
      items.add("The last config reload failed; the running config stays: <code>"
          + escape(config.lastError()) + "</code>");
    }
    int listed = 0;
    int more = 0;
    for (Row r : s.rows) {
      List<String> st = states(s, r, polls.lastPoll(r.name()));
      if (st.isEmpty()) {
        continue;
      }
      if (listed < ATTENTION) {
        listed++;
        items.add("Collector " + collectorLink(r.name()) + ": " + escape(String.join(", ", st)) + ".");
      } else {
        more++;
      }
    }
    if (more > 0) {
      items.add("… and " + more + " more collectors (see the state column).");
    }
    b.append("<h2 id=\"attention\">Needs attention</h2>\n");
    if (items.isEmpty()) {
      b.append("<p><span class=\"good\">Nothing.</span> Every target is assigned, every source is up, every collector has polled.</p>\n");
      return;
    }
    b.append("<ul class=\"attention\">");
    for (String item : items) {
      b.append("<li>").append(item).append("</li>");
    }
    b.append("</ul>\n");
  }

  /** The owners as links, the primary first; {@code self}, when one of them, in bold. */
  private static void owners(StringBuilder b, List<String> owners, String self) {
    for (int i = 0; i < owners.size(); i++) {
      String o = owners.get(i);
      b.append(i == 0 ? "" : ", ");
      if (o.equals(self)) {
        b.append("<b>").append(collectorLink(o)).append("</b>");
      } else {
        b.append(collectorLink(o));
      }
    }
  }

  private static String collectorLink(String name) {
    return "<a href=\"" + escape(UI_COLLECTOR + Html.component(name)) + "\"><code>" + escape(name) + "</code></a>";
  }

  private void collectors(StringBuilder b, Summary s, int page, long now) {
    int pages = Math.max(1, (s.rows.size() + COLLECTORS_PER_PAGE - 1) / COLLECTORS_PER_PAGE);
    int p = Math.min(page, pages);
    int from = (p - 1) * COLLECTORS_PER_PAGE;
    int to = Math.min(s.rows.size(), from + COLLECTORS_PER_PAGE);
    b.append("<h2 id=\"collectors\">Collectors (").append(s.rows.size()).append(")</h2>\n");
    if (s.rows.isEmpty()) {
      b.append("<p>None.</p>\n");
      return;
    }
    Double band = context.band();
    b.append("<p class=\"muted\">Cost share: the collector's part of the total target cost; capacity share: its part of the total capacity.");
    if (band != null) {
      b.append(String.format(Locale.ROOT, " Share ratio: cost share ÷ capacity share, 1 for exactly its share;"
          + " the strategy keeps it at most %.2f (rounded up to a whole target), and with costs or"
          + " capacities at least %.2f.", band, 2 - band));
    }
    b.append("</p>\n");
    pager(b, UI, null, p, pages, s.rows.size(), from, to, "collectors");
    b.append("<table><tr><th>collector</th><th>node</th><th>zone</th><th>known by</th><th>last poll</th>")
        .append("<th class=\"n\">targets</th><th class=\"n\">cost share</th><th class=\"n\">capacity share</th>")
        .append("<th class=\"n\">share ratio</th><th>state</th></tr>\n");
    for (int i = from; i < to; i++) {
      Row r = s.rows.get(i);
      long last = polls.lastPoll(r.name());
      List<String> st = states(s, r, last);
      b.append("<tr><td>").append(collectorLink(r.name())).append("</td><td>")
          .append(escape(r.collector.node().orElse("—"))).append("</td><td>")
          .append(escape(r.collector.zone().orElse("—"))).append("</td><td>")
          .append(escape(context.knownBy())).append("</td><td>").append(last == 0 ? "never" : ago(now, last))
          .append("</td><td class=\"n\">").append(r.targets).append("</td><td class=\"n\">")
          .append(percent(r.costShare)).append("</td><td class=\"n\">").append(percent(r.capacityShare))
          .append("</td><td class=\"n\">").append(ratio(r.ratio())).append("</td><td>");
      state(b, st);
      b.append("</td></tr>\n");
    }
    b.append("</table>\n");
    pager(b, UI, null, p, pages, s.rows.size(), from, to, "collectors");
  }

  private static void state(StringBuilder b, List<String> st) {
    if (st.isEmpty()) {
      b.append("<span class=\"good\">ok</span>");
      return;
    }
    for (int i = 0; i < st.size(); i++) {
      b.append(i == 0 ? "" : " ").append("<span class=\"").append(st.get(i).endsWith(" band") ? "warn" : "bad")
          .append("\">").append(escape(st.get(i))).append("</span>");
    }
  }

  private static void pager(
      StringBuilder b, String path, String q, int page, int pages, int total, int from, int to, String what) {
    if (pages <= 1) {
      return;
    }
    String base = path + "?" + (q == null || q.isEmpty() ? "" : "q=" + Html.component(q) + "&") + "page=";
    b.append("<p class=\"pager\">").append(what).append(' ').append(from + 1).append('–').append(to)
        .append(" of ").append(total).append(" · page ").append(page).append(" of ").append(pages);
    if (page > 1) {
      b.append(" · <a href=\"").append(escape(base + (page - 1))).append("\">previous</a>");
    }
    if (page < pages) {
      b.append(" · <a href=\"").append(escape(base + (page + 1))).append("\">next</a>");
    }
    b.append("</p>\n");
  }

  private static void jobs(StringBuilder b, Summary s) {
    b.append("<h2 id=\"jobs\">Jobs (").append(s.jobs.size()).append(")</h2>\n");
    if (s.jobs.isEmpty()) {
      b.append("<p>None: no target is known.</p>\n");
      return;
    }
    b.append("<table><tr><th>job</th><th class=\"n\">targets</th><th class=\"n\">assigned</th>")
        .append("<th class=\"n\">unassigned</th><th class=\"n\">collectors</th></tr>\n");
    for (Job j : s.jobs) {
      b.append("<tr><td><code>").append(escape(j.name)).append("</code></td><td class=\"n\">").append(j.targets)
          .append("</td><td class=\"n\">").append(j.targets - j.unassigned).append("</td><td class=\"n")
          .append(j.unassigned > 0 ? " bad" : "").append("\">").append(j.unassigned)
          .append("</td><td class=\"n\">").append(j.collectors).append("</td></tr>\n");
    }
    b.append("</table>\n");
  }

  private static void unassigned(StringBuilder b, Summary s) {
    b.append("<h2 id=\"unassigned\">Unassigned targets (").append(s.unassigned).append(")</h2>\n");
    if (s.replicas > 1) {
      b.append("<p class=\"muted\">With ").append(s.replicas).append(" replicas, a target on fewer than ")
          .append(s.replicas).append(" collectors counts as unassigned; its owners are listed.</p>\n");
    }
    if (s.reasons.isEmpty()) {
      b.append("<p>None: every target has ")
          .append(s.replicas > 1 ? "its " + s.replicas + " collectors" : "a collector").append(".</p>\n");
      return;
    }
    b.append("<table><tr><th>reason</th><th class=\"n\">targets</th><th>for example</th></tr>\n");
    for (Reason r : s.reasons) {
      b.append("<tr><td>").append(escape(r.reason)).append("</td><td class=\"n bad\">").append(r.count)
          .append("</td><td>");
      for (int i = 0; i < r.examples.size(); i++) {
        Target t = r.examples.get(i);
        b.append(i == 0 ? "" : "<br>").append("<code>").append(escape(t.job())).append(" ")
            .append(escape(t.address())).append("</code>");
        t.node().ifPresent(n -> b.append(" <span class=\"muted\">node ").append(escape(n)).append("</span>"));
        List<String> owners = s.snapshot.ownersOf(t);
        if (!owners.isEmpty()) {
          b.append(" <span class=\"muted\">on</span> ");
          owners(b, owners, null);
        }
      }
      b.append("</td></tr>\n");
    }
    b.append("</table>\n");
  }

  private static void sources(StringBuilder b, List<TargetFeed.SourceStatus> sources, CostStatus costs, long now) {
    b.append("<h2 id=\"sources\">Sources (").append(sources.size()).append(")</h2>\n");
    if (sources.isEmpty()) {
      b.append("<p>Targets are set by the program that embeds the server.</p>\n");
      return;
    }
    b.append("<table><tr><th>source</th><th>state</th><th>last good read</th><th class=\"n\">targets</th>")
        .append("<th>last error</th></tr>\n");
    for (TargetFeed.SourceStatus src : sources) {
      b.append("<tr><td><code>").append(escape(src.source())).append("</code></td><td>")
          .append(src.up() ? "<span class=\"good\">up</span>" : "<span class=\"bad\">down</span>")
          .append("</td><td>").append(src.lastReadMillis() == 0 ? "never" : ago(now, src.lastReadMillis()))
          .append("</td><td class=\"n\">").append(src.targets()).append("</td><td>");
      if (src.lastError() == null) {
        b.append("—");
      } else {
        b.append(ago(now, src.lastErrorMillis())).append(": <code>").append(escape(src.lastError())).append("</code>");
      }
      b.append("</td></tr>\n");
    }
    b.append("</table>\n");
    if (costs != null) {
      b.append("<p>Costs (the <code>costs</code> query): ")
          .append(costs.up() ? "<span class=\"good\">up</span>" : "<span class=\"bad\">down</span>")
          .append(" · ").append(costs.matched()).append(" targets priced by a sample · the others cost ")
          .append(costs.fallback()).append(" (the median of those)</p>\n");
    }
  }

  private static void changes(StringBuilder b, List<ChangeLog.Entry> changes, long now) {
    b.append("<h2 id=\"changes\">Last changes</h2>\n");
    if (changes.isEmpty()) {
      b.append("<p>None recorded.</p>\n");
      return;
    }
    b.append("<table><tr><th>when</th><th>why</th><th class=\"n\">moved</th><th>what</th></tr>\n");
    for (ChangeLog.Entry e : changes) {
      b.append("<tr><td>").append(ago(now, e.atMillis())).append("</td><td>").append(why(e.why()))
          .append("</td><td class=\"n\">").append(e.moved()).append("</td><td>").append(what(e))
          .append("</td></tr>\n");
    }
    b.append("</table>\n");
  }

  private static String why(ChangeLog.Why why) {
    return switch (why) {
      case COLLECTORS -> "collectors";
      case TARGETS -> "targets";
      case COSTS -> "costs";
      case RELOAD -> "config reload";
    };
  }

  /** One change in words; every name escaped. */
  static String what(ChangeLog.Entry e) {
    StringBuilder b = new StringBuilder();
    switch (e.why()) {
      case COLLECTORS -> {
        names(b, "joined", e.joined(), e.joinedCount());
        names(b, "left", e.left(), e.leftCount());
        names(b, "changed", e.changed(), e.changedCount());
        if (b.length() == 0) {
          b.append("zones changed");
        }
        b.append("; collectors ").append(e.collectorsBefore()).append(" → ").append(e.collectorsAfter());
      }
      case TARGETS -> b.append("targets ").append(e.targetsBefore()).append(" → ").append(e.targetsAfter());
      case COSTS -> b.append("target costs re-read");
      case RELOAD -> {
        b.append("a new config took over");
        names(b, "joined", e.joined(), e.joinedCount());
        names(b, "left", e.left(), e.leftCount());
        names(b, "changed", e.changed(), e.changedCount());
        b.append("; collectors ").append(e.collectorsBefore()).append(" → ").append(e.collectorsAfter())
            .append("; targets ").append(e.targetsBefore()).append(" → ").append(e.targetsAfter());
      }
    }
    List<String> parts = new ArrayList<>(3);
    if (e.placed() > 0) {
      parts.add(e.placed() + " placed");
    }
    if (e.dropped() > 0) {
      parts.add(e.dropped() + " dropped");
    }
    if (e.reassigned() > 0) {
      parts.add(e.reassigned() + " reassigned");
    }
    b.append("; ").append(parts.isEmpty() ? "nothing moved" : String.join(", ", parts));
    return b.toString();
  }

  private static void names(StringBuilder b, String what, List<String> names, int count) {
    if (count == 0) {
      return;
    }
    b.append(b.length() == 0 ? "" : "; ").append(what).append(' ');
    for (int i = 0; i < names.size(); i++) {
      b.append(i == 0 ? "" : ", ").append(collectorLink(names.get(i)));
    }
    if (count > names.size()) {
      b.append(" and ").append(count - names.size()).append(" more");
    }
  }

  private static void config(StringBuilder b, ConfigStatus config, long now) {
    b.append("<h2 id=\"config\">Config</h2>\n");
    if (config == null) {
      b.append("<p>Set by the program that embeds the server.</p>\n");
      return;
    }
    b.append("<p><code>").append(escape(config.summary())).append("</code></p>\n<p>Last loaded ")
        .append(ago(now, config.lastSuccessMillis())).append(" (").append(time(config.lastSuccessMillis()))
        .append(")");
    if (!config.reloadEnabled()) {
      b.append("; reloading is not enabled");
    } else if (config.lastSuccessful()) {
      b.append("; the last reload succeeded, or none was asked for");
    } else {
      b.append("; <span class=\"bad\">the last reload failed</span>: <code>").append(escape(config.lastError()))
          .append("</code>");
    }
    b.append(".</p>\n");
  }

  private String missing(String name) {
    StringBuilder b = start("Apportion: no such collector");
    b.append("<p><a href=\"").append(UI).append("\">← all collectors</a></p><h1>No collector <code>")
        .append(escape(name)).append("</code></h1><p>No collector of that name is in the current snapshot.</p>");
    return end(b);
  }

  String collectorPage(Summary s, Row r, String q, TargetFilter filter, String error, int page) {
    long now = context.clock().getAsLong();
    long last = polls.lastPoll(r.name());
    String self = UI_COLLECTOR + Html.component(r.name());
    StringBuilder b = start("Apportion: collector " + r.name());
    b.append("<p><a href=\"").append(UI).append("\">← all collectors</a></p>\n<h1>Collector <code>")
        .append(escape(r.name())).append("</code></h1>\n<ul class=\"tiles\">");
    tile(b, r.targets, s.replicas > 1 ? "targets (every replica it holds)" : "targets", null);
    b.append("<li>node <b>").append(escape(r.collector.node().orElse("—"))).append("</b></li><li>zone <b>")
        .append(escape(r.collector.zone().orElse("—"))).append("</b></li><li>known by <b>")
        .append(escape(context.knownBy())).append("</b></li><li>last poll <b>")
        .append(last == 0 ? "never" : ago(now, last)).append("</b></li><li>cost share <b>")
        .append(percent(r.costShare)).append("</b> of capacity share <b>").append(percent(r.capacityShare))
        .append("</b></li><li>state ");
    state(b, states(s, r, last));
    b.append("</li></ul>\n<form method=\"get\" action=\"").append(escape(self)).append("\">")
        .append("<label>Filter targets by label <input name=\"q\" value=\"").append(escape(q))
        .append("\" placeholder=\"job=&quot;api&quot; namespace=~&quot;prod-.*&quot;\"></label> ")
        .append("<button type=\"submit\">Search</button></form>\n")
        .append("<p class=\"muted\">Terms, all of which must match: <code>name=\"value\"</code>, <code>name!=\"value\"</code>, ")
        .append("<code>name=~\"regex\"</code>, <code>name!~\"regex\"</code> (<code>job</code> and <code>__address__</code> are labels), ")
        .append("or plain text found in the address, the job or any label value.</p>\n");
    if (error != null) {
      b.append("<p><span class=\"bad\">").append(escape(error)).append("</span></p>\n");
    }
    List<Target> matched = new ArrayList<>();
    for (String job : s.snapshot.jobsFor(r.name())) {
      for (Target t : s.snapshot.targetsFor(r.name(), job)) {
        if (filter.matches(t)) {
          matched.add(t);
        }
      }
    }
    int pages = Math.max(1, (matched.size() + TARGETS_PER_PAGE - 1) / TARGETS_PER_PAGE);
    int p = Math.min(page, pages);
    int from = (p - 1) * TARGETS_PER_PAGE;
    int to = Math.min(matched.size(), from + TARGETS_PER_PAGE);
    b.append("<p id=\"matched\"><b>").append(matched.size()).append("</b> of ").append(r.targets)
        .append(" targets match · <a href=\"")
        .append(escape(API_COLLECTOR + Html.component(r.name()) + (q.isEmpty() ? "" : "?q=" + Html.component(q))))
        .append("\">JSON</a></p>\n");
    pager(b, self, q, p, pages, matched.size(), from, to, "targets");
    if (!matched.isEmpty()) {
      boolean replicated = s.replicas > 1;
      b.append("<table id=\"targets\"><tr><th>job</th><th>address</th>")
          .append(replicated ? "<th>owners (primary first)</th>" : "").append("<th>labels</th></tr>\n");
      for (int i = from; i < to; i++) {
        Target t = matched.get(i);
        b.append("<tr><td><code>").append(escape(t.job())).append("</code></td><td><code>")
            .append(escape(t.address())).append("</code></td>");
        if (replicated) {
          b.append("<td>");
          owners(b, s.snapshot.ownersOf(t), r.name());
          b.append("</td>");
        }
        b.append("<td class=\"mono\">");
        boolean first = true;
        int meta = 0;
        for (Map.Entry<String, String> l : t.labels().entrySet()) {
          if (l.getKey().equals(ADDRESS)) {
            continue;
          }
          if (l.getKey().startsWith(Target.META_PREFIX)) {
            meta++;
            continue;
          }
          b.append(first ? "" : " ").append(escape(l.getKey())).append("=\"").append(escape(l.getValue())).append('"');
          first = false;
        }
        if (meta > 0) {
          b.append(first ? "" : " ").append("<span class=\"muted\">+").append(meta).append(" __meta_ labels</span>");
        }
        b.append("</td></tr>\n");
      }
      b.append("</table>\n");
    }
    pager(b, self, q, p, pages, matched.size(), from, to, "targets");
    return end(b);
  }

  // ---------------------------------------------------------------------------------------------
  // JSON, streamed

  private void statusJson(Allocation snapshot, OutputStream out) throws IOException {
    Summary s = summary(snapshot);
    long now = context.clock().getAsLong();
    List<TargetFeed.SourceStatus> sources = context.sources().get();
    ConfigStatus config = context.config().get();
    CostStatus costs = context.costs().get();
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      g.writeStringField("generated", Instant.ofEpochMilli(now).toString());
      g.writeStringField("strategy", context.strategy());
      g.writeNumberField("replicas", s.replicas);
      g.writeStringField("collectorsKnownBy", context.knownBy());
      if (context.band() != null) {
        g.writeObjectFieldStart("band");
        g.writeNumberField("lower", Math.round((2 - context.band()) * 1e9) / 1e9);
        g.writeNumberField("upper", context.band());
        g.writeEndObject();
      }
      g.writeObjectFieldStart("summary");
      g.writeNumberField("collectors", s.rows.size());
      g.writeNumberField("targets", s.targets);
      g.writeNumberField("assigned", s.targets - s.unassigned);
      g.writeNumberField("unassigned", s.unassigned);
      g.writeNumberField("underReplicated", s.underReplicated);
      g.writeNumberField("jobs", s.jobs.size());
      g.writeNumberField("outsidePartition", snapshot.outsidePartition());
      g.writeEndObject();
      g.writeArrayFieldStart("collectors");
      for (Row r : s.rows) {
        writeRow(g, s, r);
      }
      g.writeEndArray();
      g.writeArrayFieldStart("jobs");
      for (Job j : s.jobs) {
        g.writeStartObject();
        g.writeStringField("job", j.name);
        g.writeNumberField("targets", j.targets);
        g.writeNumberField("assigned", j.targets - j.unassigned);
        g.writeNumberField("unassigned", j.unassigned);
        g.writeNumberField("collectors", j.collectors);
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeArrayFieldStart("unassigned");
      for (Reason r : s.reasons) {
        g.writeStartObject();
        g.writeStringField("reason", r.reason);
        g.writeNumberField("count", r.count);
        g.writeArrayFieldStart("examples");
        for (Target t : r.examples) {
          g.writeStartObject();
          g.writeStringField("job", t.job());
          g.writeStringField("address", t.address());
          writeOwners(g, snapshot.ownersOf(t));
          g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeArrayFieldStart("sources");
      for (TargetFeed.SourceStatus src : sources) {
        g.writeStartObject();
        g.writeStringField("source", src.source());
        g.writeBooleanField("up", src.up());
        instant(g, "lastGoodRead", src.lastReadMillis());
        g.writeNumberField("targets", src.targets());
        g.writeStringField("lastError", src.lastError());
        instant(g, "lastErrorAt", src.lastErrorMillis());
        g.writeEndObject();
      }
      g.writeEndArray();
      if (costs != null) {
        g.writeObjectFieldStart("costs");
        g.writeBooleanField("up", costs.up());
        g.writeNumberField("matched", costs.matched());
        g.writeNumberField("fallback", costs.fallback());
        g.writeEndObject();
      }
      g.writeArrayFieldStart("changes");
      for (ChangeLog.Entry e : context.changes().get()) {
        g.writeStartObject();
        instant(g, "at", e.atMillis());
        g.writeStringField("why", why(e.why()));
        g.writeNumberField("moved", e.moved());
        g.writeNumberField("placed", e.placed());
        g.writeNumberField("dropped", e.dropped());
        g.writeNumberField("reassigned", e.reassigned());
        g.writeNumberField("targetsBefore", e.targetsBefore());
        g.writeNumberField("targetsAfter", e.targetsAfter());
        g.writeNumberField("collectorsBefore", e.collectorsBefore());
        g.writeNumberField("collectorsAfter", e.collectorsAfter());
        names(g, "joined", e.joined(), e.joinedCount());
        names(g, "left", e.left(), e.leftCount());
        names(g, "changed", e.changed(), e.changedCount());
        g.writeEndObject();
      }
      g.writeEndArray();
      if (config != null) {
        g.writeObjectFieldStart("config");
        g.writeStringField("summary", config.summary());
        g.writeBooleanField("reloadEnabled", config.reloadEnabled());
        g.writeBooleanField("lastReloadSuccessful", config.lastSuccessful());
        instant(g, "lastLoaded", config.lastSuccessMillis());
        g.writeStringField("lastReloadError", config.lastError());
        g.writeEndObject();
      }
      g.writeEndObject();
    }
    out.write('\n');
  }

  private static void names(JsonGenerator g, String field, List<String> names, int count) throws IOException {
    g.writeArrayFieldStart(field);
    for (String n : names) {
      g.writeString(n);
    }
    g.writeEndArray();
    g.writeNumberField(field + "Count", count);
  }

  private void writeRow(JsonGenerator g, Summary s, Row r) throws IOException {
    long last = polls.lastPoll(r.name());
    g.writeStartObject();
    g.writeStringField("name", r.name());
    g.writeStringField("node", r.collector.node().orElse(null));
    g.writeStringField("zone", r.collector.zone().orElse(null));
    g.writeNumberField("capacity", r.collector.capacity());
    g.writeStringField("knownBy", context.knownBy());
    instant(g, "lastPoll", last);
    g.writeNumberField("targets", r.targets);
    g.writeNumberField("cost", r.cost);
    g.writeNumberField("costShare", r.costShare);
    g.writeNumberField("capacityShare", r.capacityShare);
    if (Double.isNaN(r.ratio)) {
      g.writeNullField("shareRatio");
    } else {
      g.writeNumberField("shareRatio", r.ratio);
    }
    g.writeArrayFieldStart("state");
    for (String st : states(s, r, last)) {
      g.writeString(st);
    }
    g.writeEndArray();
    g.writeEndObject();
  }

  private void collectorJson(Summary s, Row r, String q, TargetFilter filter, OutputStream out) throws IOException {
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      g.writeFieldName("collector");
      writeRow(g, s, r);
      g.writeStringField("query", q);
      g.writeArrayFieldStart("targets");
      int matched = 0;
      for (String job : s.snapshot.jobsFor(r.name())) {
        for (Target t : s.snapshot.targetsFor(r.name(), job)) {
          if (!filter.matches(t)) {
            continue;
          }
          matched++;
          g.writeStartObject();
          g.writeStringField("job", t.job());
          g.writeStringField("address", t.address());
          List<String> owners = s.snapshot.ownersOf(t);
          writeOwners(g, owners);
          g.writeNumberField("replica", owners.indexOf(r.name()));
          g.writeObjectFieldStart("labels");
          for (Map.Entry<String, String> l : t.labels().entrySet()) {
            g.writeStringField(l.getKey(), l.getValue());
          }
          g.writeEndObject();
          g.writeEndObject();
        }
      }
      g.writeEndArray();
      g.writeNumberField("matched", matched);
      g.writeNumberField("total", r.targets);
      g.writeEndObject();
    }
    out.write('\n');
  }

  private static void writeOwners(JsonGenerator g, List<String> owners) throws IOException {
    g.writeArrayFieldStart("owners");
    for (String o : owners) {
      g.writeString(o);
    }
    g.writeEndArray();
  }

  private static void instant(JsonGenerator g, String field, long millis) throws IOException {
    if (millis == 0) {
      g.writeNullField(field);
    } else {
      g.writeStringField(field, Instant.ofEpochMilli(millis).toString());
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Numbers and times

  private static String percent(double share) {
    return String.format(Locale.ROOT, "%.1f%%", share * 100);
  }

  private static String ratio(double r) {
    return Double.isNaN(r) ? "—" : String.format(Locale.ROOT, "%.2f", r);
  }

  private static String time(long millis) {
    return Instant.ofEpochMilli(millis).truncatedTo(ChronoUnit.SECONDS).toString();
  }

  /** {@code 12s ago}, {@code 4m 5s ago}, {@code 3h 12m ago}, {@code 2d 3h ago}, in a title the time. */
  static String ago(long now, long then) {
    long s = Math.max(0, (now - then) / 1000);
    String text;
    if (s < 60) {
      text = s + "s ago";
    } else if (s < 3600) {
      text = s / 60 + "m " + s % 60 + "s ago";
    } else if (s < 86400) {
      text = s / 3600 + "h " + s % 3600 / 60 + "m ago";
    } else {
      text = s / 86400 + "d " + s % 86400 / 3600 + "h ago";
    }
    return "<span title=\"" + time(then) + "\">" + text + "</span>";
  }
}
