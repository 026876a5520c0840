package dev.apportion.allocation.server;

import dev.apportion.allocation.Target;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * One place targets are discovered, read as {@link Target}s with the labels Prometheus would give
 * them. Combine several in a {@link TargetFeed}.
 *
 * <p>{@link #read()} blocks on I/O (a file, an HTTP request bounded by its timeout) and allocates
 * the list it returns; a source is called by one thread at a time. The built-in sources:
 *
 * <ul>
 *   <li>{@link #fileSd}: Prometheus file SD files (JSON or YAML lists of {@code {targets, labels}}
 *       groups), re-read only when a file's size or modification time changes, or a file matching
 *       the pattern appears or goes; each target gets {@code __address__} and {@code
 *       __meta_filepath} like Prometheus's;
 *   <li>{@link #httpSd}: a Prometheus HTTP SD URL (the same groups in JSON); {@code __meta_url} is
 *       added;
 *   <li>{@link #prometheusTargets}: a Prometheus server or agent's {@code /api/v1/targets}: each
 *       active target's {@code discoveredLabels} (which keep the {@code __meta_*} labels, so
 *       per-node works) under its scrape pool as the job.
 * </ul>
 *
 * <p>The built-in sources drop every label whose name Prometheus rejects (not {@code
 * [a-zA-Z_][a-zA-Z0-9_]*}): Prometheus refuses a whole HTTP SD answer for one such name, so a
 * single bad group would otherwise cost every collector holding one of its targets all of its
 * targets. The target itself is kept; the drop is logged at WARN once per episode.
 */
public interface TargetSource {

  /**
   * What this source reads, for log lines and metric tags.
   *
   * @return a short description
   */
  String describe();

  /**
   * The targets this source knows now. Blocks on I/O.
   *
   * @return the targets; a new or unchanged immutable list
   * @throws IOException if the source cannot be read or is malformed; the caller keeps the last
   *     good list
   * @throws InterruptedException if interrupted while waiting for a response
   */
  List<Target> read() throws IOException, InterruptedException;

  /**
   * Prometheus file SD. A path's last element may be a glob ({@code *.json}), as in Prometheus;
   * {@code .json} files are read as JSON, {@code .yml}/{@code .yaml} as YAML.
   *
   * @param job the job of every target read
   * @param files the files or patterns; not empty
   * @return the source
   */
  static TargetSource fileSd(String job, List<Path> files) {
    return new FileSdSource(requireJob(job), List.copyOf(files), SourceLimits.DEFAULT);
  }

  /**
   * Prometheus HTTP SD, fetched on each {@link #read()}.
   *
   * @param job the job of every target read
   * @param url the SD endpoint
   * @param client the client to fetch with
   * @param timeout the request timeout
   * @return the source
   */
  static TargetSource httpSd(String job, URI url, HttpClient client, Duration timeout) {
    return new HttpSdSource(
        requireJob(job), Objects.requireNonNull(url, "url"), fetch(client, timeout), SourceLimits.DEFAULT);
  }

  /**
   * A Prometheus server's or agent's active targets, from {@code BASE/api/v1/targets?state=active}.
   *
   * @param base the server's base URL, such as {@code http://prometheus:9090}
   * @param client the client to fetch with
   * @param timeout the request timeout
   * @return the source
   */
  static TargetSource prometheusTargets(URI base, HttpClient client, Duration timeout) {
    return new PrometheusTargetsSource(
        Objects.requireNonNull(base, "base"), fetch(client, timeout), SourceLimits.DEFAULT);
  }

  private static HttpFetch fetch(HttpClient client, Duration timeout) {
    return new HttpFetch(
        HttpClientOptions.NONE,
        Objects.requireNonNull(client, "client"),
        Objects.requireNonNull(timeout, "timeout"),
        SourceLimits.DEFAULT.maxBytes(),
        java.util.Set.of());
  }

  private static String requireJob(String job) {
    Objects.requireNonNull(job, "job");
    if (job.isBlank()) {
      throw new IllegalArgumentException("job must not be blank");
    }
    return job;
  }
}
