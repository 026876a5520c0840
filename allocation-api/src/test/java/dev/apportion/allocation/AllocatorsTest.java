package dev.apportion.allocation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.apportion.allocation.spi.AllocatorSpec;
import java.io.IOException;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The {@link Allocators} factory, against the test-only providers {@code test-fixed} (uses a
 * fallback) and {@code test-plain} (does not) registered in this module's test resources.
 */
class AllocatorsTest {
  private static final String FIXED = FixedStrategyProvider.NAME;
  private static final String PLAIN = PlainStrategyProvider.NAME;

  private static AllocatorSpec specOf(Allocators.Builder builder) {
    return assertInstanceOf(RecordingAllocator.class, builder.build()).spec();
  }

  private static void assertListsKnownNames(IllegalArgumentException e) {
    assertTrue(e.getMessage().contains(FIXED), e.getMessage());
    assertTrue(e.getMessage().contains(PLAIN), e.getMessage());
  }

  /** Runs {@code body} with a context class loader that sees only {@code serviceFiles}. */
  private static <T> T withServiceFiles(List<URL> serviceFiles, Supplier<T> body) {
    Thread thread = Thread.currentThread();
    ClassLoader previous = thread.getContextClassLoader();
    thread.setContextClassLoader(
        new ServiceFileClassLoader(AllocatorsTest.class.getClassLoader(), serviceFiles));
    try {
      return body.get();
    } finally {
      thread.setContextClassLoader(previous);
    }
  }

  // ---- finding strategies -------------------------------------------------------------------

  @Test
  void defaultStrategyName() {
    assertEquals("consistent-hashing", Allocators.DEFAULT_STRATEGY);
  }

  @Test
  void strategiesListsTheProvidersOnTheClassPath() {
    assertEquals(List.of(FIXED, PLAIN), List.copyOf(Allocators.strategies()));
  }

  @Test
  void strategiesReturnsANewSetEachCall() {
    SortedSet<String> first = Allocators.strategies();
    first.clear();
    first.add("garbage");
    assertEquals(Set.of(FIXED, PLAIN), Allocators.strategies());
    assertNotSame(Allocators.strategies(), Allocators.strategies());
  }

  @Test
  void anotherContextClassLoaderSeesItsOwnProvidersOnEachCall() {
    // The class's own loader first, so that its providers are kept before the others are asked.
    assertEquals(Set.of(FIXED, PLAIN), Allocators.strategies());
    assertEquals(Set.of(), withServiceFiles(List.of(), Allocators::strategies));
    assertEquals(Set.of(FIXED, PLAIN), Allocators.strategies());
    URL plainOnly = AllocatorsTest.class.getClassLoader()
        .getResource("dev/apportion/allocation/plain-provider.services");
    assertNotNull(plainOnly);
    assertEquals(Set.of(PLAIN), withServiceFiles(List.of(plainOnly), Allocators::strategies));
    assertEquals(Set.of(), withServiceFiles(List.of(), Allocators::strategies));
    assertEquals(Set.of(FIXED, PLAIN), Allocators.strategies());
  }

  @Test
  void theOwnClassLoadersProvidersAreLookedUpOnce() {
    assumeTrue(Thread.currentThread().getContextClassLoader()
        == Allocators.class.getClassLoader(), "the context class loader is Allocators' own");
    Allocators.builder(FIXED);
    int made = FixedStrategyProvider.INSTANCES.get();
    for (int i = 0; i < 3; i++) {
      Allocators.builder(FIXED).build();
      Allocators.strategies();
    }
    assertEquals(made, FixedStrategyProvider.INSTANCES.get(), "no provider made again");
    // Another context class loader's are made on each call.
    withServiceFiles(Collections.list(serviceFiles()), Allocators::strategies);
    assertEquals(made + 1, FixedStrategyProvider.INSTANCES.get());
  }

  @Test
  void aNullContextClassLoaderMeansTheSystemClassLoader() {
    Thread thread = Thread.currentThread();
    ClassLoader previous = thread.getContextClassLoader();
    thread.setContextClassLoader(null);
    try {
      // The system class loader sees the test providers too (surefire's class path).
      assertEquals(Set.of(FIXED, PLAIN), Allocators.strategies());
    } finally {
      thread.setContextClassLoader(previous);
    }
  }

