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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class AllocatorSpecTest {
  private static final AllocationListener L1 = change -> { };
  private static final AllocationListener L2 = change -> { };

  private static AllocatorSpec spec(double loadFactor, double share) {
    return new AllocatorSpec("s", null, false, loadFactor, share, List.of());
  }

  @Test
  void defaultLoadFactor() {
    assertEquals(1.2, AllocatorSpec.DEFAULT_LOAD_FACTOR);
  }

  @Test
  void constructorsWithoutACostLoadFactorTakeTheDefaultOnlyForTheDefaultLoadFactor() {
    assertEquals(AllocatorSpec.DEFAULT_COST_LOAD_FACTOR,
        spec(AllocatorSpec.DEFAULT_LOAD_FACTOR, 0.5).costLoadFactor());
    assertEquals(1.4, spec(1.4, 0.5).costLoadFactor());
  }

  @ParameterizedTest
  @ValueSource(doubles = {1.0, 0.5, Double.NaN, Double.POSITIVE_INFINITY})
  void costLoadFactorMustBeFiniteAndAboveOne(double bad) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new AllocatorSpec("s", null, false, 1.2, 0.5, List.of(), null, false, Double.NaN, 0,
            0L, bad));
    assertTrue(e.getMessage().contains("cost load factor"), e.getMessage());
  }

  @Test
  void accessors() {
    AllocatorSpec s = new AllocatorSpec("per-node", "rendezvous", false, 1.5, 0.25, List.of(L1, L2));
    assertEquals("per-node", s.strategy());
    assertEquals(Optional.of("rendezvous"), s.fallback());
    assertFalse(s.fallbackDisabled());
    assertEquals(1.5, s.loadFactor());
    assertEquals(0.25, s.movedShareWarning());
    assertEquals(List.of(L1, L2), s.listeners());
  }

  @Test
  void noFallbackNamed() {
    AllocatorSpec s = spec(1.1, 0.5);
    assertEquals(Optional.empty(), s.fallback());
    assertFalse(s.fallbackDisabled());
  }

  @Test
  void disabledFallback() {
    AllocatorSpec s = new AllocatorSpec("s", null, true, 1.1, 0.5, List.of());
    assertEquals(Optional.empty(), s.fallback());
    assertTrue(s.fallbackDisabled());
  }

  @Test
  void fallbackGivenWhileDisabledIsRejected() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new AllocatorSpec("s", "rendezvous", true, 1.1, 0.5, List.of()));
    assertTrue(e.getMessage().contains("rendezvous"), e.getMessage());
  }

  @Test
  void nullStrategyIsRejected() {
    NullPointerException e = assertThrows(NullPointerException.class,
        () -> new AllocatorSpec(null, null, false, 1.1, 0.5, List.of()));
    assertTrue(e.getMessage().contains("strategy"), e.getMessage());
  }

  @Test
  void nullListenersAreRejected() {
    assertThrows(NullPointerException.class,
        () -> new AllocatorSpec("s", null, false, 1.1, 0.5, null));
    assertThrows(NullPointerException.class,
        () -> new AllocatorSpec("s", null, false, 1.1, 0.5, Arrays.asList(L1, null)));
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
    AllocatorSpec s = new AllocatorSpec("s", null, false, 1.1, 0.5, in);
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
        () -> new AllocatorSpec("s", null, false, 1.1, 0.5, List.of(), "zone", true, Double.NaN));
    assertThrows(IllegalArgumentException.class,
        () -> new AllocatorSpec("s", null, false, 1.1, 0.5, List.of(), " ", false, Double.NaN));
    assertThrows(IllegalArgumentException.class,
        () -> new AllocatorSpec("s", null, false, 1.1, 0.5, List.of(), "zone", false, 0.5));
    assertThrows(IllegalArgumentException.class, () -> new AllocatorSpec("s", null, false, 1.1,
        0.5, List.of(), "zone", false, Double.POSITIVE_INFINITY));
    AllocatorSpec s = new AllocatorSpec("s", null, false, 1.1, 0.5, List.of(), "zone", false, 2);
    assertEquals(2.0, s.maxSkew().getAsDouble());
    assertEquals("zone", s.partitionKey().orElseThrow());
  }
}
