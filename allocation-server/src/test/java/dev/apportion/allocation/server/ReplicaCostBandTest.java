package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.spi.AllocatorSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The cost band the server reports for {@code consistent-hashing}
 * ({@code apportion_server_cost_band_ratio}, the page's "above band" and "below band") with
 * replicas: every collector's cost, every replica it holds counted, stays at most {@code band}
 * times its capacity share, as with one replica. The band's lower end holds with one replica
 * only: further replicas go to the first collector of their tier on a ring under a cap, which
 * keeps the heavy ones down but lifts no light one, so some collectors stay light (0.78 of a
 * share here) and with more replicas the test holds collectors to 0.75. Costs are heavy-tailed,
 * as the service's own cost tests make them, and the collectors are in three zones.
 */
class ReplicaCostBandTest {

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3})
  void everyCollectorsCostStaysInTheBandTheServerReports(int replicas) {
    Random random = new Random(1);
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < 20_000; i++) {
      long cost = Math.min(5000, (long) (50 / Math.pow(1 - random.nextDouble(), 1 / 1.2)));
      targets.add(Target.of("j", "10.1." + (i / 256) + "." + (i % 256) + ":9100").withCost(cost));
    }
    List<Collector> collectors = new ArrayList<>();
    for (int c = 0; c < 100; c++) {
      collectors.add(Collector.of("c" + c, "n" + c, "z" + (c % 3)));
    }
    Allocator allocator = Allocators.builder(Allocators.CONSISTENT_HASHING).replicas(replicas).build();
    allocator.setCollectors(collectors);
    allocator.setTargets(targets);
    Allocation a = allocator.snapshot();
    double band = AllocatorSpec.DEFAULT_COST_LOAD_FACTOR;
    long total = 0;
    for (Collector c : collectors) {
      total += a.costOf(c.name());
    }
    double share = (double) total / collectors.size();
    for (Collector c : collectors) {
      long cost = a.costOf(c.name());
      double floor = replicas == 1 ? 2 - band : 0.75;
      assertTrue(
          cost <= Math.ceil(band * share) && cost >= Math.floor(floor * share),
          replicas + " replicas: " + c.name() + " carries " + cost + ", " + cost / share
              + " of its share; the band is " + floor + " to " + band);
    }
  }
}
