package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Objects;

/** One bounded JSON GET: a timeout, a size cap, and an error naming the URL. */
final class HttpFetch {
  /** Larger answers are refused rather than read into memory. */
  static final long MAX_BYTES = 256L << 20;

  private final HttpClient client;
  private final Duration timeout;

  HttpFetch(HttpClient client, Duration timeout) {
    this.client = Objects.requireNonNull(client, "client");
    this.timeout = Objects.requireNonNull(timeout, "timeout");
  }

  JsonNode json(URI url) throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(url).timeout(timeout).header("Accept", "application/json").GET().build();
    HttpResponse<InputStream> response;
    try {
      response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
    } catch (IOException e) {
      throw new IOException(url + ": " + e, e);
    }
    try (InputStream body = response.body()) {
      if (response.statusCode() != 200) {
        throw new IOException(url + ": HTTP " + response.statusCode());
      }
      long length = response.headers().firstValueAsLong("Content-Length").orElse(-1);
      if (length > MAX_BYTES) {
        throw new IOException(url + ": answer larger than " + MAX_BYTES + " bytes");
      }
      try {
        return TargetGroups.JSON.readTree(new BoundedInputStream(body, MAX_BYTES));
      } catch (IOException e) {
        throw new IOException(url + ": " + e.getMessage(), e);
      }
    }
  }

  /** Fails once more than {@code limit} bytes were read. */
  private static final class BoundedInputStream extends java.io.FilterInputStream {
    private long left;

    BoundedInputStream(InputStream in, long limit) {
      super(in);
      this.left = limit;
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0 && --left < 0) {
        throw new IOException("answer larger than " + MAX_BYTES + " bytes");
      }
      return b;
    }

    @Override
    public int read(byte[] buf, int off, int len) throws IOException {
      int n = super.read(buf, off, len);
      if (n > 0) {
        left -= n;
        if (left < 0) {
          throw new IOException("answer larger than " + MAX_BYTES + " bytes");
        }
      }
      return n;
    }
  }
}
