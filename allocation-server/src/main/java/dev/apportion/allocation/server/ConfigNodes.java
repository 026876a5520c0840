package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The config file's reading helpers, shared by every block's parser ({@link ServerConfig}, {@link
 * CostsConfig}, {@link WebConfig}, {@link HttpClientOptions}, {@link ScrapeConfigCheck}): each
 * takes the path of the node it reads ({@code at}, {@code ""} at the top) and throws a {@link
 * ConfigException} naming the key at fault. Unknown keys are errors, so a typo never silently
 * means a default. Stateless.
 */
final class ConfigNodes {
  /** The longest duration any key accepts: far beyond any sensible value, far below overflow. */
  static final Duration MAX_DURATION = Duration.ofDays(365);

  private static final Pattern HOST_PORT = Pattern.compile("^(?:\\[([^\\]]+)\\]|([^:]*)):(\\d{1,5})$");
  private static final Pattern DURATION = Pattern.compile("^(\\d+)(ms|s|m|h)$");

  private ConfigNodes() {}

  /** {@code key} under {@code at}, as errors write it. */
  static String path(String at, String key) {
    return at.isEmpty() ? key : at + "." + key;
  }

  /** {@code n} as a mapping. */
  static ObjectNode object(JsonNode n, String at) throws ConfigException {
    if (n == null || !n.isObject()) {
      throw new ConfigException(at + ": must be a mapping");
    }
    return (ObjectNode) n;
  }

  /** Refuses any key of {@code o} not in {@code allowed}. */
  static void keys(JsonNode o, String at, String... allowed) throws ConfigException {
    Set<String> ok = Set.of(allowed);
    for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!ok.contains(k)) {
        throw new ConfigException(
            path(at, LogSafe.text(k)) + ": unknown key (expected one of " + List.of(allowed) + ")");
      }
    }
  }

  /** The scalar under {@code key}, or {@code dflt} when absent or null. */
  static String text(JsonNode o, String key, String dflt, String at) throws ConfigException {
    JsonNode n = o.get(key);
    if (n == null || n.isNull()) {
      return dflt;
    }
    return scalar(n, path(at, key));
  }

  /** A scalar without control characters. */
  static String scalar(JsonNode n, String at) throws ConfigException {
    if (n == null || !n.isValueNode() || n.isNull()) {
      throw new ConfigException(at + ": must be a scalar");
    }
    String s = n.asText();
    noControlCharacters(s, at);
    return s;
  }

  /** The non-blank scalar under {@code key}. */
  static String required(JsonNode o, String key, String at) throws ConfigException {
    String v = text(o, key, null, at);
    if (v == null || v.isBlank()) {
      throw new ConfigException(path(at, key) + ": required");
    }
    return v;
  }

  /** The boolean under {@code key}, or {@code dflt} when absent or null. */
  static boolean bool(JsonNode o, String key, boolean dflt, String at) throws ConfigException {
    JsonNode n = o.get(key);
    if (n == null || n.isNull()) {
      return dflt;
    }
    if (!n.isBoolean()) {
      throw new ConfigException(path(at, key) + ": must be true or false");
    }
    return n.asBoolean();
  }

  /** A finite number, or null when absent; {@code what} says what it must be. */
  static Double number(JsonNode o, String key, String at, String what) throws ConfigException {
    JsonNode n = o.get(key);
    if (n == null) {
      return null;
    }
    if (!n.isNumber() || !Double.isFinite(n.asDouble())) {
      throw new ConfigException(path(at, key) + ": must be " + what + ", not " + LogSafe.text(n.asText()));
    }
    return n.asDouble();
  }

  /** A whole number from 1 to {@code max}, or null when absent. */
  static Long whole(JsonNode o, String key, String at, long max) throws ConfigException {
    JsonNode n = o.get(key);
    if (n == null) {
      return null;
    }
    if (!n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() < 1 || n.asLong() > max) {
      throw new ConfigException(path(at, key) + ": must be a whole number from 1 to " + max);
    }
    return n.asLong();
  }

  /** Names and paths with NUL, ESC, newlines and the like are mistakes or attacks on a log line. */
  static void noControlCharacters(String s, String at) throws ConfigException {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)) {
        throw new ConfigException(at + ": contains a control character (U+" + String.format("%04X", (int) c) + ")");
      }
    }
  }

  /** An http or https URL with a host. */
  static URI url(String s, String at) throws ConfigException {
    try {
      URI u = new URI(s);
      if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null) {
        throw new ConfigException(at + ": must be an http or https URL");
      }
      return u;
    } catch (URISyntaxException e) {
      // The message would quote the URL, which may carry a secret.
      throw new ConfigException(at + ": not a URL (" + LogSafe.text(e.getReason()) + ")");
    }
  }

  /** {@code host:port}, {@code [v6]:port} or {@code :port}, resolved now. */
  // One bind address by nature: a host name that resolves to several is bound at its first.
  @SuppressWarnings("AddressSelection")
  static InetSocketAddress address(String s, String at) throws ConfigException {
    Matcher m = HOST_PORT.matcher(s.trim());
    if (!m.matches()) {
      throw new ConfigException(at + ": must be host:port, such as 0.0.0.0:8080 or :8080");
    }
    String host = m.group(1) != null ? m.group(1) : m.group(2);
    int port = Integer.parseInt(m.group(3));
    if (port > 65535) {
      throw new ConfigException(at + ": port out of range");
    }
    if (host.isEmpty()) {
      return new InetSocketAddress(port);
    }
    InetSocketAddress a = new InetSocketAddress(host, port);
    if (a.isUnresolved()) {
      throw new ConfigException(at + ": cannot resolve host '" + host + "'");
    }
    return a;
  }

  /** A positive duration such as {@code 500ms}, {@code 15s}, {@code 2m} or {@code 1h}. */
  static Duration duration(String s, String at) throws ConfigException {
    return duration(s, at, null);
  }

  /** A positive duration, or {@code dflt} when {@code s} is null. */
  static Duration duration(String s, String at, Duration dflt) throws ConfigException {
    if (s == null) {
      return dflt;
    }
    Duration d = parseDuration(s, at);
    if (d.isZero()) {
      throw new ConfigException(at + ": must be positive");
    }
    return d;
  }

  /** A duration that may be zero ({@code 0s}), such as a grace period that can be turned off. */
  static Duration durationOrZero(String s, String at) throws ConfigException {
    return "0".equals(s.trim()) ? Duration.ZERO : parseDuration(s, at);
  }

  private static Duration parseDuration(String s, String at) throws ConfigException {
    Matcher m = DURATION.matcher(s.trim());
    if (!m.matches()) {
      throw new ConfigException(at + ": must be a duration such as 500ms, 15s, 2m or 1h");
    }
    String tooLong = at + ": longer than " + MAX_DURATION.toHours() + "h";
    long n;
    try {
      n = Long.parseLong(m.group(1));
    } catch (NumberFormatException e) {
      throw new ConfigException(tooLong);
    }
    long unitMillis =
        switch (m.group(2)) {
          case "ms" -> 1;
          case "s" -> 1_000;
          case "m" -> 60_000;
          default -> 3_600_000;
        };
    if (n > MAX_DURATION.toMillis() / unitMillis) {
      throw new ConfigException(tooLong);
    }
    return Duration.ofMillis(n * unitMillis);
  }

  /** An error message from a library on one line, escaped for a log line. */
  static String oneLine(String s) {
    if (s == null) {
      return "unreadable";
    }
    return LogSafe.text(s.replaceAll("\\s+", " ").trim());
  }
}