  private static java.util.Enumeration<URL> serviceFiles() {
    try {
      return AllocatorsTest.class.getClassLoader()
          .getResources(ServiceFileClassLoader.SERVICE_FILE);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void keptProvidersStillBuildIndependentAllocators() {
    Allocator first = Allocators.builder(FIXED).build();
    Allocator second = Allocators.builder(FIXED).build();
    assertNotSame(first, second);
    assertEquals(FIXED, second.strategy());
  }

  @Test
  void builderForEachProvider() {
    assertEquals(FIXED, Allocators.builder(FIXED).build().strategy());
    assertEquals(PLAIN, Allocators.builder(PLAIN).build().strategy());
  }

  @Test
  void nullStrategyIsRejected() {
    NullPointerException e =
        assertThrows(NullPointerException.class, () -> Allocators.builder(null));
    assertTrue(e.getMessage().contains("strategy"), e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(strings = {"nope", "", "TEST-FIXED", " test-fixed", "consistent-hashing"})
  void unknownStrategyIsRejectedListingTheKnownNames(String unknown) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Allocators.builder(unknown));
    assertTrue(e.getMessage().contains("'" + unknown + "'"), e.getMessage());
    assertListsKnownNames(e);
  }

  @Test
  void withNoProviderTheMessageHintsAtAllocationCore() {
    assertEquals(Set.of(), withServiceFiles(List.of(), Allocators::strategies));
    IllegalArgumentException e = withServiceFiles(List.of(),
        () -> assertThrows(IllegalArgumentException.class, () -> Allocators.builder("nope")));
    assertTrue(e.getMessage().contains("'nope'"), e.getMessage());
    assertTrue(e.getMessage().contains("known strategies"), e.getMessage());
    assertTrue(e.getMessage().contains("allocation-core"), e.getMessage());
    assertFalse(e.getMessage().contains(FIXED), e.getMessage());
  }

  @Test
  void twoProvidersWithOneNameAreRejected() throws IOException {
    ClassLoader loader = AllocatorsTest.class.getClassLoader();
    List<URL> files = new ArrayList<>(
        Collections.list(loader.getResources(ServiceFileClassLoader.SERVICE_FILE)));
    URL duplicate = loader.getResource("dev/apportion/allocation/duplicate-provider.services");
    assertNotNull(duplicate);
    files.add(duplicate);
    IllegalStateException e = withServiceFiles(files,
        () -> assertThrows(IllegalStateException.class, Allocators::strategies));
    assertTrue(e.getMessage().contains(FIXED), e.getMessage());
    assertTrue(e.getMessage().contains(FixedStrategyProvider.class.getName()), e.getMessage());
    assertTrue(e.getMessage().contains(DuplicateFixedStrategyProvider.class.getName()),
        e.getMessage());
  }

  // ---- the spec handed to the provider ------------------------------------------------------

  @Test
  void defaults() {
    AllocatorSpec spec = specOf(Allocators.builder(FIXED));
    assertEquals(FIXED, spec.strategy());
    assertEquals(Optional.empty(), spec.fallback());
    assertFalse(spec.fallbackDisabled());
    assertEquals(AllocatorSpec.DEFAULT_LOAD_FACTOR, spec.loadFactor());
    assertEquals(0.5, spec.movedShareWarning());
    assertEquals(List.of(), spec.listeners());
  }

  @Test
  void theCostLoadFactorDefaultsTo115AndFollowsAGivenLoadFactor() {
    assertEquals(1.15, AllocatorSpec.DEFAULT_COST_LOAD_FACTOR);
    AllocatorSpec byDefault = specOf(Allocators.builder(FIXED));
    assertEquals(AllocatorSpec.DEFAULT_LOAD_FACTOR, byDefault.loadFactor());
    assertEquals(AllocatorSpec.DEFAULT_COST_LOAD_FACTOR, byDefault.costLoadFactor());
    AllocatorSpec given = specOf(Allocators.builder(FIXED).loadFactor(1.3));
    assertEquals(1.3, given.loadFactor());
    assertEquals(1.3, given.costLoadFactor());
    // Given explicitly, even the count default applies to costs too.
    AllocatorSpec explicit = specOf(Allocators.builder(FIXED).loadFactor(1.2));
    assertEquals(1.2, explicit.costLoadFactor());
  }

  @Test
  void buildReturnsADistinctAllocatorEachTime() {
    Allocators.Builder builder = Allocators.builder(FIXED).loadFactor(1.5);
    Allocator first = builder.build();
    Allocator second = builder.build();
    assertNotSame(first, second);
    AllocatorSpec a = assertInstanceOf(RecordingAllocator.class, first).spec();
    AllocatorSpec b = assertInstanceOf(RecordingAllocator.class, second).spec();
    assertEquals(1.5, a.loadFactor());
    assertEquals(1.5, b.loadFactor());
  }

  @Test
  void buildersAreIndependent() {
    Allocators.Builder one = Allocators.builder(FIXED).loadFactor(3.0);
    Allocators.Builder two = Allocators.builder(FIXED);
    assertEquals(3.0, specOf(one).loadFactor());
    assertEquals(AllocatorSpec.DEFAULT_LOAD_FACTOR, specOf(two).loadFactor());
  }

  // ---- fallback -----------------------------------------------------------------------------

  @Test
  void knownFallbackIsPassedOn() {
    AllocatorSpec spec = specOf(Allocators.builder(FIXED).fallback(PLAIN));
    assertEquals(Optional.of(PLAIN), spec.fallback());
    assertFalse(spec.fallbackDisabled());
  }

  @Test
  void unknownFallbackIsRejectedListingTheKnownNames() {
    Allocators.Builder builder = Allocators.builder(FIXED);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> builder.fallback("x"));
    assertTrue(e.getMessage().contains("'x'"), e.getMessage());
    assertTrue(e.getMessage().contains("fallback"), e.getMessage());
    assertListsKnownNames(e);
  }

  @Test
  void ownNameAsFallbackIsRejected() {
    Allocators.Builder builder = Allocators.builder(FIXED);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> builder.fallback(FIXED));
    assertTrue(e.getMessage().contains(FIXED), e.getMessage());
    assertTrue(e.getMessage().contains("own fallback"), e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(strings = {"x", FixedStrategyProvider.NAME, PlainStrategyProvider.NAME})
  void fallbackForAStrategyWithoutFallbackIsRejected(String fallback) {
    Allocators.Builder builder = Allocators.builder(PLAIN);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> builder.fallback(fallback));
    assertTrue(e.getMessage().contains(PLAIN), e.getMessage());
    assertTrue(e.getMessage().contains("uses no fallback"), e.getMessage());
  }

  @Test
  void noFallbackForAStrategyWithoutFallbackIsRejected() {
    Allocators.Builder builder = Allocators.builder(PLAIN);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, builder::noFallback);
    assertTrue(e.getMessage().contains("uses no fallback"), e.getMessage());
    // "" means noFallback(), so it is rejected the same way
    assertThrows(IllegalArgumentException.class, () -> builder.fallback(""));
  }

