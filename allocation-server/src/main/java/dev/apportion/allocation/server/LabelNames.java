package dev.apportion.allocation.server;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Prometheus label-name validation at ingestion. Prometheus rejects a whole HTTP SD answer when one
 * label name is not {@code [a-zA-Z_][a-zA-Z0-9_]*}, so one bad file SD group would otherwise break
 * {@code /targets} for every collector that holds one of its targets. A source drops such labels
 * (the target keeps its other labels and is still placed) and reports them through one of these:
 * a WARN line when a read first has invalid names, an INFO line when a read has none again,
 * nothing for the reads in between.
 *
 * <p>Not thread-safe: each source owns one, and a source is read by one thread at a time.
 */
final class LabelNames {
  private static final Logger LOG = LoggerFactory.getLogger(LabelNames.class);

  private boolean reporting;
  private int dropped;
  private String firstName;
  private String firstWhere;
  private int episodes;
  /**
   * Valid names checked before, by slot of their hash: a parser hands over one canonical instance
   * per field name, so a name met at every target is checked once, then found by reference.
   */
  private final String[] validSeen = new String[64];

  /**
   * Whether {@code name} is a valid Prometheus label name. Allocates nothing.
   *
   * @param name the name
   * @return true if it matches {@code [a-zA-Z_][a-zA-Z0-9_]*}
   */
  static boolean valid(String name) {
    if (name.isEmpty()) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      boolean ok =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether {@code name} is {@linkplain #valid valid}, remembering the instances found valid so
   * that the same instance is not checked again. Allocates nothing.
   *
   * @param name the name
   * @return true if it matches {@code [a-zA-Z_][a-zA-Z0-9_]*}
   */
  // ReferenceEquality: only the very instance checked before is taken as checked.
  @SuppressWarnings("ReferenceEquality")
  boolean isValid(String name) {
    int slot = name.hashCode() & (validSeen.length - 1);
    if (validSeen[slot] == name) {
      return true;
    }
    if (!valid(name)) {
      return false;
    }
    validSeen[slot] = name;
    return true;
  }

  /** Starts counting one read. */
  void begin() {
    dropped = 0;
    firstName = null;
    firstWhere = null;
  }

  /**
   * Checks a label name of the read in progress, counting it when invalid.
   *
   * @param name the label name
   * @param where where it was read, for the log line
   * @return true to keep the label
   */
  boolean keep(String name, String where) {
    if (valid(name)) {
      return true;
    }
    drop(name, where);
    return false;
  }

  /**
   * Counts an invalid label name of the read in progress, for a reader that checked it with
   * {@link #isValid} (and so puts where it was read into words only when it is dropped).
   *
   * @param name the label name, not {@linkplain #valid valid}
   * @param where where it was read, for the log line
   */
  void drop(String name, String where) {
    if (dropped++ == 0) {
      firstName = name;
      firstWhere = where;
    }
  }

  /**
   * Ends the read: logs the start or the end of an episode of invalid names.
   *
   * @param source the source's description
   */
  void end(String source) {
    if (dropped > 0 && !reporting) {
      reporting = true;
      episodes++;
      LOG.warn(
          "{}: dropped {} label(s) with names Prometheus rejects (it would refuse the whole SD"
              + " answer), the first '{}' in {}; label names must match [a-zA-Z_][a-zA-Z0-9_]*."
              + " Logged again only once the source is clean",
          source,
          dropped,
          LogSafe.text(firstName),
          LogSafe.text(firstWhere));
    } else if (dropped == 0 && reporting) {
      reporting = false;
      LOG.info("{}: no invalid label names any more", source);
    }
  }

  /**
   * How many labels the last read dropped.
   *
   * @return the count
   */
  int lastDropped() {
    return dropped;
  }

  /**
   * How many episodes of invalid names began (each logged once).
   *
   * @return the count
   */
  int episodes() {
    return episodes;
  }
}
