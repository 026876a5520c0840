package dev.apportion.allocation.metrics;

import io.micrometer.core.instrument.Tag;
import java.util.Objects;
import java.util.Set;

/** The one home of the rules both metrics builders apply to a prefix and to extra tags. */
final class MeterNaming {
  private MeterNaming() {}

  /** A valid meter-name prefix: non-empty, neither starting nor ending with a dot. */
  static String checkPrefix(String prefix) {
    Objects.requireNonNull(prefix, "prefix must not be null");
    if (prefix.isEmpty() || prefix.startsWith(".") || prefix.endsWith(".")) {
      throw new IllegalArgumentException(
          "prefix must be non-empty and neither start nor end with a dot: '" + prefix + "'");
    }
    return prefix;
  }

  /** Extra tags that use none of the keys {@code owner} sets itself. */
  static Iterable<Tag> checkTags(Iterable<Tag> extra, Set<String> reserved, String owner) {
    Objects.requireNonNull(extra, "tags must not be null");
    for (Tag tag : extra) {
      String key = Objects.requireNonNull(tag, "tags must not contain null").getKey();
      if (reserved.contains(key)) {
        throw new IllegalArgumentException("tag key '" + key + "' is set by " + owner);
      }
    }
    return extra;
  }
}
