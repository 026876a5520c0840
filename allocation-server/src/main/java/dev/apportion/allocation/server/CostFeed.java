package dev.apportion.allocation.server;

import com.fasterxml.jackson.core.JsonFactory;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Target costs, queried live from a Prometheus-compatible query API ({@code GET
 * URL/api/v1/query?query=...}: Prometheus, Thanos, Mimir, VictoriaMetrics) every refresh interval,
 * and attached to the targets a {@link TargetFeed} gives its allocator.
 *
 * <p>What a target costs, in order: its sample in the last successful read (matched on the
 * configured labels, {@link CostQueryResponse#key}), unless that is 0 (what a failed scrape
 * reports) and it had a cost before; else the cost it had in an earlier read, for
 * as long as the target exists (a target between two collectors has no sample for a scrape or
 * two: the old one marked its series stale, the new one has not scraped it yet, and forgetting its
 * cost then would move targets twice); else the median of the matched targets' costs, so a new
 * target is neither free nor dominant. Until a read has a sample for every target (or {@value
 * #WARMUP_READS} reads succeeded, for targets no sample will ever match) every target costs 1: the
 * start is the count balance, and the costs then arrive all at once rather than a partial read
 * placing some targets by the median and the next one by their cost. Samples of one key in one answer are summed; one key in the
 * answers of several URLs is one target scraped twice (a handover, an HA pair) and counts once,
 * at the larger value.
 *
 * <p>A failed read (any URL unreachable, an HTTP error, an error or non-vector answer, an answer
 * not read by the request timeout, more than {@link #MAX_SERIES} series, any {@link Throwable} in
 * the parse) keeps the last costs; it is logged at WARN once per episode and the recovery at INFO,
 * and the next read runs as scheduled ({@link FeedLoop}). A sample that is not a finite number
 * &gt;= 0 is skipped (its target keeps its last cost), logged the same way. Costs never make a
 * target unscraped: they only weigh it, and under {@code maxCostPerCollector} they are scaled down
 * when they would not fit ({@link CostClamp}).
 *
 * <p>Thread-safe. {@link #refresh()} blocks on I/O; {@link #attach} never blocks on I/O.
 */
final class CostFeed implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(CostFeed.class);

  /** Larger answers are refused rather than read into memory. */
  static final int MAX_BYTES = 64 << 20;

  /** After this many successful reads costs apply even if some targets never had a sample. */
  static final int WARMUP_READS = 3;

  /** The most samples one read keeps, like a target source's targets: aggregate beyond it. */
  static final int MAX_SERIES = SourceLimits.DEFAULT.maxTargets();

  private final List<URI> queryUrls;
  private final List<String> labels;
  private final HttpFetch fetch;
  private final JsonFactory json;
  private final Runnable onRead;
  private final FeedLoop loop;
  private final CostClamp clamp;
  private final AnswerParser parser;

  private final Object refreshLock = new Object();

  /** Failed reads, logged once per episode. */
  private final FeedLoop.Episode failures = new FeedLoop.Episode(LOG, "the cost query");

  @GuardedBy("refreshLock")
  private boolean skipping;

  private final AtomicInteger reads = new AtomicInteger();

  /** Cost by key: the last read's samples, and earlier ones for targets still present. */
  private volatile Map<List<String>, Long> known = Map.of();

  /** The keys of the targets last attached: the earlier costs worth keeping. */
  private volatile Set<List<String>> present = Set.of();

  private volatile boolean up;
  /** Whether costs apply: a read covered every target, or {@link #WARMUP_READS} succeeded. */
  private volatile boolean warm;
  private volatile int lastMatched;
  private volatile long lastFallback = 1;

  /**
   * A feed; does nothing until {@link #refresh()} or {@link #start()}.
   *
   * @param config the {@code costs} block
   * @param timeout each request's timeout, connect included
   * @param onRead run after every successful read, e.g. the target feed's {@code reapply}
   * @param clamp keeps costs from breaking a per-collector cost limit, or null for no limit
   */
  CostFeed(CostsConfig config, Duration timeout, Runnable onRead, CostClamp clamp) {
    this(config, timeout, onRead, clamp, null);
  }

  /** Reads a 200 answer's body; the feed's own streaming parse unless a test gives another. */
  interface AnswerParser {
    CostQueryResponse.Parsed parse(java.io.InputStream body) throws IOException;
  }

  /** With {@code parser} not null, 200 answers are read by it (a test injecting a failure). */
  CostFeed(CostsConfig config, Duration timeout, Runnable onRead, CostClamp clamp, AnswerParser parser) {
    this.labels = config.labels();
    this.fetch = new HttpFetch(config.http(), null, timeout, MAX_BYTES, java.util.Set.of());
    this.json = TargetReader.json(SourceLimits.DEFAULT);
    JsonFactory factory = json;
    List<String> match = labels;
    this.parser = parser != null ? parser : in -> CostQueryResponse.read(in, factory, match, MAX_SERIES);
    this.onRead = Objects.requireNonNull(onRead, "onRead");
    this.clamp = clamp;
    this.loop =
        new FeedLoop("apportion-cost-feed", config.refreshInterval(), LOG, "the cost feed", this::refresh);
    String q = "/api/v1/query?query=" + URLEncoder.encode(config.query(), StandardCharsets.UTF_8);
    List<URI> urls = new ArrayList<>();
    for (URI u : config.urls()) {
      String b = u.toString();
      urls.add(URI.create((b.endsWith("/") ? b.substring(0, b.length() - 1) : b) + q));
    }
    this.queryUrls = List.copyOf(urls);
  }

  /**
   * The targets with their costs attached (see the class comment), in the same order. Remembers
   * their keys, so that a later read keeps the earlier costs of these targets only. Never blocks
   * on I/O; {@code withCost} shares everything but the cost, so this is cheap.
   *
   * @param targets the targets
   * @return the targets with costs
   */
  List<Target> attach(List<Target> targets) {
    Set<List<String>> keys = new HashSet<>(targets.size() * 2);
    Map<List<String>, Long> k = known;
    CostQueryResponse.Attached a =
        CostQueryResponse.attach(
            targets,
            k,
            t -> {
              List<String> key = CostQueryResponse.key(t, labels);
              keys.add(key);
              return key;
            });
    present = keys;
    if (!warm) {
      List<Target> counts = new ArrayList<>(targets.size());
      for (Target t : targets) {
        counts.add(t.withCost(Target.DEFAULT_COST));
      }
      return counts;
    }
    lastMatched = a.matched();
    lastFallback = a.fallbackCost();
    return clamp == null ? a.targets() : clamp.apply(a.targets());
  }

  /**
   * Runs the query on every URL once. On success the costs are replaced (the samples of all URLs
   * combined, earlier costs kept for present targets without a sample) and {@code onRead} runs;
   * on failure the last costs stay. Blocks on I/O.
   *
   * @return whether the read succeeded
   * @throws InterruptedException if interrupted while querying
   */
  boolean refresh() throws InterruptedException {
    synchronized (refreshLock) {
      Map<List<String>, Long> read = new HashMap<>();
      List<String> problems = new ArrayList<>();
      int samples = 0;
      try {
        for (URI url : queryUrls) {
          CostQueryResponse.Parsed p = query(url);
          samples += p.samples();
          // One key in the answers of two URLs is one target scraped by two collectors (a handover
          // in progress, an HA pair): it counts once, at the larger value, never twice.
          p.costs().forEach((key, cost) -> read.merge(key, cost, Math::max));
          for (String problem : p.problems()) {
            problems.add(url.getHost() + ":" + url.getPort() + " " + problem);
          }
        }
      } catch (InterruptedException e) {
        up = false;
        throw e;
      } catch (Throwable e) {
        // Anything, an OutOfMemoryError or a StackOverflowError in the parse included: the
        // attempt's answer is dropped with this frame, the feed is down, the next read runs.
        up = false;
        failures.failed(e, "keeping the last costs (" + known.size() + " known) until it recovers");
        return false;
      }
      failures.succeeded("works again: " + samples + " samples");
      if (!problems.isEmpty() && !skipping) {
        LOG.warn(
            "the cost query returned {} samples that are not costs, skipped (their targets keep"
                + " their last cost); the first: {}",
            problems.size(),
            LogSafe.text(problems.get(0)));
      } else if (problems.isEmpty() && skipping) {
        LOG.info("the cost query returns only costs again");
      }
      skipping = !problems.isEmpty();
      Map<List<String>, Long> next = new HashMap<>(read);
      Set<List<String>> keep = present;
      Map<List<String>, Long> before = known;
      before.forEach(
          (key, cost) -> {
            // A failed scrape reports 0 samples: a target that had a cost keeps it rather than
            // weigh nothing until it is back, which would move targets twice.
            if (next.get(key) == null ? keep.contains(key) : next.get(key) == 0 && cost > 0) {
              next.put(key, cost);
            }
          });
      if (reads.get() == 0) {
        LOG.info("costs read: {} samples from {} query APIs", samples, queryUrls.size());
      }
      known = Map.copyOf(next);
      if (!warm) {
        long missing = keep.stream().filter(k -> !k.contains("") && !next.containsKey(k)).count();
        if ((missing == 0 && !keep.isEmpty()) || reads.get() + 1 >= WARMUP_READS) {
          warm = true;
          LOG.info("costs apply from now on: {} of {} targets have a sample", keep.size() - missing, keep.size());
        }
      }
      up = true;
      reads.incrementAndGet();
    }
    try {
      onRead.run();
    } catch (RuntimeException | Error e) {
      // the target feed logs its own failures once per episode; the next read tries again
    }
    return true;
  }

  private CostQueryResponse.Parsed query(URI url) throws IOException, InterruptedException {
    String where = hostAndPath(url);
    try {
      return fetch.exchange(
          url,
          (status, in) -> {
            if (status == 200) {
              return parser.parse(in);
            }
            // Prometheus answers a bad query with 400 and a JSON error: say what it said, escaped
            // and cut to a log line's length.
            String said = "";
            try {
              CostQueryResponse.read(in, json, labels, MAX_SERIES);
            } catch (IOException e) {
              said = e.getMessage().startsWith("the query failed") ? ": " + e.getMessage() : "";
            }
            throw new IOException("HTTP " + status + said);
          });
    } catch (IOException e) {
      // The fetch names the URL with its query string; the query is in the config, keep it short.
      String m = String.valueOf(e.getMessage());
      String shown = fetch.shown(url);
      throw new IOException(where + (m.startsWith(shown) ? m.substring(shown.length()) : ": " + m), e);
    }
  }

  /** The URL without its query string (the query is in the config; keep log lines short). */
  private static String hostAndPath(URI url) {
    return url.getScheme() + "://" + url.getRawAuthority() + url.getRawPath();
  }

  /** Whether the last read succeeded. Never blocks. */
  boolean isUp() {
    return up;
  }

  /** How many successful reads there were. */
  int reads() {
    return reads.get();
  }

  /** How many failure episodes began (each logged once). */
  int failureEpisodes() {
    return failures.count();
  }

  /** How many targets the last {@link #attach} matched with a known cost. */
  int lastMatched() {
    return lastMatched;
  }

  /** The cost the last {@link #attach} gave targets without one. */
  long lastFallback() {
    return lastFallback;
  }

  /**
   * Reads now and then every interval, on a daemon thread ({@link FeedLoop}). Does not block.
   *
   * @return this feed
   */
  CostFeed start() {
    loop.start();
    return this;
  }

  /** Stops reading; interrupts a read in progress. Does not wait for it. */
  @Override
  public void close() {
    loop.close();
  }
}
