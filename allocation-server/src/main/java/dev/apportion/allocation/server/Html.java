package dev.apportion.allocation.server;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/**
 * The one way the operator's page writes text that came from outside (collector names, nodes,
 * zones, jobs, addresses, label names and values, source descriptions, error messages, a search
 * query) into HTML: {@link #escape} makes it inert in element content and in quoted attribute
 * values alike, and shows control characters as visible escapes so that a name with a newline
 * reads as one, not as two words. Stateless.
 */
final class Html {
  private Html() {}

  /**
   * {@code s} safe in HTML element content and in a double- or single-quoted attribute value:
   * {@code & < > " '} become character references; control characters (C0, DEL, C1, the Unicode
   * line and paragraph separators) become {@code \n}, {@code \r}, {@code \t} or {@code \\uXXXX},
   * and a backslash is doubled so such an escape cannot be faked. A lone surrogate becomes {@code
   * \\uXXXX} too. Allocates only when something changes.
   *
   * @param s any text; null is written as the empty string
   * @return the escaped text
   */
  static String escape(String s) {
    if (s == null) {
      return "";
    }
    int i = 0;
    while (i < s.length() && plain(s, i)) {
      i++;
    }
    if (i == s.length()) {
      return s;
    }
    StringBuilder b = new StringBuilder(s.length() + 16).append(s, 0, i);
    for (; i < s.length(); i++) {
      char c = s.charAt(i);
      if (plain(s, i)) {
        b.append(c);
        continue;
      }
      switch (c) {
        case '&' -> b.append("&amp;");
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '"' -> b.append("&quot;");
        case '\'' -> b.append("&#39;");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
            b.append(c).append(s.charAt(++i));
          } else {
            b.append(String.format("\\u%04x", (int) c));
          }
        }
      }
    }
    return b.toString();
  }

  /** Whether the char at {@code i} is written as it is (a surrogate pair is checked as a pair). */
  private static boolean plain(String s, int i) {
    char c = s.charAt(i);
    if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0x2028 || c == 0x2029) {
      return false;
    }
    return switch (c) {
      case '&', '<', '>', '"', '\'', '\\' -> false;
      default -> !Character.isSurrogate(c);
    };
  }

  /**
   * {@code s} as one percent-encoded URL component (a path segment or a query value): every
   * character but the unreserved ones is encoded, a space as {@code %20}. The result still goes
   * through {@link #escape} when written into an attribute.
   *
   * @param s any text
   * @return the encoded component
   */
  static String component(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
