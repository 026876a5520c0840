package dev.apportion.allocation.server;

import com.google.re2j.Pattern;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The operator page's search over one collector's targets: terms separated by spaces, every one of
 * which must match, written as Prometheus writes label matchers.
 *
 * <ul>
 *   <li>{@code name="value"}, {@code name!="value"}: the label equals (or not) the value; a label
 *       the target lacks is the empty string, as in Prometheus;
 *   <li>{@code name=~"regex"}, {@code name!~"regex"}: RE2 syntax, anchored ({@code ^(?s:regex)$}),
 *       matched in linear time (RE2J), so no query can make a search run long;
 *   <li>any other word: found, ignoring case, in the address, the job or any label value.
 * </ul>
 *
 * {@code job} and {@code __address__} are labels here. A value may be quoted ({@code "a b"}, with
 * {@code \"} and {@code \\} inside) or bare up to the next space. Immutable; {@link #matches} never
 * blocks and allocates nothing but what a lower-casing of a value needs.
 */
final class TargetFilter {
  /** Matches every target. */
  static final TargetFilter NONE = new TargetFilter(List.of());

  private enum Op {
    EQ, NE, RE, NRE, TEXT
  }

  private record Term(Op op, String name, String value, Pattern pattern) {}

  private final List<Term> terms;

  private TargetFilter(List<Term> terms) {
    this.terms = terms;
  }

  /**
   * Parses a query.
   *
   * @param q the query; empty matches everything
   * @return the filter
   * @throws IllegalArgumentException for an unterminated quote, an empty label name or a bad
   *     regular expression, with a message that says which
   */
  static TargetFilter parse(String q) {
    List<Term> terms = new ArrayList<>();
    int i = 0;
    int n = q.length();
    while (i < n) {
      if (Character.isWhitespace(q.charAt(i))) {
        i++;
        continue;
      }
      int start = i;
      while (i < n && isNameChar(q.charAt(i))) {
        i++;
      }
      Op op = null;
      int opLength = 0;
      if (i > start && i < n) {
        if (q.startsWith("=~", i)) {
          op = Op.RE;
          opLength = 2;
        } else if (q.startsWith("!~", i)) {
          op = Op.NRE;
          opLength = 2;
        } else if (q.startsWith("!=", i)) {
          op = Op.NE;
          opLength = 2;
        } else if (q.charAt(i) == '=') {
          op = Op.EQ;
          opLength = 1;
        }
      }
      if (op == null) {
        // Plain text: the whole word (or quoted string) from where it started.
        i = start;
        StringBuilder text = new StringBuilder();
        i = value(q, i, text);
        if (text.length() > 0) {
          terms.add(new Term(Op.TEXT, null, text.toString().toLowerCase(Locale.ROOT), null));
        }
        continue;
      }
      String name = q.substring(start, i);
      i += opLength;
      StringBuilder value = new StringBuilder();
      i = value(q, i, value);
      Pattern pattern = null;
      if (op == Op.RE || op == Op.NRE) {
        try {
          pattern = PollMembership.compileAllow(value.toString());
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("bad regular expression for " + name + ": " + e.getMessage(), e);
        }
      }
      terms.add(new Term(op, name, value.toString(), pattern));
    }
    return new TargetFilter(List.copyOf(terms));
  }

  private static boolean isNameChar(char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.';
  }

  /** Reads a quoted or bare value from {@code i} into {@code out}; returns the index after it. */
  private static int value(String q, int i, StringBuilder out) {
    int n = q.length();
    if (i < n && q.charAt(i) == '"') {
      i++;
      while (i < n && q.charAt(i) != '"') {
        char c = q.charAt(i);
        if (c == '\\' && i + 1 < n) {
          c = q.charAt(++i);
        }
        out.append(c);
        i++;
      }
      if (i >= n) {
        throw new IllegalArgumentException("a quote is not closed");
      }
      return i + 1;
    }
    while (i < n && !Character.isWhitespace(q.charAt(i))) {
      out.append(q.charAt(i++));
    }
    return i;
  }

  /**
   * Whether {@code t} matches every term.
   *
   * @param t a target
   * @return true when it does
   */
  boolean matches(Target t) {
    for (Term term : terms) {
      if (!matches(term, t)) {
        return false;
      }
    }
    return true;
  }

  private static boolean matches(Term term, Target t) {
    return switch (term.op) {
      case EQ -> label(t, term.name).equals(term.value);
      case NE -> !label(t, term.name).equals(term.value);
      case RE -> term.pattern.matches(label(t, term.name));
      case NRE -> !term.pattern.matches(label(t, term.name));
      case TEXT -> text(t, term.value);
    };
  }

  private static String label(Target t, String name) {
    if (name.equals("job")) {
      return t.job();
    }
    if (name.equals("__address__")) {
      return t.address();
    }
    String v = t.labels().get(name);
    return v == null ? "" : v;
  }

  private static boolean text(Target t, String lower) {
    if (contains(t.address(), lower) || contains(t.job(), lower)) {
      return true;
    }
    for (Map.Entry<String, String> l : t.labels().entrySet()) {
      if (contains(l.getValue(), lower)) {
        return true;
      }
    }
    return false;
  }

  private static boolean contains(String s, String lower) {
    return s.toLowerCase(Locale.ROOT).contains(lower);
  }
}
