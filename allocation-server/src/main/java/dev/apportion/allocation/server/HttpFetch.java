package dev.apportion.allocation.server;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Objects;

/**
 * One bounded GET whose body is parsed as it arrives: the request timeout covers the whole body
 * (not only the headers), the body is capped at {@link SourceLimits#maxBytes()}, and errors name
 * the URL with its password redacted. A URL's user information ({@code http://user:pass@host/}) is
 * sent as HTTP basic auth, as Prometheus's client does, and never shown.
 */
final class HttpFetch {
  private final HttpClient client;
  private final Duration timeout;
  private final SourceLimits limits;
  private final SourceAuth auth;

  /** Parses a body as it is read. */
  interface BodyReader<T> {
    T read(InputStream body) throws IOException;
  }

  HttpFetch(HttpClient client, Duration timeout, SourceLimits limits) {
    this(client, timeout, limits, null);
  }

  /** With {@code auth} not null, its {@code Authorization} header is sent instead of the URL's. */
  HttpFetch(HttpClient client, Duration timeout, SourceLimits limits, SourceAuth auth) {
    this.client = Objects.requireNonNull(client, "client");
    this.timeout = Objects.requireNonNull(timeout, "timeout");
    this.limits = Objects.requireNonNull(limits, "limits");
    this.auth = auth;
  }

  /**
   * {@code url} without its password, for logs, metrics and {@code __meta_url}: {@code
   * http://user:<secret>@host/...}; the URL itself when it has no user information.
   *
   * @param url a URL
   * @return the URL safe to show
   */
  static String redacted(URI url) {
    String userInfo = url.getRawUserInfo();
    if (userInfo == null) {
      return url.toString();
    }
    int colon = userInfo.indexOf(':');
    String shown = colon < 0 ? userInfo : userInfo.substring(0, colon) + ":<secret>";
    return url.toString().replace("://" + userInfo + "@", "://" + shown + "@");
  }

  /**
   * GETs {@code url} and parses its body with {@code reader}, within the timeout. Blocks.
   *
   * @throws IOException on a transport error, a status other than 200, a body over the cap or not
   *     read within the timeout, or a parse error; the message names the redacted URL
   */
  <T> T get(URI url, BodyReader<T> reader) throws IOException, InterruptedException {
    String shown = redacted(url);
    long deadline = System.nanoTime() + timeout.toNanos();
    HttpRequest.Builder rb =
        HttpRequest.newBuilder(withoutUserInfo(url))
            .timeout(timeout)
            .header("Accept", "application/json");
    String userInfo = url.getRawUserInfo();
    if (auth != null) {
      try {
        rb.header("Authorization", auth.header());
      } catch (IOException e) {
        throw new IOException(shown + ": " + e.getMessage(), e);
      }
    } else if (userInfo != null) {
      rb.header(
          "Authorization",
          "Basic "
              + Base64.getEncoder()
                  .encodeToString(
                      URLDecoder.decode(userInfo.replace("+", "%2B"), StandardCharsets.UTF_8)
                          .getBytes(StandardCharsets.UTF_8)));
    }
    HttpResponse<InputStream> response;
    try {
      response = client.send(rb.GET().build(), HttpResponse.BodyHandlers.ofInputStream());
    } catch (IOException e) {
      throw new IOException(shown + ": " + e.getClass().getSimpleName() + ": " + e.getMessage(), e);
    }
    try (InputStream body = response.body()) {
      if (response.statusCode() != 200) {
        throw new IOException(shown + ": HTTP " + response.statusCode());
      }
      long length = response.headers().firstValueAsLong("Content-Length").orElse(-1);
      if (length > limits.maxBytes()) {
        throw new IOException(shown + ": answer larger than " + limits.maxBytes() + " bytes");
      }
      if (length == 0) {
        throw new IOException(shown + ": empty answer (no body)");
      }
      LimitedInputStream in = new LimitedInputStream(body, "answer", limits.maxBytes(), deadline);
      try {
        return reader.read(in);
      } catch (IOException e) {
        if (in.count() == 0) {
          throw new IOException(shown + ": empty answer (no body)", e);
        }
        throw new IOException(shown + ": " + e.getMessage(), e);
      }
    }
  }

  private static URI withoutUserInfo(URI url) {
    if (url.getRawUserInfo() == null) {
      return url;
    }
    return URI.create(url.toString().replace("://" + url.getRawUserInfo() + "@", "://"));
  }
}
