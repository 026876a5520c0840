package dev.apportion.allocation.server;

import com.fasterxml.jackson.core.JsonFactory;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.TargetInterner;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;

/**
 * A Prometheus server's or agent's active targets: {@code discoveredLabels} (with the {@code
 * __meta_*} labels, so a target's node is known) under the scrape pool as the job, the address
 * from {@code __address__}; the discovering server's own scrape settings ({@code
 * __scrape_interval__}, {@code __scrape_timeout__}, {@code __metrics_path__}, {@code __scheme__},
 * {@code __param_*}) are dropped ({@link TargetReader#SCRAPE_SETTING_LABELS}). Parsed as it
 * arrives.
 */
final class PrometheusTargetsSource implements TargetSource {
  private final URI url;
  private final String shown;
  private final HttpFetch fetch;
  private final SourceLimits limits;
  private final JsonFactory json;
  private final LabelNames labelNames = new LabelNames();
  /** Gives back the previous read's target for every unchanged label set. */
  private final TargetInterner interner = new TargetInterner();

  PrometheusTargetsSource(URI base, HttpClient client, Duration timeout, SourceLimits limits) {
    this(base, client, timeout, limits, null);
  }

  PrometheusTargetsSource(
      URI base, HttpClient client, Duration timeout, SourceLimits limits, SourceAuth auth) {
    String b = base.toString();
    this.url = URI.create((b.endsWith("/") ? b.substring(0, b.length() - 1) : b) + "/api/v1/targets?state=active");
    this.shown = HttpFetch.redacted(url);
    this.limits = limits;
    this.fetch = new HttpFetch(client, timeout, limits, auth);
    this.json = TargetReader.json(limits);
  }

  @Override
  public String describe() {
    return "Prometheus targets " + shown;
  }

  @Override
  public List<Target> read() throws IOException, InterruptedException {
    labelNames.begin();
    List<Target> out =
        fetch.get(url, in -> TargetReader.prometheus(in, json, "answer", labelNames, limits, interner));
    labelNames.end(describe());
    interner.endRefresh();
    return List.copyOf(out);
  }
}
