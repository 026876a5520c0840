package dev.apportion.allocation.server;

import com.fasterxml.jackson.core.JsonFactory;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.TargetInterner;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Prometheus HTTP SD: the target groups fetched from one URL on every read, parsed as they arrive.
 * An empty answer (200 with no body) is an error, so the last good targets are kept, as
 * Prometheus keeps them; {@code []} says there are none. {@code __meta_url} is the URL with its
 * password redacted.
 */
final class HttpSdSource implements TargetSource {
  private final String job;
  private final URI url;
  private final String shown;
  private final HttpFetch fetch;
  private final SourceLimits limits;
  private final JsonFactory json;
  private final LabelNames labelNames = new LabelNames();
  /** Gives back the previous read's target for every unchanged label set. */
  private final TargetInterner interner = new TargetInterner();

  HttpSdSource(String job, URI url, HttpClient client, Duration timeout, SourceLimits limits) {
    this(job, url, client, timeout, limits, null);
  }

  HttpSdSource(
      String job, URI url, HttpClient client, Duration timeout, SourceLimits limits, SourceAuth auth) {
    this.job = job;
    this.url = url;
    this.shown = HttpFetch.redacted(url);
    this.limits = limits;
    this.fetch = new HttpFetch(client, timeout, limits, auth);
    this.json = TargetReader.json(limits);
  }

  @Override
  public String describe() {
    return "HTTP SD " + shown;
  }

  @Override
  public List<Target> read() throws IOException, InterruptedException {
    labelNames.begin();
    List<Target> out = new ArrayList<>();
    fetch.get(
        url,
        in -> {
          TargetReader.groups(in, json, job, "__meta_url", shown, "answer", labelNames, limits, interner, out);
          return out;
        });
    labelNames.end(describe());
    interner.endRefresh();
    return List.copyOf(out);
  }

  LabelNames labelNames() {
    return labelNames;
  }
}
