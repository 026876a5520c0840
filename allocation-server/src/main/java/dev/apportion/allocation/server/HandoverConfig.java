package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.Iterator;
import java.util.Set;

/**
 * The config file's {@code handover:} block: how long a collector that lost a target keeps being
 * served it (make-before-break, {@link Handover}). Parsed on its own from the block's node, unknown
 * keys refused like the rest of the file.
 *
 * <pre>{@code
 * handover:
 *   enabled: true            # the default; false serves exactly the placement
 *   hold: 30s                # a fixed hold after the new owner's fetch; default: computed, see below
 *   pickup: 10s              # the default: how long a collector takes to apply an answer it fetched
 *   scrapeInterval: 1m       # the default for jobs without scrape_interval in scrapeConfigs
 * }</pre>
 *
 * Without {@code hold}, the hold of a moved target is {@code pickup} plus the job's scrape interval
 * plus the new owner's own refresh interval as seen from its polls: what Prometheus 2.x needs from
 * a fetch to its first scrape (its discovery and scrape managers apply changes at most every 5 s
 * each, then the scrape waits for its offset within one interval), with one refresh of margin.
 *
 * @param enabled false to serve exactly the placement
 * @param hold the fixed hold, or null to compute it per target
 * @param pickup the collector's delay from a fetch to applying it
 * @param scrapeInterval the scrape interval of a job whose scrape config names none
 */
record HandoverConfig(boolean enabled, Duration hold, Duration pickup, Duration scrapeInterval) {

  /** Prometheus 2.x: two fixed 5 s throttles between a fetched answer and the scrape loops. */
  static final Duration DEFAULT_PICKUP = Duration.ofSeconds(10);

  /** Prometheus's own default {@code scrape_interval}. */
  static final Duration DEFAULT_SCRAPE_INTERVAL = Duration.ofMinutes(1);

  /** The defaults: on, hold computed. */
  static final HandoverConfig DEFAULT =
      new HandoverConfig(true, null, DEFAULT_PICKUP, DEFAULT_SCRAPE_INTERVAL);

  private static final Set<String> KEYS = Set.of("enabled", "hold", "pickup", "scrapeInterval");

  /**
   * The block parsed; the defaults when {@code node} is absent or null.
   *
   * @param node the {@code handover} node
   * @throws ConfigException naming the key at fault
   */
  static HandoverConfig parse(JsonNode node) throws ConfigException {
    if (node == null || node.isNull()) {
      return DEFAULT;
    }
    if (!node.isObject()) {
      throw new ConfigException("handover: must be a mapping");
    }
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!KEYS.contains(k)) {
        throw new ConfigException("handover." + k + ": unknown key (enabled, hold, pickup, scrapeInterval)");
      }
    }
    boolean enabled = true;
    JsonNode e = node.get("enabled");
    if (e != null && !e.isNull()) {
      if (!e.isBoolean()) {
        throw new ConfigException("handover.enabled: must be true or false");
      }
      enabled = e.booleanValue();
    }
    Duration hold = duration(node, "hold", null);
    Duration pickup = duration(node, "pickup", DEFAULT_PICKUP);
    Duration interval = duration(node, "scrapeInterval", DEFAULT_SCRAPE_INTERVAL);
    return new HandoverConfig(enabled, hold, pickup, interval);
  }

  private static Duration duration(JsonNode node, String key, Duration dflt) throws ConfigException {
    JsonNode v = node.get(key);
    if (v == null || v.isNull()) {
      return dflt;
    }
    if (!v.isTextual()) {
      throw new ConfigException("handover." + key + ": must be a duration such as 500ms, 15s, 2m or 1h");
    }
    return ConfigNodes.durationOrZero(v.textValue(), "handover." + key);
  }
}
