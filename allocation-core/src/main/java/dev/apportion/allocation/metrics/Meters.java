package dev.apportion.allocation.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.List;

/**
 * The one way both metrics classes build their meters: every name under one prefix, registered in
 * one registry, and each meter the instance keeps for its lifetime remembered so that
 * {@link #removeKept()} takes them all out again. Not thread-safe: its owner serializes the calls.
 */
final class Meters {
  private final MeterRegistry registry;
  private final String prefix;
  private final List<Meter> kept = new ArrayList<>();

  Meters(MeterRegistry registry, String prefix) {
    this.registry = registry;
    this.prefix = prefix;
  }

  /** A gauge's value, held strongly here because Micrometer's gauges hold it weakly. */
  static class Value {
    volatile double value;
  }

  /** Registers a gauge of {@code value} named {@code prefix + suffix}; not kept. */
  Gauge gauge(String suffix, Value value, String description, Tags tags) {
    return Gauge.builder(prefix + suffix, value, v -> v.value)
        .description(description)
        .tags(tags)
        .register(registry);
  }

  /** Registers a counter named {@code prefix + suffix}; not kept. */
  Counter counter(String suffix, String description, Tags tags) {
    return Counter.builder(prefix + suffix).description(description).tags(tags)
        .register(registry);
  }

  /** Registers a timer named {@code prefix + suffix}; not kept. */
  Timer timer(String suffix, String description, Tags tags) {
    return Timer.builder(prefix + suffix).description(description).tags(tags)
        .register(registry);
  }

  /** Remembers {@code meter} for {@link #removeKept()}, and returns it. */
  <M extends Meter> M keep(M meter) {
    kept.add(meter);
    return meter;
  }

  /** The id of a meter already registered under one of the suffixes and these tags, or null. */
  String clash(Tags tags, String... suffixes) {
    for (String suffix : suffixes) {
      Meter clash = registry.find(prefix + suffix).tags(tags).meter();
      if (clash != null) {
        return clash.getId().toString();
      }
    }
    return null;
  }

  /** Removes one meter from the registry. */
  void remove(Meter meter) {
    registry.remove(meter);
  }

  /** Removes every kept meter from the registry and forgets them. */
  void removeKept() {
    for (Meter m : kept) {
      registry.remove(m);
    }
    kept.clear();
  }
}
