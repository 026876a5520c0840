package dev.apportion.allocation.internal;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.List;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A null argument to an allocator or its snapshot is rejected with a {@link NullPointerException}
 * that names the argument, not a variable inside the implementation.
 */
class NullArgumentsTest {
  private static void assertNamed(String argument, Executable call) {
    NullPointerException e = assertThrows(NullPointerException.class, call);
    assertTrue(e.getMessage() != null && e.getMessage().startsWith(argument + " "),
        () -> "names '" + argument + "': " + e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(strings = {Allocators.CONSISTENT_HASHING, Allocators.RENDEZVOUS,
      Allocators.LEAST_WEIGHTED, Allocators.PER_NODE})
  void nullArgumentsAreNamed(String strategy) {
    Allocator a = Allocators.builder(strategy).build();
    a.setCollectors(List.of(Collector.of("c", "n")));
    a.setTargets(List.of(Target.of("j", "a:1")));
    assertNamed("job", () -> a.targetsFor("c", null));
    assertNamed("collector", () -> a.targetsFor(null, "j"));
    Allocation s = a.snapshot();
    assertNamed("job", () -> s.targetsFor("c", null));
    assertNamed("collector", () -> s.targetsFor(null, "j"));
    assertNamed("collector", () -> s.jobsFor(null));
    assertNamed("collector", () -> s.targetCount(null));
    assertNamed("collector", () -> s.costOf(null));
    assertNamed("target", () -> s.collectorOf(null));
  }
}
