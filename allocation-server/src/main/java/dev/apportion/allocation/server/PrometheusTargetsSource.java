package dev.apportion.allocation.server;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.TargetInterner;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.util.List;

/**
 * A Prometheus server's or agent's active targets: {@code discoveredLabels} (with the {@code
 * __meta_*} labels, so a target's node is known) under the scrape pool as the job, the address
 * from {@code __address__}; the discovering server's own scrape settings ({@code
 * __scrape_interval__}, {@code __scrape_timeout__}, {@code __metrics_path__}, {@code __scheme__},
 * {@code __param_*}) are dropped ({@link TargetReader#SCRAPE_SETTING_LABELS}). Parsed as it
 * arrives.
 */
final class PrometheusTargetsSource extends HttpTargetSource {
  PrometheusTargetsSource(URI base, HttpFetch fetch, SourceLimits limits) {
    super(targetsUrl(base), fetch, limits);
  }

  private static URI targetsUrl(URI base) {
    String b = base.toString();
    return URI.create((b.endsWith("/") ? b.substring(0, b.length() - 1) : b) + "/api/v1/targets?state=active");
  }

  @Override
  public String describe() {
    return "Prometheus targets " + shown;
  }

  @Override
  void parse(InputStream in, TargetInterner interner, LabelNames labelNames, List<Target> out)
      throws IOException {
    out.addAll(TargetReader.prometheus(in, json, "answer", labelNames, limits, interner));
  }
}
