package dev.apportion.allocation.server;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Collector;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.List;

/**
 * The cost balance in {@code /metrics}, recomputed from the allocator's snapshot at each scrape:
 * each collector's cost load against its capacity share ({@code
 * apportion_server_collector_cost_share_ratio{collector}}: its cost divided by the total cost
 * times its capacity over the total capacity; 1 is exactly its share), and the band the strategy
 * keeps it in ({@code apportion_server_cost_band_ratio{bound="lower|upper"}}: for {@code
 * consistent-hashing} {@code 2 - loadFactor} and {@code loadFactor}, by default 0.85 and 1.15;
 * absent for strategies that keep no cost band). The collectors' absolute costs are the
 * allocator's own {@code allocator_cost_per_collector}. With a cost feed, also whether its last
 * read succeeded, how many targets matched a sample and the fallback cost.
 */
final class CostMetrics {
  private final Allocator allocator;
  private final MultiGauge ratios;

  CostMetrics(MeterRegistry registry, Allocator allocator, Double band, CostFeed feed) {
    this.allocator = allocator;
    this.ratios =
        MultiGauge.builder("apportion_server_collector_cost_share_ratio")
            .description(
                "The collector's cost over its capacity share of the total cost (1: exactly its share)")
            .register(registry);
    if (band != null) {
      Gauge.builder("apportion_server_cost_band_ratio", () -> 2 - band)
          .description("The cost band the strategy keeps each collector's share ratio in")
          .tag("bound", "lower")
          .register(registry);
      Gauge.builder("apportion_server_cost_band_ratio", () -> band)
          .description("The cost band the strategy keeps each collector's share ratio in")
          .tag("bound", "upper")
          .register(registry);
    }
    if (feed != null) {
      Gauge.builder("apportion_server_costs_up", feed, f -> f.isUp() ? 1 : 0)
          .description("1 when the last cost query succeeded")
          .register(registry);
      Gauge.builder("apportion_server_cost_targets_matched", feed, CostFeed::lastMatched)
          .description("Targets whose cost came from a sample, this read's or an earlier one")
          .register(registry);
      Gauge.builder("apportion_server_cost_fallback", feed, CostFeed::lastFallback)
          .description("The cost given to targets without a sample: the median of the matched")
          .register(registry);
    }
  }

  /** Recomputes the per-collector ratios from the current snapshot. Never blocks. */
  void update() {
    Allocation a = allocator.snapshot();
    double capacity = 0;
    long cost = 0;
    for (Collector c : a.collectors()) {
      capacity += c.capacity();
      cost += a.costOf(c.name());
    }
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    if (cost > 0 && capacity > 0) {
      for (Collector c : a.collectors()) {
        double share = cost * c.capacity() / capacity;
        rows.add(MultiGauge.Row.of(Tags.of("collector", c.name()), a.costOf(c.name()) / share));
      }
    }
    ratios.register(rows, true);
  }
}
