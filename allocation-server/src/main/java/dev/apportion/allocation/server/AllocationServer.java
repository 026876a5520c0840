package dev.apportion.allocation.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.apportion.allocation.Allocator;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves one {@link Allocator}'s decisions over HTTP, read-only, to scrapers that speak Prometheus
 * HTTP service discovery or the OpenTelemetry target allocator's protocol.
 *
 * <h2>Endpoints</h2>
 *
 * <table>
 *   <caption>What each path answers</caption>
 *   <tr><th>path</th><th>answer</th></tr>
 *   <tr><td>{@code GET /targets?collector=NAME[&node=NODE]}</td><td>Prometheus HTTP SD: the
 *       collector's targets as target groups, one per job and label set, the job in the group's
 *       {@code job} label; {@code []} for an unknown collector</td></tr>
 *   <tr><td>{@code GET /jobs}</td><td>every job with a link to its targets (upstream's
 *       shape)</td></tr>
 *   <tr><td>{@code GET /jobs/{job}/targets?collector_id=NAME}</td><td>the collector's targets of
 *       the job, one target group per target (upstream's shape); without {@code collector_id}, every
 *       collector's</td></tr>
 *   <tr><td>{@code GET /scrape_configs}</td><td>a minimal scrape config per job: {@code job_name}
 *       and the settings given to {@link Builder#scrapeConfigs}</td></tr>
 *   <tr><td>{@code GET /livez}, {@code GET /readyz}</td><td>200 while running; 200 when {@link
 *       Builder#readiness} says ready, else 503</td></tr>
 *   <tr><td>{@code GET /metrics}</td><td>the text {@link Builder#metrics} supplies</td></tr>
 * </table>
 *
 * <h2>Consistency and cost</h2>
 *
 * Every answer is computed from one {@link Allocator#snapshot()}, read once per request: a request
 * never blocks on the allocator's writers and never sees a half-applied change. Answers that do not
 * depend on the collector ({@code /jobs}, {@code /scrape_configs}) are rendered once per snapshot
 * and cached until the allocator publishes another; a collector's answer costs what its targets
 * take to write. Answers are deterministic functions of the snapshot (jobs in name order, targets
 * in identity-hash order, which is stable across JVMs), so replicas whose allocators agree serve
 * byte-identical answers.
 *
 * <h2>Limits</h2>
 *
 * Only {@code GET} and {@code HEAD}; a request that carries a body is refused (413), a request line
 * longer than {@value #MAX_URI_LENGTH} characters too (414). Nothing in a request names a file or
 * reaches anything but the snapshot. Requests run on a small pool with a bounded queue; when the queue is full
 * the JDK server closes the new connection at once rather than queueing without end. The JDK server's own
 * timeouts and header limits are JVM-wide system properties ({@code sun.net.httpserver.maxReqTime},
 * {@code maxRspTime}, {@code maxReqHeaders}, {@code maxReqHeaderSize}); {@link Main} sets them
 * before the first server starts unless they are set already. Loading this class sets {@code
 * sun.net.httpserver.nodelay} to true unless it is set: without it every answer waits about 40 ms
 * for a delayed ACK.
 *
 * <p>Nothing is logged per request. Thread-safe; {@link #start()} binds and returns, {@link #close()}
 * stops at once.
 */
public final class AllocationServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AllocationServer.class);

  static {
    // The JDK server writes headers and body in two writes; with Nagle's algorithm on, the second
    // waits for the client's delayed ACK (about 40 ms per answer). JVM-wide, read once when the
    // JDK server's config class loads, so it is set here unless the user set it.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
  }

  /** The longest request URI accepted, in characters. */
  public static final int MAX_URI_LENGTH = 2048;

  private final Allocator allocator;
  private final InetSocketAddress address;
  private final Supplier<String> metrics;
  private final BooleanSupplier readiness;
  private final PollMembership polls;
  private final Rendering rendering;
  private final int threads;
  private final RequestCounter requests;
  private HttpServer server;
  private ThreadPoolExecutor executor;

  private AllocationServer(Builder b) {
    this.allocator = b.allocator;
    this.address = b.address;
    this.metrics = b.metrics;
    this.readiness = b.readiness;
    this.polls = b.polls;
    this.rendering = new Rendering(b.scrapeConfigs);
    this.threads = b.threads;
    this.requests = b.requests;
  }

  /**
   * A builder for a server over {@code allocator}.
   *
   * @param allocator the allocator whose snapshots are served; not null
   * @return a new builder
   */
  public static Builder builder(Allocator allocator) {
    return new Builder(Objects.requireNonNull(allocator, "allocator"));
  }

  /**
   * Binds the address and starts serving. Blocks only while binding.
   *
   * @return this server
   * @throws IOException if the address cannot be bound
   * @throws IllegalStateException if already started
   */
  public synchronized AllocationServer start() throws IOException {
    if (server != null) {
      throw new IllegalStateException("already started");
    }
    HttpServer s = HttpServer.create(address, 64);
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            30,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(256),
            r -> {
              Thread t = new Thread(r, "apportion-http");
              t.setDaemon(true);
              return t;
            },
            // The JDK server closes the connection when its executor refuses an exchange.
            new ThreadPoolExecutor.AbortPolicy());
    pool.allowCoreThreadTimeOut(true);
    s.setExecutor(pool);
    s.createContext("/", this::handle);
    s.start();
    server = s;
    executor = pool;
    LOG.info("serving allocations on http://{}", formatAddress(s.getAddress()));
    return this;
  }

  /**
   * The port bound; useful when the configured port was 0.
   *
   * @return the port
   * @throws IllegalStateException if not started
   */
  public synchronized int port() {
    if (server == null) {
      throw new IllegalStateException("not started");
    }
    return server.getAddress().getPort();
  }

  /**
   * Stops serving at once; an answer being written is cut (a scraper retries at its next refresh).
   * The JDK server's graceful stop waits out its whole delay on JDK 17, which would only slow
   * shutdown: every answer here is a small in-memory write.
   */
  @Override
  public synchronized void close() {
    if (server != null) {
      server.stop(0);
      executor.shutdownNow();
      server = null;
    }
  }

  private static String formatAddress(InetSocketAddress a) {
    String host = a.getAddress().getHostAddress();
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      Reply reply = answer(exchange);
      requests.count(reply.endpoint, reply.status);
      byte[] body = reply.body;
      exchange.getResponseHeaders().set("Content-Type", reply.contentType);
      exchange.getResponseHeaders().set("Cache-Control", "no-store");
      boolean head = "HEAD".equals(exchange.getRequestMethod());
      exchange.sendResponseHeaders(reply.status, head ? -1 : (body.length == 0 ? -1 : body.length));
      if (!head && body.length > 0) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      }
    } catch (IOException | RuntimeException e) {
      // A client that went away mid-answer: nothing to tell anyone, and no per-request log line.
      requests.count("error", 500);
    }
  }

  private Reply answer(HttpExchange exchange) {
    String method = exchange.getRequestMethod();
    if (!"GET".equals(method) && !"HEAD".equals(method)) {
      return Reply.error("other", 405, "only GET and HEAD are served");
    }
    String raw = exchange.getRequestURI().getRawPath();
    String rawQuery = exchange.getRequestURI().getRawQuery();
    int length = raw.length() + (rawQuery == null ? 0 : rawQuery.length() + 1);
    if (length > MAX_URI_LENGTH) {
      return Reply.error("other", 414, "request URI longer than " + MAX_URI_LENGTH);
    }
    String contentLength = exchange.getRequestHeaders().getFirst("Content-Length");
    if ((contentLength != null && !"0".equals(contentLength.trim()))
        || exchange.getRequestHeaders().containsKey("Transfer-Encoding")) {
      return Reply.error("other", 413, "requests carry no body");
    }
    Map<String, String> query;
    try {
      query = Queries.parse(rawQuery);
    } catch (IllegalArgumentException e) {
      return Reply.error("other", 400, e.getMessage());
    }
    return switch (raw) {
      case "/targets" -> httpSd(query);
      case "/jobs" -> Reply.json("jobs", rendering.jobs(allocator.snapshot()));
      case "/scrape_configs" ->
          Reply.json("scrape_configs", rendering.scrapeConfigs(allocator.snapshot()));
      case "/livez" -> Reply.text("livez", 200, "ok\n");
      case "/readyz" ->
          readiness.getAsBoolean()
              ? Reply.text("readyz", 200, "ready\n")
              : Reply.text("readyz", 503, "not ready\n");
      case "/metrics" ->
          new Reply(
              "metrics",
              200,
              "text/plain; version=0.0.4; charset=utf-8",
              metrics.get().getBytes(StandardCharsets.UTF_8));
      case "/" -> Reply.text("index", 200, Rendering.INDEX);
      default ->
          raw.startsWith("/jobs/") && raw.endsWith("/targets")
              ? jobTargets(
                  raw.substring("/jobs/".length(), raw.length() - "/targets".length()), query)
              : Reply.error("other", 404, "no such endpoint");
    };
  }

  private Reply httpSd(Map<String, String> query) {
    String collector = query.get("collector");
    if (collector == null || collector.isBlank()) {
      return Reply.error("targets", 400, "the query parameter collector is required");
    }
    if (polls != null) {
      polls.heard(collector, query.get("node"));
    }
    return Reply.json("targets", rendering.httpSd(allocator.snapshot(), collector));
  }

  private Reply jobTargets(String rawJob, Map<String, String> query) {
    String job;
    try {
      job = Queries.decode(rawJob);
    } catch (IllegalArgumentException e) {
      return Reply.error("jobs", 400, e.getMessage());
    }
    if (job.isEmpty() || rawJob.indexOf('/') >= 0) {
      return Reply.error("jobs", 404, "no such endpoint");
    }
    String collector = query.get("collector_id");
    if (collector == null) {
      return Reply.json("jobs", rendering.jobAllCollectors(allocator.snapshot(), job));
    }
    if (polls != null && !collector.isBlank()) {
      polls.heard(collector, query.get("node"));
    }
    return Reply.json("jobs", rendering.jobTargets(allocator.snapshot(), collector, job));
  }

  /** One answer: endpoint (a metric tag), status, type and bytes. */
  private static final class Reply {
    final String endpoint;
    final int status;
    final String contentType;
    final byte[] body;

    Reply(String endpoint, int status, String contentType, byte[] body) {
      this.endpoint = endpoint;
      this.status = status;
      this.contentType = contentType;
      this.body = body;
    }

    static Reply json(String endpoint, byte[] body) {
      return new Reply(endpoint, 200, "application/json", body);
    }

    static Reply text(String endpoint, int status, String text) {
      return new Reply(endpoint, status, "text/plain; charset=utf-8", text.getBytes(StandardCharsets.UTF_8));
    }

    static Reply error(String endpoint, int status, String message) {
      return new Reply(endpoint, status, "application/json", Rendering.error(message));
    }
  }

  /** Counts requests by endpoint and status, for {@code /metrics}; must not block. */
  interface RequestCounter {
    void count(String endpoint, int status);
  }

  /**
   * Configures an {@link AllocationServer}. Not thread-safe; {@link #build()} may be called once
   * per server wanted.
   */
  public static final class Builder {
    private final Allocator allocator;
    private InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    private Supplier<String> metrics = () -> "";
    private BooleanSupplier readiness = () -> true;
    private PollMembership polls;
    private Map<String, Map<String, Object>> scrapeConfigs = Map.of();
    private int threads = 4;
    private RequestCounter requests = (endpoint, status) -> {};

    private Builder(Allocator allocator) {
      this.allocator = allocator;
    }

    /**
     * The address to listen on. Default {@code 127.0.0.1:0} (a free loopback port).
     *
     * @param address the address; not null
     * @return this builder
     */
    public Builder address(InetSocketAddress address) {
      this.address = Objects.requireNonNull(address, "address");
      return this;
    }

    /**
     * What {@code /metrics} answers, in the Prometheus text format; called once per request on a
     * request thread, so it must not block for long. Default: empty.
     *
     * @param metrics the supplier of the exposition text; not null
     * @return this builder
     */
    public Builder metrics(Supplier<String> metrics) {
      this.metrics = Objects.requireNonNull(metrics, "metrics");
      return this;
    }

    /**
     * What {@code /readyz} answers; called once per request, must not block. Default: always
     * ready.
     *
     * @param readiness true when ready; not null
     * @return this builder
     */
    public Builder readiness(BooleanSupplier readiness) {
      this.readiness = Objects.requireNonNull(readiness, "readiness");
      return this;
    }

    /**
     * Tells {@code membership} of every collector that polls ({@code /targets?collector=} or
     * {@code /jobs/{job}/targets?collector_id=}), with the {@code node} query parameter if any.
     * Default: none (collectors come from elsewhere).
     *
     * @param membership the membership; not null
     * @return this builder
     */
    public Builder polls(PollMembership membership) {
      this.polls = Objects.requireNonNull(membership, "membership");
      return this;
    }

    /**
     * Settings served in each job's entry of {@code /scrape_configs}, by job name (for example
     * {@code scrape_interval}); every job of the snapshot is served with at least its {@code
     * job_name}. Values must be strings, numbers, booleans, lists or maps of those. Default: none.
     *
     * @param configs settings by job; not null; copied
     * @return this builder
     */
    public Builder scrapeConfigs(Map<String, Map<String, Object>> configs) {
      Objects.requireNonNull(configs, "configs");
      Map<String, Map<String, Object>> copy = new TreeMap<>();
      configs.forEach((job, settings) -> copy.put(job, new TreeMap<>(settings)));
      this.scrapeConfigs = copy;
      return this;
    }

    /**
     * How many threads answer requests. Default 4.
     *
     * @param threads at least 1
     * @return this builder
     */
    public Builder threads(int threads) {
      if (threads < 1) {
        throw new IllegalArgumentException("threads must be at least 1");
      }
      this.threads = threads;
      return this;
    }

    Builder requestCounter(RequestCounter counter) {
      this.requests = Objects.requireNonNull(counter, "counter");
      return this;
    }

    /**
     * A server, not yet started.
     *
     * @return the server
     */
    public AllocationServer build() {
      return new AllocationServer(this);
    }
  }
}
