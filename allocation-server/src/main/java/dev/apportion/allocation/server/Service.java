package dev.apportion.allocation.server;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.kubernetes.KubernetesCollectorSource;
import dev.apportion.allocation.kubernetes.KubernetesNodeZones;
import dev.apportion.allocation.metrics.AllocatorMetrics;
import dev.apportion.allocation.spi.AllocatorSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * The whole service as {@link Main} runs it, built from a {@link ServerConfig}: an allocator with
 * {@link AllocatorMetrics} on a Prometheus registry, a {@link TargetFeed} over the configured
 * sources, the configured collector source, and an {@link AllocationServer}. Tests run it in
 * process.
 *
 * <p>Ready ({@code /readyz}) when the feed has read every source once and, for static and
 * Kubernetes collectors, the collectors were delivered once; with poll membership, when membership
 * has settled after the start ({@link PollMembership#settled}: until then collectors are answered
 * 503 and keep their last targets). The listener starts only once the sources were read once (or
 * the first read ended). With the handover on (the default) collectors are served through a
 * {@link Handover}: make-before-break while targets move.
 */
final class Service implements AutoCloseable {
  private final ServerConfig config;
  private final PrometheusMeterRegistry registry;
  private final Allocator allocator;
  private final TargetFeed feed;
  /** The listener; on a reload the new service takes the old one's ({@link #reloaded}). */
  private AllocationServer server;
  private final AllocationServer routes;
  private final KubernetesClient testClient;
  private final Reloader reloader;
  /** Null without a {@code costs} block. */
  private final CostFeed costs;
  private final CostMetrics costMetrics;
  private final PollMembership polls;
  private final KubernetesClient kubernetesClient;
  private final KubernetesCollectorSource kubernetes;
  private final KubernetesNodeZones nodeZones;
  private final BooleanSupplier collectorsReady;
  /** Null when the handover is off. */
  private final Handover handover;
  private final Map<String, Counter> requestCounters = new ConcurrentHashMap<>();
  private final Counter unknownRequests;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Service.class);
  /** The last changes and the operator's page that shows them. */
  private final ChangeLog changes = new ChangeLog();
  private final StatusPage page;
  private final long startedMillis = System.currentTimeMillis();

  Service(ServerConfig config) throws ConfigException {
    this(config, null, null);
  }

  Service(ServerConfig config, KubernetesClient client) throws ConfigException {
    this(config, client, null);
  }

  /**
   * With {@code client} non-null, Kubernetes collectors are watched through it (tests); the service
   * then leaves it open. With null, the service builds its own client (in-cluster or KUBECONFIG)
   * and closes it.
   */
  Service(ServerConfig config, KubernetesClient client, Reloader reloader) throws ConfigException {
    this.config = config;
    this.testClient = client;
    this.reloader = reloader;
    this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    this.unknownRequests =
        Counter.builder("apportion_server_unknown_collector_requests")
            .description("requests for a collector the server does not know (answered with no targets)")
            .register(registry);
    Allocators.Builder b = config.strategy().builder();
    b.listener(AllocatorMetrics.of(registry));
    b.listener(changes);
    try {
      this.allocator = b.build();
    } catch (IllegalArgumentException e) {
      throw new ConfigException("strategy: " + e.getMessage());
    }

    TargetFeed.Builder fb = TargetFeed.builder(allocator)
            .interval(config.refreshInterval())
            .readTimeout(config.requestTimeout());
    this.costs = costFeed(config);
    if (costs != null) {
      fb.costs(costs::attach);
    }
    for (ServerConfig.SourceConfig s : config.targets()) {
      if (s instanceof ServerConfig.FileSd f) {
        fb.source(TargetSource.fileSd(f.job(), f.files()));
      } else if (s instanceof ServerConfig.HttpSd h) {
        fb.source(new HttpSdSource(h.job(), h.url(), fetch(h.http(), h.secretParams(), config), SourceLimits.DEFAULT));
      } else if (s instanceof ServerConfig.PrometheusApi p) {
        fb.source(new PrometheusTargetsSource(p.url(), fetch(p.http(), p.secretParams(), config), SourceLimits.DEFAULT));
      }
    }
    this.feed = fb.build();
    this.costMetrics = new CostMetrics(registry, allocator, costBand(config.strategy()), costs);
    Gauge.builder("apportion_server_replicas", config.strategy()::replicaCount)
        .description("how many collectors each target is placed on (strategy.replicas)")
        .register(registry);
    List<TargetSource> sources = feed.sources();
    for (int i = 0; i < sources.size(); i++) {
      int index = i;
      Gauge.builder("apportion_server_source_up", feed, f -> f.isUp(index) ? 1 : 0)
          .description("1 when the target source's last read succeeded")
          .tag("source", sources.get(i).describe())
          .register(registry);
    }

    if (reloader != null) {
      Gauge.builder("apportion_server_config_last_reload_successful", reloader, r -> r.lastSuccessful() ? 1 : 0)
          .description("1 when the last config reload succeeded (SIGHUP or POST /-/reload)")
          .register(registry);
      Gauge.builder(
              "apportion_server_config_last_reload_success_timestamp_seconds",
              reloader,
              r -> r.lastSuccessMillis() / 1000.0)
          .description("when the config was last loaded successfully")
          .register(registry);
    }
    this.handover =
        config.handover().enabled()
            ? new Handover(
                config.handover(), Handover.intervalsOf(config.scrapeConfigs()), System::nanoTime, allocator::snapshot)
            : null;
    if (handover != null) {
      Handover h = handover;
      Gauge.builder("apportion_server_handover_held_targets", h, Handover::heldCount)
          .description("targets still served to their previous owner until the new owner picks them up")
          .register(registry);
      io.micrometer.core.instrument.FunctionCounter.builder("apportion_server_handover_moves", h, Handover::moves)
          .description("targets that moved from one collector to another, each handed over make-before-break")
          .register(registry);
    }
    AllocationServer.Builder sb =
        AllocationServer.builder(allocator)
            .address(config.listen())
            .metrics(this::scrapeMetrics)
            .scrapeConfigs(config.scrapeConfigs())
            .requestCounter(this::countRequest)
            .unknownCollector(this::unknownCollector);
    ServerConfig.CollectorsConfig c = config.collectors();
    if (c instanceof ServerConfig.StaticCollectors s) {
      allocator.setCollectors(s.collectors());
      this.polls = null;
      this.kubernetes = null;
      this.nodeZones = null;
      this.kubernetesClient = null;
      this.collectorsReady = () -> true;
    } else if (c instanceof ServerConfig.PollCollectors p) {
      PollMembership.Builder pb =
          PollMembership.builder(allocator::setCollectors)
              .settle(config.refreshInterval())
              .expireAfter(p.expireAfter())
              .expected(p.expected())
              .drained(this::drained);
      if (p.allow() != null) {
        pb.allow(p.allow());
      }
      this.polls = pb.build();
      sb.polls(polls);
      this.kubernetes = null;
      this.nodeZones = null;
      this.kubernetesClient = null;
      PollMembership membership = polls;
      this.collectorsReady = membership::settled;
    } else {
      ServerConfig.KubernetesCollectors k = (ServerConfig.KubernetesCollectors) c;
      this.polls = null;
      this.kubernetesClient = client == null ? new KubernetesClientBuilder().build() : null;
      KubernetesClient use = client == null ? kubernetesClient : client;
      KubernetesCollectorSource.Builder kb;
      try {
        kb =
            KubernetesCollectorSource.builder()
                .client(use)
                .namespace(k.namespace())
                .labelSelector(k.labelSelector())
                .notReadyGracePeriod(k.notReadyGracePeriod())
                .readyFirst(k.readyFirst())
                .capacityFromMemoryRequest(k.capacityFromMemoryRequest());
      } catch (IllegalArgumentException e) {
        closeQuietly(kubernetesClient);
        throw new ConfigException("collectors.kubernetes: " + e.getMessage());
      }
      this.kubernetes = kb.forAllocator(allocator).build();
      KubernetesCollectorSource source = kubernetes;
      if (k.nodeZones()) {
        // Before the collectors' first delivery would be better still, but the allocator takes
        // zones at any time: a later map re-places what it changes.
        this.nodeZones = KubernetesNodeZones.builder().client(use).forAllocator(allocator).build();
        KubernetesNodeZones zones = nodeZones;
        this.collectorsReady = () -> source.isWatching() && zones.isWatching();
      } else {
        this.nodeZones = null;
        this.collectorsReady = source::isWatching;
      }
    }
    if (reloader != null && reloader.overHttp()) {
      sb.reload(reloader);
    }
    if (config.web() != null) {
      sb.tls(config.web());
    }
    this.page = new StatusPage(pageContext(config, c));
    sb.statusPage(page);
    if (handover != null) {
      sb.handover(handover);
    }
    this.server = sb.readiness(this::isReady).build();
    this.routes = server;
  }

  /**
   * A service running {@code next} under this one's listener, which then stops everything but the
   * listener. The new service's sources are read and its collectors known before it answers, so a
   * reload serves no empty or partial set; poll membership keeps its members. Blocks while that
   * happens (at most the new {@code requestTimeout} for the sources, 30 s for the collectors).
   *
   * @throws ConfigException if {@code next} cannot be built or does not become ready; this service
   *     then runs on untouched
   */
  Service reloaded(ServerConfig next) throws ConfigException {
    if (!next.listen().equals(config.listen())) {
      throw new ConfigException("listen: cannot change on a reload (restart to move the listener)");
    }
    if (!java.util.Objects.equals(next.web(), config.web())) {
      throw new ConfigException("webConfigFile: cannot change on a reload (restart; changed certificate files are reloaded by themselves)");
    }
    Service fresh = new Service(next, testClient, reloader);
    try {
      if (polls != null && fresh.polls != null) {
        fresh.polls.seed(polls.current(), polls);
      }
      if (handover != null && fresh.handover != null) {
        fresh.handover.adopt(handover);
      }
      fresh.startParts();
      long deadline = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
      while (!fresh.isReady()) {
        if (System.nanoTime() > deadline) {
          throw new ConfigException(
              "the new config did not become ready (a source unreadable or no collectors) within 30s");
        }
        Thread.sleep(50);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      fresh.closeParts();
      throw new ConfigException("interrupted while reloading");
    } catch (ConfigException | RuntimeException e) {
      fresh.closeParts();
      throw e;
    }
    fresh.page.inherit(page);
    fresh.changes.reloadedFrom(changes, allocator.snapshot(), fresh.allocator.snapshot());
    server.takeOver(fresh.routes);
    fresh.server = server;
    server = null;
    closeParts();
    return fresh;
  }

  /** What the operator's page shows besides the allocator. */
  private StatusPage.Context pageContext(ServerConfig config, ServerConfig.CollectorsConfig c) {
    ServerConfig.StrategyConfig st = config.strategy();
    String knownBy =
        c instanceof ServerConfig.StaticCollectors ? "static"
            : c instanceof ServerConfig.PollCollectors ? "polls" : "kubernetes";
    String summary =
        "strategy "
            + strategyLine(st)
            + " · refreshInterval "
            + config.refreshInterval().toString().substring(2).toLowerCase(java.util.Locale.ROOT)
            + " · "
            + config.targets().size()
            + (config.targets().size() == 1 ? " source" : " sources")
            + " · collectors "
            + knownBy
            + (config.costs() != null ? " · costs from a query" : "")
            + (config.web() != null ? " · HTTPS" : "");
    return new StatusPage.Context(
        knownBy,
        strategyLine(st),
        costBand(st),
        Allocators.PER_NODE.equals(st.name()) && "".equals(st.fallback()),
        st.maxTargetsPerCollector() != null || st.maxCostPerCollector() != null,
        () -> feed.sourceStatus(),
        () -> costs == null ? null : new StatusPage.CostStatus(costs.isUp(), costs.lastMatched(), costs.lastFallback()),
        changes::entries,
        () ->
            reloader == null
                ? new StatusPage.ConfigStatus(summary, false, true, startedMillis, null)
                : new StatusPage.ConfigStatus(
                    summary, true, reloader.lastSuccessful(), reloader.lastSuccessMillis(), reloader.lastError()),
        System::currentTimeMillis);
  }

  /** The strategy and the options set, such as {@code consistent-hashing loadFactor=1.1}. */
  private static String strategyLine(ServerConfig.StrategyConfig st) {
    StringBuilder b = new StringBuilder(st.name());
    option(b, "fallback", st.fallback() == null ? null : st.fallback().isEmpty() ? "none" : st.fallback());
    option(b, "loadFactor", st.loadFactor());
    option(b, "partitionBy", st.partitionBy() == null || st.partitionBy().isEmpty() ? null : st.partitionBy());
    option(b, "maxSkew", st.maxSkew());
    option(b, "maxTargetsPerCollector", st.maxTargetsPerCollector());
    option(b, "maxCostPerCollector", st.maxCostPerCollector());
    option(b, "replicas", st.replicas());
    return b.toString();
  }

  private static void option(StringBuilder b, String name, Object value) {
    if (value != null) {
      b.append(' ').append(name).append('=').append(value);
    }
  }

  /** A source's fetch: the shared client of its options, the request timeout, the byte cap. */
  private static HttpFetch fetch(
      HttpClientOptions http, java.util.Set<String> secretParams, ServerConfig config) {
    return new HttpFetch(http, null, config.requestTimeout(), SourceLimits.DEFAULT.maxBytes(), secretParams);
  }

  /** The cost feed of the {@code costs} block, which re-applies the targets after each read. */
  private CostFeed costFeed(ServerConfig config) {
    if (config.costs() == null) {
      return null;
    }
    Long limit = config.strategy().maxCostPerCollector();
    CostClamp clamp = limit == null ? null : new CostClamp(limit, () -> allocator.snapshot().collectors());
    return new CostFeed(config.costs(), config.requestTimeout(), () -> changes.asCosts(feed::reapply), clamp);
  }

  /** The cost band {@code consistent-hashing} keeps; null for the strategies that keep none. */
  private static Double costBand(ServerConfig.StrategyConfig s) {
    if (!Allocators.CONSISTENT_HASHING.equals(s.name())) {
      return null;
    }
    return s.loadFactor() != null ? s.loadFactor() : AllocatorSpec.DEFAULT_COST_LOAD_FACTOR;
  }

  private String scrapeMetrics() {
    costMetrics.update();
    return registry.scrape();
  }

  private void countRequest(String endpoint, int status) {
    requestCounters
        .computeIfAbsent(
            endpoint + " " + status,
            k ->
                Counter.builder("apportion_server_requests")
                    .description("HTTP requests answered, by endpoint and status")
                    .tag("endpoint", endpoint)
                    .tag("status", Integer.toString(status))
                    .register(registry))
        .increment();
  }

  /** The most distinct unknown collector names logged; past it they are only counted. */
  static final int MAX_UNKNOWN_LOGGED = 100;

  private final java.util.Set<String> unknownLogged = ConcurrentHashMap.newKeySet();

  private void unknownCollector(String name) {
    unknownRequests.increment();
    if (unknownLogged.size() < MAX_UNKNOWN_LOGGED && unknownLogged.add(name)) {
      LOG.warn(
          "a scraper asked for collector '{}', which is not one of the {} collectors known; it gets"
              + " no targets (a typo in its config?); logged once per name, counted by"
              + " apportion_server_unknown_collector_requests_total",
          LogSafe.text(name),
          allocator.snapshot().collectors().size());
    }
  }

  boolean isReady() {
    return feed.isReady() && collectorsReady.getAsBoolean();
  }

  Service start() throws IOException {
    startParts();
    awaitFirstRead();
    server.start();
    return this;
  }

  /**
   * Waits until every source has been read once and static or Kubernetes collectors delivered, at
   * most one request timeout and a second (by then the first read has ended either way): a
   * listener that answered before would serve collectors a partial set.
   */
  private void awaitFirstRead() {
    long deadline = System.nanoTime() + config.requestTimeout().plusSeconds(1).toNanos();
    while (!(feed.isReady() && (polls != null || collectorsReady.getAsBoolean()))
        && System.nanoTime() - deadline < 0) {
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Whether {@code collector} owns nothing and is held nothing (what a leave waits for). */
  private boolean drained(String collector) {
    dev.apportion.allocation.Allocation snapshot = allocator.snapshot();
    return handover == null
        ? snapshot.targetCount(collector) == 0
        : handover.drained(collector, snapshot);
  }

  /** Starts everything but the listener. */
  private void startParts() {
    if (kubernetes != null) {
      // Completes at the first delivery; fails only when the API server refuses the list (401 or
      // 403), which the source itself logs once at ERROR; readiness then stays false.
      CompletableFuture<Void> unused = kubernetes.start();
    }
    if (nodeZones != null) {
      // The same for the Nodes (a ClusterRole is needed for them); readiness waits for it too.
      CompletableFuture<Void> unused = nodeZones.start();
    }
    if (polls != null) {
      polls.start();
    }
    feed.start();
    if (costs != null) {
      costs.start();
    }
  }

  int port() {
    return server.port();
  }

  Allocator allocator() {
    return allocator;
  }

  TargetFeed feed() {
    return feed;
  }

  CostFeed costs() {
    return costs;
  }

  PollMembership polls() {
    return polls;
  }

  /** Null when the handover is off. */
  Handover handover() {
    return handover;
  }

  ServerConfig config() {
    return config;
  }

  @Override
  public void close() {
    closeQuietly(server);
    closeParts();
  }

  /** Stops everything but the listener. */
  private void closeParts() {
    List<AutoCloseable> parts = new ArrayList<>();
    parts.add(feed);
    if (costs != null) {
      parts.add(costs);
    }
    if (polls != null) {
      parts.add(polls);
    }
    if (kubernetes != null) {
      parts.add(kubernetes);
    }
    if (nodeZones != null) {
      parts.add(nodeZones);
    }
    if (kubernetesClient != null) {
      parts.add(kubernetesClient);
    }
    for (AutoCloseable p : parts) {
      closeQuietly(p);
    }
    registry.close();
  }

  private static void closeQuietly(AutoCloseable c) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (Exception e) {
      // closing on the way out: nothing useful to do with it
    }
  }
}
