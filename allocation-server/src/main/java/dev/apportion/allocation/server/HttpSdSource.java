package dev.apportion.allocation.server;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.TargetInterner;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.util.List;

/**
 * Prometheus HTTP SD: the target groups fetched from one URL on every read, parsed as they arrive.
 * An empty answer (200 with no body) is an error, so the last good targets are kept, as
 * Prometheus keeps them; {@code []} says there are none. {@code __meta_url} is the URL with its
 * credentials {@linkplain Redaction redacted}.
 */
final class HttpSdSource extends HttpTargetSource {
  private final String job;

  HttpSdSource(String job, URI url, HttpFetch fetch, SourceLimits limits) {
    super(url, fetch, limits);
    this.job = job;
  }

  @Override
  public String describe() {
    return "HTTP SD " + shown;
  }

  @Override
  void parse(InputStream in, TargetInterner interner, LabelNames labelNames, List<Target> out)
      throws IOException {
    TargetReader.groups(in, json, job, "__meta_url", shown, "answer", labelNames, limits, interner, out);
  }
}
