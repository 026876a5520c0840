package dev.apportion.allocation.server;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/** Parses a request's query string: at most a few parameters, first value wins. */
final class Queries {
  static final int MAX_PARAMETERS = 16;

  private Queries() {}

  /**
   * The parameters of a raw (still percent-encoded) query.
   *
   * @throws IllegalArgumentException for a malformed escape or too many parameters
   */
  static Map<String, String> parse(String rawQuery) {
    Map<String, String> out = new HashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return out;
    }
    int count = 0;
    for (String pair : rawQuery.split("&", -1)) {
      if (pair.isEmpty()) {
        continue;
      }
      if (++count > MAX_PARAMETERS) {
        throw new IllegalArgumentException("more than " + MAX_PARAMETERS + " query parameters");
      }
      int eq = pair.indexOf('=');
      String name = decode(eq < 0 ? pair : pair.substring(0, eq));
      String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
      out.putIfAbsent(name, value);
    }
    return out;
  }

  /**
   * Decodes one percent-encoded component ({@code +} is a space, as in forms and Go's
   * QueryUnescape).
   *
   * @throws IllegalArgumentException for a malformed escape
   */
  static String decode(String raw) {
    try {
      return URLDecoder.decode(raw, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("malformed percent-encoding in the request", e);
    }
  }
}
