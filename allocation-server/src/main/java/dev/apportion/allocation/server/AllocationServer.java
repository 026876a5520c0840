package dev.apportion.allocation.server;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
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
 *   <tr><td>{@code DELETE /targets?collector=NAME}</td><td>with poll membership, NAME leaves on
 *       purpose: 202; 409 otherwise</td></tr>
 *   <tr><td>{@code GET /drained?collector=NAME}</td><td>200 when NAME owns and holds no target,
 *       else 503</td></tr>
 *   <tr><td>{@code GET /livez}, {@code GET /readyz}</td><td>200 while running; 200 when {@link
 *       Builder#readiness} says ready, else 503</td></tr>
 *   <tr><td>{@code GET /metrics}</td><td>the text {@link Builder#metrics} supplies</td></tr>
 *   <tr><td>{@code GET /ui}, {@code GET /ui/collectors/NAME?q=}</td><td>the operator's page:
 *       collectors, jobs, unassigned targets, sources, changes, config; one collector's targets
 *       filtered by label (HTML, no script)</td></tr>
 *   <tr><td>{@code GET /api/v1/status}, {@code GET /api/v1/status/collectors/NAME?q=}</td><td>the
 *       same as JSON, streamed</td></tr>
 *   <tr><td>{@code POST /-/reload}</td><td>when the service enabled it: reloads the config; 200
 *       or 500 with the reason</td></tr>
 * </table>
 *
 * <h2>Consistency and cost</h2>
 *
 * With a handover (the service's default), a collector's answer also holds the targets it lost
 * and their new owner has not picked up yet (make-before-break); with poll membership, collectors
 * are answered 503 until membership has settled after a start.
 *
 * <p>Every answer is computed from one {@link Allocator#snapshot()}, read once per request: a request
 * never blocks on the allocator's writers and never sees a half-applied change. Answers that do not
 * depend on the collector ({@code /jobs}, {@code /scrape_configs}) are rendered once per snapshot
 * and cached until the allocator publishes another; a collector's answer costs what its targets
 * take to write. Answers are deterministic functions of the snapshot (jobs in name order, targets
 * in identity-hash order, which is stable across JVMs), so replicas whose allocators agree serve
 * byte-identical answers.
 *
 * <h2>Limits</h2>
 *
 * Only {@code GET} and {@code HEAD}; a request that carries a body is refused (413), a request URI
 * longer than {@value #MAX_URI_LENGTH} characters too (414; past the 16 KiB header buffer Jetty
 * answers 414 itself). Nothing in a request names a file or reaches anything but the snapshot.
 *
 * <p>The HTTP engine is Jetty 12 (its core API, no servlets): connections are read by a selector,
 * not by a thread each, so a client that sends its headers slowly holds a socket and a buffer but
 * no thread, and requests are handled on a small pool only once their headers are complete. Each
 * connection must complete its first request's headers within the {@linkplain Builder#headerTimeout
 * header timeout} (default 10 s) and is closed after the {@linkplain Builder#idleTimeout idle
 * timeout} (default 30 s) without a byte; at most {@linkplain Builder#maxConnections} connections
 * are open at once (Jetty stops accepting beyond that).
 *
 * <p>Nothing is logged per request. Thread-safe; {@link #start()} binds and returns (it blocks only
 * while binding), {@link #close()} stops at once.
 */
public final class AllocationServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AllocationServer.class);

  /** The longest request URI accepted, in characters. */
  public static final int MAX_URI_LENGTH = 2048;

  private final InetSocketAddress address;
  private final int threads;
  /** What requests are answered from; replaced whole by {@link #takeOver} on a reload. */
  private volatile Routes routes;
  private final Duration headerTimeout;
  private final Duration idleTimeout;
  private final int maxConnections;
  private final WebConfig tls;
  private final Duration certificateCheck;
  private Server server;
  private java.util.concurrent.ScheduledExecutorService certificateWatch;
  private ServerConnector connector;
  private RequestTimeouts timeouts;

  private AllocationServer(Builder b) {
    this.address = b.address;
    this.routes =
        new Routes(
            b.allocator, b.metrics, b.readiness, b.polls, new Rendering(b.scrapeConfigs), b.requests, b.reload,
            b.unknownCollector,
            b.page != null ? b.page : new StatusPage(StatusPage.Context.program(b.allocator.strategy())),
            b.handover);
    this.threads = b.threads;
    this.headerTimeout = b.headerTimeout;
    this.idleTimeout = b.idleTimeout;
    this.maxConnections = b.maxConnections;
    this.tls = b.tls;
    this.certificateCheck = b.certificateCheck;
  }

  /** Everything a request is answered from, swapped as one on a reload. */
  private record Routes(
      Allocator allocator,
      Supplier<String> metrics,
      BooleanSupplier readiness,
      PollMembership polls,
      Rendering rendering,
      RequestCounter requests,
      Reload reload,
      java.util.function.Consumer<String> unknownCollector,
      StatusPage page,
      Handover handover) {

    /** What a collector's answer is rendered from: the snapshot, plus held targets if handing over. */
    dev.apportion.allocation.Allocation served() {
      dev.apportion.allocation.Allocation snapshot = allocator.snapshot();
      return handover == null ? snapshot : handover.served(snapshot);
    }

    void fetched(String collector, String job, dev.apportion.allocation.Allocation view) {
      if (handover != null) {
        handover.fetched(collector, job, view);
      }
    }
  }

  /** What {@code POST /-/reload} runs; blocks until the reload is done or refused. */
  interface Reload {
    /**
     * Reloads. Blocks.
     *
     * @return a one-line outcome for the answer
     * @throws Exception with a one-line message when the reload was refused (the old config stays)
     */
    String reload() throws Exception;
  }

  /**
   * Answers from now on from {@code other}'s allocator, membership, metrics and settings (its
   * builder's), keeping this server's listener and connections: a reload without a gap. {@code
   * other} is never started. Never blocks.
   */
  void takeOver(AllocationServer other) {
    this.routes = other.routes;
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
    // Threads: one acceptor, one selector and the request handlers.
    QueuedThreadPool pool = new QueuedThreadPool(threads + 4, 2);
    pool.setName("apportion-http");
    pool.setDaemon(true);
    Server s = new Server(pool);
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setRequestHeaderSize(16 << 10);
    http.setIdleTimeout(idleTimeout.toMillis());
    // Paths are matched as fixed strings and never name a file, so an encoded '/' in a job name
    // (the OpenTelemetry collector escapes 'serviceMonitor/ns/name/0') is data, not ambiguity.
    http.setUriCompliance(UriCompliance.UNSAFE);
    ServerConnector c;
    SslContextFactory.Server ssl = null;
    if (tls == null) {
      c = new ServerConnector(s, 1, 1, new HttpConnectionFactory(http));
    } else {
      try {
        ssl = tls.factory();
      } catch (java.security.GeneralSecurityException e) {
        throw new IOException("TLS: " + e.getMessage(), e);
      }
      SecureRequestCustomizer secure = new SecureRequestCustomizer();
      secure.setSniHostCheck(false);
      http.addCustomizer(secure);
      c = new ServerConnector(s, 1, 1, new SslConnectionFactory(ssl, "http/1.1"), new HttpConnectionFactory(http));
    }
    c.setHost(address.getAddress() == null ? null : address.getAddress().getHostAddress());
    c.setPort(address.getPort());
    c.setIdleTimeout(idleTimeout.toMillis());
    c.setAcceptQueueSize(128);
    timeouts = new RequestTimeouts(c.getScheduler(), headerTimeout);
    c.addEventListener(timeouts);
    s.addConnector(c);
    s.addBean(new NetworkConnectionLimit(maxConnections, c));
    s.setHandler(
        new Handler.Abstract() {
          @Override
          public boolean handle(Request request, Response response, Callback callback) {
            serve(request, response, callback);
            return true;
          }
        });
    s.setStopTimeout(0);
    try {
      s.start();
    } catch (IOException e) {
      stopQuietly(s);
      throw e;
    } catch (Exception e) {
      stopQuietly(s);
      throw new IOException("cannot start the HTTP server: " + e.getMessage(), e);
    }
    server = s;
    connector = c;
    if (ssl != null) {
      watchCertificates(ssl);
    }
    LOG.info(
        "serving allocations on {}://{}",
        tls == null ? "http" : "https",
        formatAddress(new InetSocketAddress(address.getAddress(), c.getLocalPort())));
    return this;
  }

  /**
   * Re-reads the certificate, key and client CA files when they change (checked every 5 s), so a
   * renewed certificate is served to new connections without a restart. The files are taken only
   * as a pair that matches (the key is the certificate's, {@link WebConfig#requireMatch}): a
   * certificate written before its key, or a bad file, is logged once and the old pair stays until
   * the files match again.
   */
  private void watchCertificates(SslContextFactory.Server ssl) {
    String[] last = {tls.stamp()};
    boolean[] failing = {false};
    certificateWatch =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "apportion-tls-reload");
              t.setDaemon(true);
              return t;
            });
    java.util.concurrent.ScheduledFuture<?> unused =
        certificateWatch.scheduleWithFixedDelay(
            () -> {
              String now = tls.stamp();
              if (now.equals(last[0])) {
                return;
              }
              try {
                ssl.reload(
                    f -> {
                      try {
                        tls.apply(f);
                      } catch (IOException | java.security.GeneralSecurityException e) {
                        throw new IllegalStateException(e.getMessage(), e);
                      }
                    });
                last[0] = now;
                failing[0] = false;
                LOG.info("TLS certificate files reloaded");
              } catch (Exception e) {
                if (!failing[0]) {
                  failing[0] = true;
                  LOG.warn(
                      "TLS certificate files changed but cannot be loaded as a matching pair ({});"
                          + " serving the old ones until they can, logged again only after that",
                      LogSafe.text(e.getMessage()));
                }
              }
            },
            certificateCheck.toMillis(),
            certificateCheck.toMillis(),
            TimeUnit.MILLISECONDS);
  }


  private static void stopQuietly(Server s) {
    try {
      s.stop();
    } catch (Exception e) {
      // giving up on a server that did not start: nothing more to do
    }
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
    return connector.getLocalPort();
  }

  /**
   * Stops serving at once; an answer being written is cut (a scraper retries at its next refresh).
   * Every answer here is a small in-memory write, so there is nothing worth waiting for. Blocks
   * while Jetty's threads stop.
   */
  @Override
  public synchronized void close() {
    if (server != null) {
      stopQuietly(server);
      server = null;
      connector = null;
      timeouts.stop();
    }
    if (certificateWatch != null) {
      certificateWatch.shutdownNow();
      certificateWatch = null;
    }
  }

  private static String formatAddress(InetSocketAddress a) {
    String host = a.getAddress().getHostAddress();
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
  }

  private void serve(Request request, Response response, Callback callback) {
    Reply reply;
    Routes r = routes;
    try {
      boolean body =
          request.getLength() > 0 || request.getHeaders().contains(HttpHeader.TRANSFER_ENCODING);
      reply =
          answer(
              r,
              request.getMethod(),
              request.getHttpURI().getPath(),
              request.getHttpURI().getQuery(),
              body);
    } catch (RuntimeException e) {
      // A bug answers 500 and never kills the connection's thread; no per-request log line.
      reply = Reply.error("error", 500, "internal error");
    }
    r.requests().count(reply.endpoint, reply.status);
    response.setStatus(reply.status);
    HttpFields.Mutable headers = response.getHeaders();
    headers.put(HttpHeader.CONTENT_TYPE, reply.contentType);
    headers.put(HttpHeader.CACHE_CONTROL, "no-store");
    headers.put("X-Content-Type-Options", "nosniff");
    if (reply.contentType.startsWith("text/html")) {
      // The operator's page: no script, no frame, nothing from elsewhere; its one style is inline.
      headers.put("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
    }
    boolean head = "HEAD".equals(request.getMethod());
    if (reply.stream != null && !head) {
      try (java.io.OutputStream out = Content.Sink.asOutputStream(response)) {
        // The server ends the answer, not the writer: a writer that closes its stream (a JSON
        // generator does) and writes on would fail the answer and cost the client its connection.
        reply.stream.writeTo(
            new java.io.FilterOutputStream(out) {
              @Override
              public void write(byte[] b, int off, int len) throws IOException {
                out.write(b, off, len);
              }

              @Override
              public void close() throws IOException {
                out.flush();
              }
            });
      } catch (IOException | RuntimeException e) {
        callback.failed(e); // the status is sent: the client sees a cut answer
        return;
      }
      callback.succeeded();
      return;
    }
    if (reply.stream == null) {
      headers.put(new HttpField.LongValueHttpField(HttpHeader.CONTENT_LENGTH, reply.body.length));
    }
    response.write(true, head ? ByteBuffer.allocate(0) : ByteBuffer.wrap(reply.body), callback);
  }

  private Reply answer(Routes r, String method, String raw, String rawQuery, boolean hasBody) {
    if ("POST".equals(method) && "/-/reload".equals(raw) && !hasBody) {
      return reload(r);
    }
    boolean leave = "DELETE".equals(method) && "/targets".equals(raw);
    if (!"GET".equals(method) && !"HEAD".equals(method) && !leave) {
      return Reply.error("other", 405, "only GET and HEAD are served");
    }
    if (raw == null) {
      return Reply.error("other", 400, "no path");
    }
    int length = raw.length() + (rawQuery == null ? 0 : rawQuery.length() + 1);
    if (length > MAX_URI_LENGTH) {
      return Reply.error("other", 414, "request URI longer than " + MAX_URI_LENGTH);
    }
    if (hasBody) {
      return Reply.error("other", 413, "requests carry no body");
    }
    Map<String, String> query;
    try {
      query = Queries.parse(rawQuery);
    } catch (IllegalArgumentException e) {
      return Reply.error("other", 400, e.getMessage());
    }
    if (leave) {
      return Leaving.leave(r.polls(), query.get("collector"));
    }
    if (StatusPage.serves(raw)) {
      return r.page().answer(r.allocator().snapshot(), raw, query);
    }
    return switch (raw) {
      case "/targets" -> httpSd(r, query);
      case "/drained" -> Leaving.drained(r.allocator().snapshot(), r.handover(), query.get("collector"));
      case "/jobs" -> Reply.json("jobs", r.rendering().jobs(r.allocator().snapshot()));
      case "/scrape_configs" ->
          Reply.json("scrape_configs", r.rendering().scrapeConfigs(r.allocator().snapshot()));
      case "/livez" -> Reply.text("livez", 200, "ok\n");
      case "/readyz" ->
          r.readiness().getAsBoolean()
              ? Reply.text("readyz", 200, "ready\n")
              : Reply.text("readyz", 503, "not ready\n");
      case "/metrics" ->
          new Reply(
              "metrics",
              200,
              "text/plain; version=0.0.4; charset=utf-8",
              r.metrics().get().getBytes(StandardCharsets.UTF_8));
      case "/" -> Reply.text("index", 200, Rendering.INDEX);
      default ->
          raw.startsWith("/jobs/")
                  && raw.endsWith("/targets")
                  && raw.length() > "/jobs/".length() + "/targets".length()
              ? jobTargets(
                  r,
                  raw.substring("/jobs/".length(), raw.length() - "/targets".length()), query)
              : Reply.error("other", 404, "no such endpoint");
    };
  }

  private static Reply reload(Routes r) {
    if (r.reload() == null) {
      return Reply.error(
          "reload", 403, "reload over HTTP is not enabled (start the server with --web.enable-lifecycle)");
    }
    try {
      return Reply.text("reload", 200, r.reload().reload() + "\n");
    } catch (Exception e) {
      // The reason quotes the file, which is the operator's to read in the log, not the caller's.
      return Reply.text("reload", 500, "reload failed, the running config stays; the server's log says why\n");
    }
  }

  private static Reply httpSd(Routes r, Map<String, String> query) {
    String collector = query.get("collector");
    if (collector == null || collector.isBlank()) {
      return Reply.error("targets", 400, "the query parameter collector is required");
    }
    if (r.polls() != null) {
      r.polls().heard(collector, query.get("node"));
      if (!r.polls().answering(collector)) {
        return Reply.error("targets", 503, PollMembership.SETTLING);
      }
    }
    dev.apportion.allocation.Allocation view = r.served();
    checkKnown(r, view, collector);
    r.page().polled(collector, view);
    Reply reply = Reply.json("targets", r.rendering().httpSd(view, collector));
    r.fetched(collector, null, view);
    return reply;
  }

  private static Reply jobTargets(Routes r, String rawJob, Map<String, String> query) {
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
      return Reply.json("jobs", r.rendering().jobAllCollectors(r.served(), job));
    }
    if (r.polls() != null && !collector.isBlank()) {
      r.polls().heard(collector, query.get("node"));
      if (!r.polls().answering(collector)) {
        return Reply.error("jobs", 503, PollMembership.SETTLING);
      }
    }
    dev.apportion.allocation.Allocation view = r.served();
    checkKnown(r, view, collector);
    r.page().polled(collector, view);
    Reply reply = Reply.json("jobs", r.rendering().jobTargets(view, collector, job));
    r.fetched(collector, job, view);
    return reply;
  }

  /**
   * Reports a request for a collector the snapshot does not know (a typo in a scraper's config
   * gets an empty answer, which alone says nothing). Without poll membership only: there a poll
   * makes its collector known.
   */
  private static void checkKnown(Routes r, Allocation snapshot, String collector) {
    if (r.polls() != null || !snapshot.jobsFor(collector).isEmpty()) {
      return;
    }
    for (dev.apportion.allocation.Collector c : snapshot.collectors()) {
      if (c.name().equals(collector)) {
        return;
      }
    }
    r.unknownCollector().accept(collector);
  }

  /** One answer: endpoint (a metric tag), status, type and bytes, or a body written as it goes. */
  static final class Reply {
    final String endpoint;
    final int status;
    final String contentType;
    final byte[] body;
    /** Null for an answer of {@link #body}'s bytes. */
    final Streamed stream;

    Reply(String endpoint, int status, String contentType, byte[] body) {
      this(endpoint, status, contentType, body, null);
    }

    private Reply(String endpoint, int status, String contentType, byte[] body, Streamed stream) {
      this.endpoint = endpoint;
      this.status = status;
      this.contentType = contentType;
      this.body = body;
      this.stream = stream;
    }

    /** An answer written as it goes (chunked), for bodies that grow with the targets. */
    static Reply streamed(String endpoint, int status, String contentType, Streamed stream) {
      return new Reply(endpoint, status, contentType, new byte[0], stream);
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

  /** Writes an answer's body to the response as it goes; blocks while the client reads. */
  interface Streamed {
    void writeTo(java.io.OutputStream out) throws IOException;
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
    private Duration headerTimeout = Duration.ofSeconds(10);
    private Duration idleTimeout = Duration.ofSeconds(30);
    private int maxConnections = 2048;
    private Reload reload;
    private WebConfig tls;
    private Duration certificateCheck = Duration.ofSeconds(5);
    private java.util.function.Consumer<String> unknownCollector = name -> {};
    private StatusPage page;
    private Handover handover;

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
     * How many threads answer requests (requests whose headers are complete; reading them takes
     * no thread). Default 4.
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

    /**
     * How long a connection may take to complete a TLS handshake or the headers of any request,
     * the first or a later one, before it is closed. Default 10 s.
     *
     * @param timeout positive
     * @return this builder
     */
    public Builder headerTimeout(Duration timeout) {
      this.headerTimeout = positive(timeout, "headerTimeout");
      return this;
    }

    /**
     * How long a connection may stay without a byte either way before it is closed. Default 30 s.
     *
     * @param timeout positive
     * @return this builder
     */
    public Builder idleTimeout(Duration timeout) {
      this.idleTimeout = positive(timeout, "idleTimeout");
      return this;
    }

    /**
     * The most connections open at once; beyond it new connections wait in the kernel's accept
     * queue. Default 2048.
     *
     * @param max at least 1
     * @return this builder
     */
    public Builder maxConnections(int max) {
      if (max < 1) {
        throw new IllegalArgumentException("maxConnections must be at least 1");
      }
      this.maxConnections = max;
      return this;
    }

    private static Duration positive(Duration d, String what) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " must be positive");
      }
      return d;
    }

    /** Serves HTTPS with these settings (the exporter toolkit's web config file). */
    Builder tls(WebConfig config) {
      this.tls = Objects.requireNonNull(config, "config");
      return this;
    }

    /** How often the TLS files are checked for a change. Default 5 s. */
    Builder certificateCheck(Duration every) {
      this.certificateCheck = positive(every, "certificateCheck");
      return this;
    }

    /** The operator's page with what the service knows besides the allocator. */
    Builder statusPage(StatusPage page) {
      this.page = Objects.requireNonNull(page, "page");
      return this;
    }

    /**
     * Enables {@code POST /-/reload}, which runs {@code reload} on the request's thread; without it
     * the endpoint answers 403, as Prometheus's does without {@code --web.enable-lifecycle}.
     */
    Builder reload(Reload reload) {
      this.reload = Objects.requireNonNull(reload, "reload");
      return this;
    }

    /** Called (on the request's thread; must not block) for a request naming an unknown collector. */
    Builder unknownCollector(java.util.function.Consumer<String> report) {
      this.unknownCollector = Objects.requireNonNull(report, "report");
      return this;
    }

    /** Serves each collector its targets plus those {@code handover} holds for it. */
    Builder handover(Handover handover) {
      this.handover = Objects.requireNonNull(handover, "handover");
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
