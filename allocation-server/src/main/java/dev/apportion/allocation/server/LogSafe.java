package dev.apportion.allocation.server;

import java.util.Collection;
import java.util.Iterator;

/**
 * Makes text that came from outside (a poll's collector name or node, a label name, an exception
 * message carrying a URL) safe to write in one log line: control characters (a newline would forge
 * a line, an ESC would drive a terminal) become {@code \n}, {@code \t} or {@code \u001b} escapes,
 * backslashes are doubled so an escape cannot be faked, and the text is cut at {@value #MAX_CHARS}
 * characters. Stateless; allocates only when something must change.
 */
final class LogSafe {
  /** The most characters of one outside value written to a log line. */
  static final int MAX_CHARS = 200;

  /** The most names of a collection written to a log line. */
  static final int MAX_SAMPLE = 10;

  private LogSafe() {}

  /**
   * {@code s} escaped and cut for a log line; {@code "null"} for null.
   *
   * @param s any text
   * @return one line of at most {@value #MAX_CHARS} characters plus an ellipsis
   */
  static String text(String s) {
    if (s == null) {
      return "null";
    }
    boolean clean = s.length() <= MAX_CHARS;
    for (int i = 0; clean && i < s.length(); i++) {
      char c = s.charAt(i);
      clean = c >= 0x20 && c != 0x7f && c != '\\' && !Character.isSurrogate(c) && c != 0x2028 && c != 0x2029 && !(c >= 0x80 && c < 0xa0);
    }
    if (clean) {
      return s;
    }
    StringBuilder b = new StringBuilder(Math.min(s.length(), MAX_CHARS) + 16);
    int i = 0;
    for (; i < s.length() && b.length() < MAX_CHARS; i++) {
      char c = s.charAt(i);
      switch (c) {
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case '\\' -> b.append("\\\\");
        default -> {
          if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0x2028 || c == 0x2029) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    if (i < s.length()) {
      b.append("...");
    }
    return b.toString();
  }

  /**
   * A bounded sample of {@code names}: the first {@value #MAX_SAMPLE}, each escaped, and how many
   * more there are.
   *
   * @param names the names
   * @return such as {@code [a, b, c]} or {@code [a, b, ... 12 more]}
   */
  static String sample(Collection<String> names) {
    StringBuilder b = new StringBuilder("[");
    Iterator<String> it = names.iterator();
    for (int i = 0; it.hasNext() && i < MAX_SAMPLE; i++) {
      if (i > 0) {
        b.append(", ");
      }
      b.append(text(it.next()));
    }
    if (names.size() > MAX_SAMPLE) {
      b.append(", ... ").append(names.size() - MAX_SAMPLE).append(" more");
    }
    return b.append(']').toString();
  }
}
