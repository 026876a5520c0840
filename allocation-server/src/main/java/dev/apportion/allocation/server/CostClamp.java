package dev.apportion.allocation.server;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps queried costs from ever being the reason a target goes unscraped under {@code
 * maxCostPerCollector}. The engine lets a collector of capacity {@code w} hold {@code floor(limit
 * x w)} cost and leaves a target that fits on no collector unassigned; costs so large that their
 * total (plus one largest target per collector, the room the engine's fill may leave unused) passes
 * the collectors' total limit are scaled down together by one factor, so that every target fits and
 * their proportions (the balance) stay. Each scaled cost is rounded down. Costs that fit are given
 * as they are. A scaling is logged at WARN once per episode, its end at INFO.
 *
 * <p>Thread-safe (called by one feed at a time); {@link #apply} allocates only when it scales.
 */
final class CostClamp {
  private static final Logger LOG = LoggerFactory.getLogger(CostClamp.class);

  private final long maxCostPerCollector;
  private final Supplier<? extends Collection<Collector>> collectors;
  private boolean scaling;
  private int episodes;

  /**
   * @param maxCostPerCollector the strategy's {@code maxCostPerCollector}
   * @param collectors the collectors now known (their capacities)
   */
  CostClamp(long maxCostPerCollector, Supplier<? extends Collection<Collector>> collectors) {
    this.maxCostPerCollector = maxCostPerCollector;
    this.collectors = collectors;
  }

  /**
   * The targets, with their costs scaled down if they would not fit.
   *
   * @param targets the targets with their queried costs
   * @return {@code targets} itself, or a new list with smaller costs
   */
  synchronized List<Target> apply(List<Target> targets) {
    Collection<Collector> cs = collectors.get();
    double limit = 0;
    for (Collector c : cs) {
      limit += Math.floor(maxCostPerCollector * c.capacity());
    }
    double total = 0;
    long largest = 0;
    for (Target t : targets) {
      total += t.cost();
      largest = Math.max(largest, t.cost());
    }
    double needed = total + cs.size() * (double) largest;
    if (cs.isEmpty() || needed <= limit) {
      if (scaling) {
        scaling = false;
        LOG.info("target costs fit under maxCostPerCollector again; given as queried");
      }
      return targets;
    }
    double factor = limit / needed;
    if (!scaling) {
      scaling = true;
      episodes++;
      LOG.warn(
          "target costs (total {}, largest {}) would leave targets unscraped under"
              + " maxCostPerCollector {} with {} collectors: every cost scaled by {} so that every"
              + " target fits; logged again only after costs fit",
          (long) total,
          largest,
          maxCostPerCollector,
          cs.size(),
          String.format(java.util.Locale.ROOT, "%.3g", factor));
    }
    List<Target> out = new ArrayList<>(targets.size());
    for (Target t : targets) {
      out.add(t.withCost((long) Math.floor(t.cost() * factor)));
    }
    return out;
  }

  /** How many episodes of scaling began (each logged once). */
  synchronized int episodes() {
    return episodes;
  }
}
