package dev.apportion.allocation.ownership;

import dev.apportion.allocation.Target;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Make-before-break for local ownership: one replica's scrape set while its member list changes.
 * A target the replica gains is scraped at once; a target it loses is still scraped for the
 * {@linkplain #of handover window}, so the replica that gained it has time to start before this
 * one stops. No coordination: each replica decides from its own clock, so a move costs a bounded
 * overlap (the window, and whatever delay the replicas' member lists have between them), never a
 * gap.
 *
 * <pre>{@code
 * OwnershipHandover mine = OwnershipHandover.of(view, Duration.ofSeconds(30));
 * // at every member-list change:
 * mine.update(peersFromDns(), discoveredTargets);
 * // at every reconcile of the scrape loops:
 * reconcile(mine.scraped(discoveredTargets));
 * }</pre>
 *
 * <p>Choose a window that covers the slowest peer's pick-up: how late its member list can be plus
 * how long it takes to start a scrape (for Prometheus-like scrapers, about one scrape interval).
 * Holding a target the window long costs at most the window's worth of doubled scrapes of it.
 *
 * <p>Thread-safe: every method is synchronized on this instance and never blocks otherwise.
 *
 * @since 0.1.0
 */
public final class OwnershipHandover {
  private final Duration window;
  private final LongSupplier nanoTime;
  private Ownership view;
  /** Lost targets, with when they are released. */
  private final Map<Target, Long> held = new HashMap<>();

  private OwnershipHandover(Ownership view, Duration window, LongSupplier nanoTime) {
    this.view = Objects.requireNonNull(view, "view");
    this.window = Objects.requireNonNull(window, "window");
    if (window.isNegative()) {
      throw new IllegalArgumentException("window must not be negative");
    }
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
  }

  /**
   * A handover starting from {@code view}, holding lost targets for {@code window}.
   *
   * @param view the replica's current view; not null
   * @param window how long a lost target is still scraped; zero turns the handover off
   * @return a new handover; allocates only itself
   * @throws IllegalArgumentException if {@code window} is negative
   */
  public static OwnershipHandover of(Ownership view, Duration window) {
    return new OwnershipHandover(view, window, System::nanoTime);
  }

  static OwnershipHandover of(Ownership view, Duration window, LongSupplier nanoTime) {
    return new OwnershipHandover(view, window, nanoTime);
  }

  /**
   * Applies a new member list: what is gained is scraped at once, what is lost is held for the
   * window. Costs what {@link Ownership#update(Collection, Collection)} costs.
   *
   * @param members the new member list
   * @param targets every discovered target
   * @return the change, as {@link Ownership#update} reports it (the placement's, without holds)
   */
  public synchronized OwnershipChange update(Collection<String> members, Collection<Target> targets) {
    return apply(view.update(members, targets));
  }

  /**
   * Applies a new weighted member list, as {@link #update(Collection, Collection)}.
   *
   * @param weights the new members and their weights
   * @param targets every discovered target
   * @return the change, as {@link Ownership#update(Map, Collection)} reports it
   */
  public synchronized OwnershipChange update(Map<String, Double> weights, Collection<Target> targets) {
    return apply(view.update(weights, targets));
  }

  private OwnershipChange apply(OwnershipChange change) {
    long release = nanoTime.getAsLong() + window.toNanos();
    if (!window.isZero()) {
      for (Target t : change.lost()) {
        held.put(t, release);
      }
    }
    for (Target t : change.gained()) {
      held.remove(t);
    }
    view = change.after();
    return change;
  }

  /**
   * The targets this replica scrapes now, in the order given: those it owns and those it lost
   * less than the window ago. One ownership test per target.
   *
   * @param targets every discovered target
   * @return a new list
   */
  public synchronized List<Target> scraped(Collection<Target> targets) {
    expire();
    List<Target> out = new ArrayList<>();
    for (Target t : targets) {
      if (held.containsKey(t) || view.owns(t)) {
        out.add(t);
      }
    }
    return out;
  }

  /**
   * Whether this replica scrapes {@code target} now (owns it, or lost it less than the window ago).
   *
   * @param target the target
   * @return true to scrape it
   */
  public synchronized boolean scrapes(Target target) {
    expire();
    return held.containsKey(target) || view.owns(target);
  }

  /**
   * How many lost targets are still held.
   *
   * @return the count
   */
  public synchronized int heldCount() {
    expire();
    return held.size();
  }

  /**
   * The current view (the placement, without holds).
   *
   * @return the view
   */
  public synchronized Ownership view() {
    return view;
  }

  private void expire() {
    if (held.isEmpty()) {
      return;
    }
    long now = nanoTime.getAsLong();
    held.values().removeIf(release -> now - release >= 0);
  }
}
