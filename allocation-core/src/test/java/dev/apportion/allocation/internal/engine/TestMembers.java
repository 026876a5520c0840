package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Collector;

/** What tests in other packages do to members that only the engine does in production. */
public final class TestMembers {
  private TestMembers() {}

  /**
   * Gives {@code m} another collector value, as the engine does when a collector's node or
   * capacity changes.
   *
   * @param m the member
   * @param c its new collector
   */
  public static void setCollector(Member m, Collector c) {
    m.collector(c);
  }
}
