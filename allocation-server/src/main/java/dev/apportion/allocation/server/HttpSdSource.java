package dev.apportion.allocation.server;

import dev.apportion.allocation.Target;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;

/** Prometheus HTTP SD: the target groups fetched from one URL on every read. */
final class HttpSdSource implements TargetSource {
  private final String job;
  private final URI url;
  private final HttpFetch fetch;

  HttpSdSource(String job, URI url, HttpClient client, Duration timeout) {
    this.job = job;
    this.url = url;
    this.fetch = new HttpFetch(client, timeout);
  }

  @Override
  public String describe() {
    return "HTTP SD " + url;
  }

  @Override
  public List<Target> read() throws IOException, InterruptedException {
    return List.copyOf(
        TargetGroups.parse(fetch.json(url), job, "__meta_url", url.toString(), url.toString()));
  }
}
