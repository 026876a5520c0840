package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.JsonNode;
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
  private final LabelNames labelNames = new LabelNames();

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
    JsonNode root = fetch.json(url);
    labelNames.begin();
    List<Target> out =
        List.copyOf(
            TargetGroups.parse(root, job, "__meta_url", url.toString(), url.toString(), labelNames));
    labelNames.end(describe());
    return out;
  }

  LabelNames labelNames() {
    return labelNames;
  }
}
