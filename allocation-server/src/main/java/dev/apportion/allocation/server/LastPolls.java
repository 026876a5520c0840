package dev.apportion.allocation.server;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * When each collector last asked for its targets ({@code /targets?collector=} or {@code
 * /jobs/{job}/targets?collector_id=}), whatever the collectors are known by: a static or Kubernetes
 * collector that never polls holds targets nobody scrapes, and the operator's page says so. Names
 * come from requests, so at most {@value #MAX_NAMES} are remembered; when full, the names that are
 * not collectors of the current snapshot are forgotten first. Thread-safe; {@link #polled} never
 * blocks (a concurrent-map write; a prune when full, bounded by the map's size).
 */
final class LastPolls {
  /** The most names remembered. */
  static final int MAX_NAMES = 10_000;

  private final Map<String, Long> last = new ConcurrentHashMap<>();
  private final LongSupplier clock;

  LastPolls(LongSupplier clock) {
    this.clock = clock;
  }

  /**
   * Records a poll by {@code collector}, now.
   *
   * @param collector the name the request gave; ignored when null or blank
   * @param snapshot the snapshot the request read: when the map is full, names not among its
   *     collectors are dropped to make room
   */
  void polled(String collector, Allocation snapshot) {
    if (collector == null || collector.isBlank()) {
      return;
    }
    long now = clock.getAsLong();
    if (last.size() >= MAX_NAMES && !last.containsKey(collector)) {
      Set<String> names = new HashSet<>();
      for (Collector c : snapshot.collectors()) {
        names.add(c.name());
      }
      if (!names.contains(collector)) {
        return;
      }
      last.keySet().removeIf(n -> !names.contains(n));
    }
    last.put(collector, now);
  }

  /**
   * When {@code collector} last polled, epoch milliseconds; 0 when it has not since this server
   * started. Never blocks.
   */
  long lastPoll(String collector) {
    Long t = last.get(collector);
    return t == null ? 0 : t;
  }

  /** Takes over {@code older}'s times (a reload keeps what was heard). */
  void inherit(LastPolls older) {
    older.last.forEach(last::putIfAbsent);
  }
}
