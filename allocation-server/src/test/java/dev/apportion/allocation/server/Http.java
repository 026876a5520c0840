package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A tiny blocking HTTP client for tests. */
final class Http {
  static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private Http() {}

  record Response(int status, String body) {
    JsonNode json() {
      try {
        return TargetGroups.JSON.readTree(body);
      } catch (IOException e) {
        throw new UncheckedIOException(body, e);
      }
    }
  }

  static Response get(String url) {
    return send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).GET().build());
  }

  static Response send(HttpRequest request) {
    try {
      HttpResponse<String> r = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
      return new Response(r.statusCode(), r.body());
    } catch (IOException e) {
      throw new UncheckedIOException(request.uri().toString(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
