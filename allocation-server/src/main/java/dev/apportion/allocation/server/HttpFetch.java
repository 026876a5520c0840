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
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One bounded GET whose body is parsed as it arrives, for every outgoing read (target sources and
 * the cost query): one deadline covers the whole exchange, connect, headers and every byte of the
 * body (a body that drips or stalls is cut when it passes, the reading thread interrupted), the
 * body is capped, and errors name the URL {@linkplain Redaction redacted}. A URL's user
 * information ({@code http://user:pass@host/}) is sent as HTTP basic auth, as Prometheus's client
 * does, unless the options give credentials, and never shown.
 *
 * <p>The client is the options' shared one ({@link HttpClientOptions#client()}); after an {@link
 * Error} inside a read (an {@link OutOfMemoryError} may have killed the client's selector thread)
 * the next read uses a new one. Thread-safe; {@link #get} blocks.
 */
final class HttpFetch {
  /** Ends reads at their deadline: one daemon thread for the whole process. */
  private static final ScheduledExecutorService DEADLINES =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "apportion-read-deadline");
            t.setDaemon(true);
            return t;
          });

  private final HttpClientOptions options;
  /** A client given by the embedder, used instead of the options' shared one; or null. */
  private final HttpClient fixed;
  private final Duration timeout;
  private final long maxBytes;
  private final Set<String> secretParams;

  /** Parses a body as it is read. */
  interface BodyReader<T> {
    T read(InputStream body) throws IOException;
  }

  /** Parses a body of any status as it is read. */
  interface AnswerReader<T> {
    T read(int status, InputStream body) throws IOException;
  }

  /**
   * @param options the client options (credentials, TLS)
   * @param fixed a client to use instead of the options' shared one, or null
   * @param timeout the deadline of one whole exchange
   * @param maxBytes the most body bytes read
   * @param secretParams query parameters to hide beside {@link Redaction#ALWAYS}
   */
  HttpFetch(
      HttpClientOptions options, HttpClient fixed, Duration timeout, long maxBytes, Set<String> secretParams) {
    this.options = Objects.requireNonNull(options, "options");
    this.fixed = fixed;
    this.timeout = Objects.requireNonNull(timeout, "timeout");
    this.maxBytes = maxBytes;
    this.secretParams = Set.copyOf(secretParams);
  }

  /** {@code url} safe to show in logs, metrics and labels. */
  String shown(URI url) {
    return Redaction.url(url, secretParams);
  }

  /**
   * GETs {@code url} and parses a 200 answer's body with {@code reader}. Blocks, at most the
   * timeout.
   *
   * @throws IOException on a transport error, a status other than 200, an empty body, a body over
   *     the cap or not read by the deadline, or a parse error; the message names the redacted URL
   */
  <T> T get(URI url, BodyReader<T> reader) throws IOException, InterruptedException {
    String shown = shown(url);
    return exchange(
        url,
        (status, in) -> {
          if (status != 200) {
            throw new IOException(shown + ": HTTP " + status);
          }
          return reader.read(in);
        });
  }

  /**
   * GETs {@code url} and parses the body, whatever the status, with {@code reader}. Blocks, at most
   * the timeout.
   *
   * @throws IOException as {@link #get}, but for the status
   */
  <T> T exchange(URI url, AnswerReader<T> reader) throws IOException, InterruptedException {
    String shown = shown(url);
    HttpClient client = fixed != null ? fixed : options.client();
    Deadline deadline = new Deadline(Thread.currentThread());
    ScheduledFuture<?> alarm = DEADLINES.schedule(deadline::pass, timeout.toNanos(), TimeUnit.NANOSECONDS);
    try {
      return send(client, url, shown, reader);
    } catch (IOException e) {
      if (deadline.passed()) {
        throw new IOException(shown + ": not read completely within " + timeout.toMillis() + " ms", e);
      }
      throw e;
    } catch (InterruptedException e) {
      if (deadline.passed()) {
        throw new IOException(shown + ": not read completely within " + timeout.toMillis() + " ms", e);
      }
      throw e;
    } catch (Error e) {
      if (fixed == null) {
        HttpClientOptions.discard(client); // its own threads may have died of it too
      }
      throw e;
    } finally {
      alarm.cancel(false);
      deadline.end();
    }
  }

  private <T> T send(HttpClient client, URI url, String shown, AnswerReader<T> reader) throws IOException, InterruptedException {
    long deadlineNanos = System.nanoTime() + timeout.toNanos();
    HttpRequest.Builder rb =
        HttpRequest.newBuilder(withoutUserInfo(url))
            .timeout(timeout)
            .header("Accept", "application/json");
    String userInfo = url.getRawUserInfo();
    String auth;
    try {
      auth = options.authorizationHeader();
    } catch (IOException e) {
      throw new IOException(shown + ": " + e.getMessage(), e);
    }
    if (auth != null) {
      rb.header("Authorization", auth);
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
      long length = response.headers().firstValueAsLong("Content-Length").orElse(-1);
      if (length > maxBytes) {
        throw new IOException(shown + ": answer larger than " + maxBytes + " bytes");
      }
      if (length == 0 && response.statusCode() == 200) {
        throw new IOException(shown + ": empty answer (no body)");
      }
      LimitedInputStream in = new LimitedInputStream(body, "answer", maxBytes, deadlineNanos);
      try {
        return reader.read(response.statusCode(), in);
      } catch (IOException e) {
        if (in.count() == 0 && response.statusCode() == 200) {
          throw new IOException(shown + ": empty answer (no body)", e);
        }
        if (e.getMessage() != null && e.getMessage().startsWith(shown)) {
          throw e;
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

  /** Interrupts the reading thread once, if the read is still going when the deadline passes. */
  private static final class Deadline {
    private final Thread reader;
    private boolean ended;
    private boolean passed;

    Deadline(Thread reader) {
      this.reader = reader;
    }

    synchronized void pass() {
      if (!ended) {
        passed = true;
        reader.interrupt();
      }
    }

    synchronized boolean passed() {
      return passed;
    }

    /** Ends the watch; clears an interrupt this watch made, so it never reaches later work. */
    synchronized void end() {
      ended = true;
      if (passed) {
        boolean unused = Thread.interrupted();
      }
    }
  }
}
