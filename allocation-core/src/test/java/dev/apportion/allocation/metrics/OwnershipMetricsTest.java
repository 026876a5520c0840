package dev.apportion.allocation.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.ownership.Ownership;
import dev.apportion.allocation.ownership.OwnershipChange;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The ownership meters: state, members, owned targets, fingerprint, and what changes moved. */
class OwnershipMetricsTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private static List<Target> targets(int n) {
    List<Target> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(Target.of("job", "10.0.0." + i + ":80"));
    }
    return out;
  }

  private double state(String s) {
    return registry.get("ownership.state").tag("state", s).gauge().value();
  }

  private double gauge(String name) {
    return registry.get(name).gauge().value();
  }

  @Test
  void theGaugesFollowTheView() {
    OwnershipMetrics metrics = OwnershipMetrics.of(registry);
    List<Target> targets = targets(200);
    Ownership alone = Ownership.of("a", List.of("a"));
    metrics.record(alone, alone.owned(targets).size());
    assertEquals(1, state("ALONE"));
    assertEquals(0, state("SHARED"));
    assertEquals(1, gauge("ownership.members"));
    assertEquals(200, gauge("ownership.targets.owned"));

    OwnershipChange change = alone.update(List.of("a", "b", "c"), targets);
    Ownership shared = change.after();
    metrics.record(change, shared.owned(targets).size());
    assertEquals(1, state("SHARED"));
    assertEquals(0, state("ALONE"));
    assertEquals(3, gauge("ownership.members"));
    assertEquals(shared.owned(targets).size(), gauge("ownership.targets.owned"));
    assertEquals(change.lost().size(), registry.get("ownership.targets.lost").counter().count());
    assertEquals((double) (shared.fingerprint() >>> 12), gauge("ownership.fingerprint"));

    Ownership partitioned = Ownership.of("a", List.of("b", "c"));
    metrics.record(partitioned, partitioned.owned(targets).size());
    assertEquals(1, state("FAIL_SAFE"));
    assertEquals(
        1, registry.find("ownership.state").gauges().stream().mapToDouble(g -> g.value()).sum(),
        "exactly one state is 1");
  }

  @Test
  void twoReplicasThatAgreeShowTheSameFingerprintAndThoseThatDoNotDiffer() {
    SimpleMeterRegistry other = new SimpleMeterRegistry();
    OwnershipMetrics a = OwnershipMetrics.of(registry);
    OwnershipMetrics b = OwnershipMetrics.of(other);
    a.record(Ownership.of("a", List.of("a", "b")), 0);
    b.record(Ownership.of("b", List.of("a", "b")), 0);
    assertEquals(gauge("ownership.fingerprint"),
        other.get("ownership.fingerprint").gauge().value());
    b.record(Ownership.of("b", List.of("a", "b", "c")), 0);
    assertNotEquals(gauge("ownership.fingerprint"),
        other.get("ownership.fingerprint").gauge().value());
  }

  @Test
  void aClashNeverThrowsAndCloseRemovesTheMeters() {
    OwnershipMetrics first = OwnershipMetrics.of(registry);
    first.record(Ownership.of("a", List.of("a")), 5);
    OwnershipMetrics second = OwnershipMetrics.of(registry);
    second.record(Ownership.of("b", List.of("b")), 7);
    assertEquals(5, gauge("ownership.targets.owned"), "the first replica's gauge is untouched");
    OwnershipMetrics tagged = OwnershipMetrics.builder(registry).tags(Tags.of("replica", "b"))
        .build();
    tagged.record(Ownership.of("b", List.of("b")), 7);
    assertEquals(7, registry.get("ownership.targets.owned").tag("replica", "b").gauge().value());
    first.close();
    tagged.close();
    assertNull(registry.find("ownership.targets.owned").gauge());
  }

  @Test
  void badArgumentsAreRejected() {
    OwnershipMetrics metrics = OwnershipMetrics.of(registry);
    assertThrows(NullPointerException.class, () -> metrics.record((Ownership) null, 0));
    assertThrows(IllegalArgumentException.class,
        () -> metrics.record(Ownership.of("a", List.of("a")), -1));
    assertThrows(IllegalArgumentException.class,
        () -> OwnershipMetrics.builder(registry).tags(Tags.of("state", "x")));
    assertThrows(IllegalArgumentException.class,
        () -> OwnershipMetrics.builder(registry).prefix(".x"));
  }
}
