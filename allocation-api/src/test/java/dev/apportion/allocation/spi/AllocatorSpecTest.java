package dev.apportion.allocation.spi;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.AllocationListener;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class AllocatorSpecTest {
  private static final AllocationListener L1 = change -> { };
  private static final AllocationListener L2 = change -> { };

  private static AllocatorSpec spec(double loadFactor, double share) {
    return AllocatorSpec.builder("s").loadFactor(loadFactor).movedShareWarning(share).build();
  }

  @Test
  void defaultLoadFactor() {
    assertEquals(1.2, AllocatorSpec.DEFAULT_LOAD_FACTOR);
  }

  @Test
  void aSpecOfNoOptionHasEveryDefault() {
    AllocatorSpec s = AllocatorSpec.builder("s").build();
    assertEquals("s", s.strategy());
    assertEquals(Optional.empty(), s.fallback());
    assertFalse(s.fallbackDisabled());
    assertEquals(AllocatorSpec.DEFAULT_LOAD_FACTOR, s.loadFactor());
    assertEquals(AllocatorSpec.DEFAULT_COST_LOAD_FACTOR, s.costLoadFactor());
    assertEquals(AllocatorSpec.DEFAULT_MOVED_SHARE_WARNING, s.movedShareWarning());
    assertEquals(List.of(), s.listeners());
    assertEquals(Optional.empty(), s.partitionKey());
    assertFalse(s.partitioningDisabled());
    assertEquals(OptionalDouble.empty(), s.maxSkew());
    assertEquals(OptionalInt.empty(), s.maxTargetsPerCollector());
    assertEquals(OptionalLong.empty(), s.maxCostPerCollector());
  }

  /** A load factor given applies to costs too, even the default's value; a cost one to costs. */
  @Test
  void aLoadFactorGivenIsTheCostLoadFactorUnlessThatIsGiven() {
    assertEquals(1.4, spec(1.4, 0.5).costLoadFactor());
    assertEquals(AllocatorSpec.DEFAULT_LOAD_FACTOR,
        spec(AllocatorSpec.DEFAULT_LOAD_FACTOR, 0.5).costLoadFactor());
    AllocatorSpec both = AllocatorSpec.builder("s").loadFactor(1.4).costLoadFactor(1.3).build();
    assertEquals(1.4, both.loadFactor());
    assertEquals(1.3, both.costLoadFactor());
    AllocatorSpec costOnly = AllocatorSpec.builder("s").costLoadFactor(1.3).build();
    assertEquals(AllocatorSpec.DEFAULT_LOAD_FACTOR, costOnly.loadFactor());
    assertEquals(1.3, costOnly.costLoadFactor());
  }

  @ParameterizedTest
  @ValueSource(doubles = {1.0, 0.5, Double.NaN, Double.POSITIVE_INFINITY})
  void costLoadFactorMustBeFiniteAndAboveOne(double bad) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> AllocatorSpec.builder("s").costLoadFactor(bad).build());
    assertTrue(e.getMessage().contains("cost load factor"), e.getMessage());
  }

  @Test
  void accessors() {
    AllocatorSpec s = AllocatorSpec.builder("per-node").fallback("rendezvous").loadFactor(1.5)
        .movedShareWarning(0.25).listeners(List.of(L1, L2)).partitionKey("zone").maxSkew(2)
        .maxTargetsPerCollector(10).maxCostPerCollector(1000L).build();
    assertEquals("per-node", s.strategy());
    assertEquals(Optional.of("rendezvous"), s.fallback());
    assertFalse(s.fallbackDisabled());
    assertEquals(1.5, s.loadFactor());
    assertEquals(0.25, s.movedShareWarning());
    assertEquals(List.of(L1, L2), s.listeners());
    assertEquals(Optional.of("zone"), s.partitionKey());
    assertEquals(2.0, s.maxSkew().getAsDouble());
    assertEquals(10, s.maxTargetsPerCollector().getAsInt());
    assertEquals(1000L, s.maxCostPerCollector().getAsLong());
  }

  @Test
  void toBuilderCopiesEveryOption() {
    AllocatorSpec s = AllocatorSpec.builder("per-node").fallback("rendezvous").loadFactor(1.5)
        .costLoadFactor(1.25).movedShareWarning(0.25).listeners(List.of(L1)).partitionKey("zone")
        .maxSkew(2).maxTargetsPerCollector(10).maxCostPerCollector(1000L).build();
    AllocatorSpec copy = s.toBuilder().build();
    assertEquals(s.strategy(), copy.strategy());
    assertEquals(s.fallback(), copy.fallback());
    assertEquals(s.loadFactor(), copy.loadFactor());
    assertEquals(s.costLoadFactor(), copy.costLoadFactor());
    assertEquals(s.movedShareWarning(), copy.movedShareWarning());
    assertEquals(s.listeners(), copy.listeners());
    assertEquals(s.partitionKey(), copy.partitionKey());
    assertEquals(s.maxSkew(), copy.maxSkew());
    assertEquals(s.maxTargetsPerCollector(), copy.maxTargetsPerCollector());
    assertEquals(s.maxCostPerCollector(), copy.maxCostPerCollector());
    AllocatorSpec defaults = AllocatorSpec.builder("s").build().toBuilder().loadFactor(1.4).build();
    assertEquals(AllocatorSpec.DEFAULT_COST_LOAD_FACTOR, defaults.costLoadFactor(),
        "a copy carries the cost load factor as it was");
  }

  @Test
  void noFallbackNamed() {
    AllocatorSpec s = spec(1.1, 0.5);
    assertEquals(Optional.empty(), s.fallback());
    assertFalse(s.fallbackDisabled());
  }

  @Test
  void disabledFallback() {
    AllocatorSpec s = AllocatorSpec.builder("s").fallbackDisabled(true).build();
    assertEquals(Optional.empty(), s.fallback());
    assertTrue(s.fallbackDisabled());
  }

  @Test
  void fallbackGivenWhileDisabledIsRejected() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> AllocatorSpec.builder("s").fallback("rendezvous").fallbackDisabled(true).build());
    assertTrue(e.getMessage().contains("rendezvous"), e.getMessage());
  }

  @Test
  void nullStrategyIsRejected() {
    NullPointerException e = assertThrows(NullPointerException.class,
        () -> AllocatorSpec.builder(null));
    assertTrue(e.getMessage().contains("strategy"), e.getMessage());
  }

  @Test
  void nullListenersAreRejectedByName() {
    NullPointerException e = assertThrows(NullPointerException.class,
        () -> AllocatorSpec.builder("s").listeners(null));
    assertTrue(e.getMessage().contains("listeners"), e.getMessage());
    AllocatorSpec.Builder b = AllocatorSpec.builder("s").listeners(Arrays.asList(L1, null));
    e = assertThrows(NullPointerException.class, b::build);
    assertTrue(e.getMessage().contains("listeners"), e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(doubles = {1.0, 0.999, 0.0, -0.0, -1.0, Double.NaN, Double.POSITIVE_INFINITY,
      Double.NEGATIVE_INFINITY, Double.MIN_VALUE})
  void loadFactorMustBeFiniteAndAboveOne(double bad) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> spec(bad, 0.5));
    assertTrue(e.getMessage().contains("load factor"), e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(doubles = {1.0000000000000002, 1.1, 2.0, 1000.0, Double.MAX_VALUE})
  void loadFactorAboveOneIsAccepted(double good) {
    assertEquals(good, assertDoesNotThrow(() -> spec(good, 0.5)).loadFactor());
  }

  @ParameterizedTest
  @ValueSource(doubles = {-0.01, -1.0, 1.01, 2.0, Double.NaN, Double.POSITIVE_INFINITY,
      Double.NEGATIVE_INFINITY})
  void movedShareWarningMustBeBetweenZeroAndOne(double bad) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> spec(1.1, bad));
    assertTrue(e.getMessage().contains("moved share"), e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(doubles = {0.0, Double.MIN_VALUE, 0.5, 0.9999, 1.0})
  void movedShareWarningFromZeroToOneIsAccepted(double good) {
    assertEquals(good, assertDoesNotThrow(() -> spec(1.1, good)).movedShareWarning());
  }

  @Test
  void listenersAreCopiedInOrderAndUnmodifiable() {
    List<AllocationListener> in = new ArrayList<>(List.of(L2, L1, L2));
    AllocatorSpec s = AllocatorSpec.builder("s").listeners(in).build();
    in.clear();
    in.add(L1);
    assertEquals(List.of(L2, L1, L2), s.listeners());
    assertThrows(UnsupportedOperationException.class, () -> s.listeners().add(L1));
    assertThrows(UnsupportedOperationException.class, () -> s.listeners().remove(0));
    assertEquals(3, s.listeners().size());
  }

  @Test
  void partitionOptionsAreValidated() {
    assertThrows(IllegalArgumentException.class,
        () -> AllocatorSpec.builder("s").partitionKey("zone").partitioningDisabled(true).build());
    assertThrows(IllegalArgumentException.class,
        () -> AllocatorSpec.builder("s").partitionKey(" ").build());
    assertThrows(IllegalArgumentException.class,
        () -> AllocatorSpec.builder("s").partitionKey("zone").maxSkew(0.5).build());
    assertThrows(IllegalArgumentException.class, () -> AllocatorSpec.builder("s")
        .partitionKey("zone").maxSkew(Double.POSITIVE_INFINITY).build());
    AllocatorSpec s = AllocatorSpec.builder("s").partitionKey("zone").maxSkew(2).build();
    assertEquals(2.0, s.maxSkew().getAsDouble());
    assertEquals("zone", s.partitionKey().orElseThrow());
  }

  @Test
  void limitsBelowZeroAreRejected() {
    assertThrows(IllegalArgumentException.class,
        () -> AllocatorSpec.builder("s").maxTargetsPerCollector(-1).build());
    assertThrows(IllegalArgumentException.class,
        () -> AllocatorSpec.builder("s").maxCostPerCollector(-1L).build());
  }

  /**
   * The positional constructors, kept for compatibility, build what the builder builds; those
   * without a cost load factor take the default one only for the default load factor.
   */
  @Test
  @SuppressWarnings("deprecation")
  void theDeprecatedConstructorsBuildWhatTheBuilderBuilds() {
    AllocatorSpec six = new AllocatorSpec("s", "f", false, 1.4, 0.25, List.of(L1));
    assertEquals(Optional.of("f"), six.fallback());
    assertEquals(1.4, six.loadFactor());
    assertEquals(1.4, six.costLoadFactor());
    assertEquals(0.25, six.movedShareWarning());
    assertEquals(List.of(L1), six.listeners());
    assertEquals(AllocatorSpec.DEFAULT_COST_LOAD_FACTOR,
        new AllocatorSpec("s", null, false, 1.2, 0.5, List.of()).costLoadFactor());
    AllocatorSpec nine = new AllocatorSpec("s", null, false, 1.2, 0.5, List.of(), "zone", false,
        2.0);
    assertEquals(Optional.of("zone"), nine.partitionKey());
    assertEquals(2.0, nine.maxSkew().getAsDouble());
    AllocatorSpec eleven = new AllocatorSpec("s", null, false, 1.2, 0.5, List.of(), null, true,
        Double.NaN, 10, 100L);
    assertTrue(eleven.partitioningDisabled());
    assertEquals(10, eleven.maxTargetsPerCollector().getAsInt());
    assertEquals(100L, eleven.maxCostPerCollector().getAsLong());
    AllocatorSpec twelve = new AllocatorSpec("s", null, false, 1.2, 0.5, List.of(), null, false,
        Double.NaN, 0, 0L, 1.3);
    assertEquals(1.3, twelve.costLoadFactor());
    assertThrows(IllegalArgumentException.class,
        () -> new AllocatorSpec("s", "f", true, 1.1, 0.5, List.of()));
    assertThrows(NullPointerException.class,
        () -> new AllocatorSpec(null, null, false, 1.1, 0.5, List.of()));
    assertThrows(NullPointerException.class,
        () -> new AllocatorSpec("s", null, false, 1.1, 0.5, null));
  }
}