  @Test
  void nullFallbackIsRejected() {
    Allocators.Builder builder = Allocators.builder(FIXED);
    NullPointerException e =
        assertThrows(NullPointerException.class, () -> builder.fallback(null));
    assertTrue(e.getMessage().contains("fallback"), e.getMessage());
  }

  @Test
  void emptyFallbackIsNoFallback() {
    AllocatorSpec empty = specOf(Allocators.builder(FIXED).fallback(""));
    AllocatorSpec none = specOf(Allocators.builder(FIXED).noFallback());
    assertTrue(empty.fallbackDisabled());
    assertEquals(Optional.empty(), empty.fallback());
    assertEquals(none.fallbackDisabled(), empty.fallbackDisabled());
    assertEquals(none.fallback(), empty.fallback());
  }

  @Test
  void lastFallbackCallWins() {
    AllocatorSpec disabledLast = specOf(Allocators.builder(FIXED).fallback(PLAIN).noFallback());
    assertTrue(disabledLast.fallbackDisabled());
    assertEquals(Optional.empty(), disabledLast.fallback());

    AllocatorSpec namedLast = specOf(Allocators.builder(FIXED).noFallback().fallback(PLAIN));
    assertFalse(namedLast.fallbackDisabled());
    assertEquals(Optional.of(PLAIN), namedLast.fallback());

    AllocatorSpec emptyLast = specOf(Allocators.builder(FIXED).fallback(PLAIN).fallback(""));
    assertTrue(emptyLast.fallbackDisabled());
    assertEquals(Optional.empty(), emptyLast.fallback());
  }

  @Test
  void rejectedFallbackLeavesTheBuilderAsItWas() {
    Allocators.Builder builder = Allocators.builder(FIXED).fallback(PLAIN);
    assertThrows(IllegalArgumentException.class, () -> builder.fallback("x"));
    assertThrows(IllegalArgumentException.class, () -> builder.fallback(FIXED));
    assertEquals(Optional.of(PLAIN), specOf(builder).fallback());
  }

  // ---- numbers ------------------------------------------------------------------------------

