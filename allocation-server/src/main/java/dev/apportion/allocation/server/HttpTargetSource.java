package dev.apportion.allocation.server;

import com.fasterxml.jackson.core.JsonFactory;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.net.URI;
import java.util.List;

/**
 * A target source read with one GET: the fetch (deadline, cap, credentials, redaction), the
 * parser's limits and what is kept between reads ({@link InternedReads}). {@link HttpSdSource} and
 * {@link PrometheusTargetsSource} differ only in their URL and how they parse the answer.
 */
abstract class HttpTargetSource implements TargetSource {
  final URI url;
  /** The URL as logs, metrics and {@code __meta_url} show it. */
  final String shown;
  final SourceLimits limits;
  final JsonFactory json;
  private final HttpFetch fetch;
  private final InternedReads reads = new InternedReads();

  HttpTargetSource(URI url, HttpFetch fetch, SourceLimits limits) {
    this.url = url;
    this.fetch = fetch;
    this.shown = fetch.shown(url);
    this.limits = limits;
    this.json = TargetReader.json(limits);
  }

  @Override
  public final List<Target> read() throws IOException, InterruptedException {
    return reads.read(
        describe(),
        (interner, labelNames, out) ->
            fetch.get(
                url,
                in -> {
                  parse(in, interner, labelNames, out);
                  return out;
                }));
  }

  /** Parses one answer into {@code out}. */
  abstract void parse(
      java.io.InputStream in,
      dev.apportion.allocation.TargetInterner interner,
      LabelNames labelNames,
      List<Target> out)
      throws IOException;

  LabelNames labelNames() {
    return reads.labelNames();
  }
}
