package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Prints scenarios as Java source that recreates them, for pasting into a regression test. */
final class JavaCode {
  private static final int MAP_OF_LIMIT = 10;
  private static final int LINE = 96;

  private JavaCode() {}

  static String call(String indent, String method, List<String> args) {
    StringBuilder sb = new StringBuilder(indent).append('.').append(method).append('(');
    int length = indent.length() + method.length() + 2;
    for (String a : args) {
      length += a.length() + 2;
    }
    if (length <= LINE) {
      return sb.append(String.join(", ", args)).append(')').toString();
    }
    String inner = indent + "    ";
    for (int i = 0; i < args.size(); i++) {
      sb.append('\n').append(inner).append(wrap(inner, args.get(i)));
      if (i < args.size() - 1) {
        sb.append(',');
      }
    }
    return sb.append(')').toString();
  }

  /** Breaks a long {@code Target.of(...)} before its label map. */
  private static String wrap(String indent, String arg) {
    int at = arg.indexOf(", Map.");
    if (indent.length() + arg.length() <= LINE || at < 0) {
      return arg;
    }
    return arg.substring(0, at + 1) + "\n" + indent + "    " + arg.substring(at + 2);
  }

  static String string(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20 || c > 0x7e) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.append('"').toString();
  }

  static List<String> strings(List<String> values) {
    List<String> out = new ArrayList<>();
    for (String v : values) {
      out.add(string(v));
    }
    return out;
  }

  static String collector(Collector c) {
    String of = c.zone().isPresent()
        ? "Collector.of(" + string(c.name()) + ", "
            + c.node().map(JavaCode::string).orElse("null") + ", "
            + string(c.zone().get()) + ")"
        : c.node().isPresent()
        ? "Collector.of(" + string(c.name()) + ", " + string(c.node().get()) + ")"
        : "Collector.of(" + string(c.name()) + ")";
    return c.capacity() == 1.0 ? of : of + ".withCapacity(" + c.capacity() + ")";
  }

  static List<String> collectors(List<Collector> collectors) {
    List<String> out = new ArrayList<>();
    for (Collector c : collectors) {
      out.add(collector(c));
    }
    return out;
  }

  static String target(Target t) {
    StringBuilder sb = new StringBuilder("Target.of(").append(string(t.job())).append(", ")
        .append(string(t.address()));
    Map<String, String> labels = t.labels();
    String cost = t.cost() == 1 ? "" : ".withCost(" + t.cost() + "L)";
    if (labels.isEmpty()) {
      return sb.append(')').append(cost).toString();
    }
    boolean small = labels.size() <= MAP_OF_LIMIT;
    sb.append(small ? ", Map.of(" : ", Map.ofEntries(");
    boolean first = true;
    for (Map.Entry<String, String> e : labels.entrySet()) {
      if (!first) {
        sb.append(", ");
      }
      first = false;
      if (small) {
        sb.append(string(e.getKey())).append(", ").append(string(e.getValue()));
      } else {
        sb.append("Map.entry(").append(string(e.getKey())).append(", ")
            .append(string(e.getValue())).append(')');
      }
    }
    return sb.append("))").append(cost).toString();
  }

  static List<String> targets(List<Target> targets) {
    List<String> out = new ArrayList<>();
    for (Target t : targets) {
      out.add(target(t));
    }
    return out;
  }

  static String hex(long seed) {
    return "0x" + Long.toHexString(seed).toUpperCase(Locale.ROOT) + "L";
  }
}