  @ParameterizedTest
  @ValueSource(doubles = {1.0, 0.5, 0.0, -2.0, Double.NaN, Double.POSITIVE_INFINITY,
      Double.NEGATIVE_INFINITY})
  void badLoadFactorIsRejected(double bad) {
    Allocators.Builder builder = Allocators.builder(FIXED).loadFactor(2.0);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> builder.loadFactor(bad));
    assertTrue(e.getMessage().contains("load factor"), e.getMessage());
    assertEquals(2.0, specOf(builder).loadFactor(), "a rejected value changes nothing");
  }

  @Test
  void loadFactorIsPassedOn() {
    assertEquals(1.25, specOf(Allocators.builder(FIXED).loadFactor(1.25)).loadFactor());
    assertEquals(Math.nextUp(1.0),
        specOf(Allocators.builder(PLAIN).loadFactor(Math.nextUp(1.0))).loadFactor());
  }

  @ParameterizedTest
  @ValueSource(doubles = {-0.001, 1.001, Double.NaN, Double.POSITIVE_INFINITY,
      Double.NEGATIVE_INFINITY})
  void badMovedShareIsRejected(double bad) {
    Allocators.Builder builder = Allocators.builder(FIXED).warnWhenMovedShareExceeds(0.3);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> builder.warnWhenMovedShareExceeds(bad));
    assertTrue(e.getMessage().contains("share"), e.getMessage());
    assertEquals(0.3, specOf(builder).movedShareWarning(), "a rejected value changes nothing");
  }

  @ParameterizedTest
  @ValueSource(doubles = {0.0, 0.2, 1.0})
  void movedShareIsPassedOn(double share) {
    assertEquals(share,
        specOf(Allocators.builder(FIXED).warnWhenMovedShareExceeds(share)).movedShareWarning());
  }

  // ---- listeners ----------------------------------------------------------------------------

  @Test
  void nullListenerIsRejected() {
    Allocators.Builder builder = Allocators.builder(FIXED);
    NullPointerException e =
        assertThrows(NullPointerException.class, () -> builder.listener(null));
    assertTrue(e.getMessage().contains("listener"), e.getMessage());
    assertEquals(List.of(), specOf(builder).listeners());
  }

  @Test
  void listenersArePassedOnInOrder() {
    AllocationListener a = change -> { };
    AllocationListener b = change -> { };
    AllocationListener c = change -> { };
    AllocatorSpec spec = specOf(Allocators.builder(FIXED).listener(b).listener(a).listener(c)
        .listener(a));
    assertEquals(4, spec.listeners().size());
    assertSame(b, spec.listeners().get(0));
    assertSame(a, spec.listeners().get(1));
    assertSame(c, spec.listeners().get(2));
    assertSame(a, spec.listeners().get(3));
  }

  @Test
  void listenersAddedAfterBuildDoNotReachEarlierAllocators() {
    AllocationListener a = change -> { };
    AllocationListener b = change -> { };
    Allocators.Builder builder = Allocators.builder(FIXED).listener(a);
    AllocatorSpec first = specOf(builder);
    builder.listener(b);
    AllocatorSpec second = specOf(builder);
    assertEquals(List.of(a), first.listeners());
    assertEquals(List.of(a, b), second.listeners());
  }

  // ---- partitioning --------------------------------------------------------------------------

  @Test
  void partitioningIsNotAskedForByDefault() {
    AllocatorSpec spec = specOf(Allocators.builder(FIXED));
    assertEquals(Optional.empty(), spec.partitionKey());
    assertFalse(spec.partitioningDisabled());
    assertTrue(spec.maxSkew().isEmpty());
  }

  @Test
  void partitionKeyAndSkewArePassedOn() {
    AllocatorSpec spec = specOf(Allocators.builder(FIXED).zoneAware().maxSkew(1.5));
    assertEquals(Optional.of(Allocators.ZONE), spec.partitionKey());
    assertEquals(1.5, spec.maxSkew().getAsDouble());
    assertEquals(Optional.of("pool"),
        specOf(Allocators.builder(FIXED).partitionBy("pool")).partitionKey());
  }

  @Test
  void anEmptyPartitionKeyIsNoPartitioning() {
    AllocatorSpec spec = specOf(Allocators.builder(FIXED).zoneAware().partitionBy(""));
    assertTrue(spec.partitioningDisabled());
    assertEquals(Optional.empty(), spec.partitionKey());
    AllocatorSpec again = specOf(Allocators.builder(FIXED).noPartitioning().zoneAware());
    assertFalse(again.partitioningDisabled());
  }

  @Test
  void partitioningAStrategyThatCannotIsRejectedNamingIt() {
    Allocators.Builder b = Allocators.builder(PLAIN);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::zoneAware);
    assertTrue(e.getMessage().contains(PLAIN), e.getMessage());
    assertThrows(IllegalArgumentException.class, b::noPartitioning);
    assertThrows(IllegalArgumentException.class, () -> b.maxSkew(2));
  }

  @ParameterizedTest
  @ValueSource(doubles = {0.99, 0, -1, Double.NaN, Double.POSITIVE_INFINITY})
  void aSkewBelowOneOrNotFiniteIsRejected(double skew) {
    Allocators.Builder b = Allocators.builder(FIXED);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> b.maxSkew(skew));
    assertTrue(e.getMessage().contains("skew"), e.getMessage());
  }

  @Test
  void aBlankOrNullPartitionKeyIsRejected() {
    Allocators.Builder b = Allocators.builder(FIXED);
    assertThrows(IllegalArgumentException.class, () -> b.partitionBy(" "));
    assertThrows(NullPointerException.class, () -> b.partitionBy(null));
  }
}
