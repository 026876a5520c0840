package dev.apportion.allocation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CollectorTest {

  @Test
  void nullNameIsRejectedWithMessageNamingTheName() {
    NullPointerException e = assertThrows(NullPointerException.class, () -> Collector.of(null));
    assertTrue(e.getMessage().contains("name"), e.getMessage());

    NullPointerException withNode =
        assertThrows(NullPointerException.class, () -> Collector.of(null, "node-1"));
    assertTrue(withNode.getMessage().contains("name"), withNode.getMessage());
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "  ", "\t", "\n \t"})
  void blankNameIsRejectedWithMessageNamingTheName(String blank) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Collector.of(blank));
    assertTrue(e.getMessage().contains("name"), e.getMessage());

    IllegalArgumentException withNode =
        assertThrows(IllegalArgumentException.class, () -> Collector.of(blank, "node-1"));
    assertTrue(withNode.getMessage().contains("name"), withNode.getMessage());
  }

  @Test
  void nameIsKeptAsGiven() {
    assertEquals("agent-x7k2p", Collector.of("agent-x7k2p").name());
    assertEquals(" padded ", Collector.of(" padded ", "node-1").name());
  }

  @Test
  void nullOrEmptyNodeMeansNoNode() {
    assertEquals(Optional.empty(), Collector.of("a").node());
    assertEquals(Optional.empty(), Collector.of("a", null).node());
    assertEquals(Optional.empty(), Collector.of("a", "").node());
  }

  @Test
  void aBlankNodeIsNormalizedToNoNode() {
    assertEquals(Optional.empty(), Collector.of("a", "  ").node());
    assertEquals(Optional.empty(), Collector.of("a", "\t\n").node());
    assertEquals(Collector.of("a"), Collector.of("a", " "));
  }

  @Test
  void nodeIsKept() {
    assertEquals(Optional.of("node-1"), Collector.of("a", "node-1").node());
  }

  @Test
  void equalsAndHashCodeCoverNameAndNode() {
    Collector a = Collector.of("a", "node-1");
    Collector same = Collector.of("a", "node-1");
    assertEquals(a, same);
    assertEquals(a.hashCode(), same.hashCode());
    assertEquals(a, a);

    assertNotEquals(a, Collector.of("a", "node-2"));
    assertNotEquals(a.hashCode(), Collector.of("a", "node-2").hashCode());
    assertNotEquals(a, Collector.of("a"));
    assertNotEquals(Collector.of("a"), a);
    assertNotEquals(a, Collector.of("b", "node-1"));
    assertNotEquals(a.hashCode(), Collector.of("b", "node-1").hashCode());

    assertFalse(a.equals(null));
    assertFalse(a.equals((Object) "a"));
  }

  @Test
  void noNodeNullAndEmptyAreTheSameCollector() {
    Collector none = Collector.of("a");
    assertEquals(none, Collector.of("a", null));
    assertEquals(none, Collector.of("a", ""));
    assertEquals(none.hashCode(), Collector.of("a", "").hashCode());
  }

  @Test
  void setsOfCollectorsDifferWhenOneMovedToAnotherNode() {
    assertNotEquals(
        Set.of(Collector.of("a", "node-1"), Collector.of("b", "node-2")),
        Set.of(Collector.of("a", "node-3"), Collector.of("b", "node-2")));
    assertEquals(
        Set.of(Collector.of("a", "node-1"), Collector.of("b")),
        Set.of(Collector.of("b", ""), Collector.of("a", "node-1")));
  }

  @Test
  void compareToOrdersByNameThenNodeWithNoNodeFirst() {
    List<Collector> expected = List.of(
        Collector.of("a"),
        Collector.of("a", "node-1"),
        Collector.of("a", "node-2"),
        Collector.of("b", "node-0"),
        Collector.of("c"));
    List<Collector> shuffled = new ArrayList<>(expected);
    Collections.reverse(shuffled);
    Collections.swap(shuffled, 0, 2);
    Collections.sort(shuffled);
    assertEquals(expected, shuffled);
  }

  @Test
  void compareToIsAntisymmetricAndConsistentWithEquals() {
    List<Collector> all = List.of(
        Collector.of("a"), Collector.of("a", "n1"), Collector.of("a", "n2"),
        Collector.of("b"), Collector.of("b", "n1"), Collector.of("a", ""));
    for (Collector x : all) {
      for (Collector y : all) {
        assertEquals(Integer.signum(x.compareTo(y)), -Integer.signum(y.compareTo(x)),
            x + " vs " + y);
        assertEquals(x.equals(y), x.compareTo(y) == 0, x + " vs " + y);
      }
    }
    assertTrue(Collector.of("a", "z").compareTo(Collector.of("b")) < 0, "name comes first");
    assertTrue(Collector.of("a").compareTo(Collector.of("a", "n")) < 0, "no node first");
    assertTrue(Collector.of("a", "n").compareTo(Collector.of("a")) > 0, "no node first");
  }

  @Test
  void toStringShowsNameAndNode() {
    assertEquals("agent-1", Collector.of("agent-1").toString());
    assertEquals("agent-1", Collector.of("agent-1", "").toString());
    assertEquals("agent-1@node-1", Collector.of("agent-1", "node-1").toString());
  }

  @Test
  void aZoneIsOptionalAndBlankMeansNone() {
    assertEquals(Optional.of("z1"), Collector.of("a", "n1", "z1").zone());
    assertEquals(Optional.empty(), Collector.of("a", "n1").zone());
    assertEquals(Optional.empty(), Collector.of("a", "n1", " ").zone());
    assertEquals(Optional.empty(), Collector.of("a", "n1", null).zone());
    assertEquals(Collector.of("a", "n1"), Collector.of("a", "n1", ""));
  }

  @Test
  void zoneAndLabelsArePartOfEqualityAndOrder() {
    Collector a = Collector.of("a", "n1", "z1");
    assertEquals(a, Collector.of("a", "n1", "z1"));
    assertEquals(a.hashCode(), Collector.of("a", "n1", "z1").hashCode());
    assertNotEquals(a, Collector.of("a", "n1", "z2"));
    assertNotEquals(a, Collector.of("a", "n1"));
    assertTrue(Collector.of("a", "n1").compareTo(a) < 0);
    assertTrue(a.compareTo(Collector.of("a", "n1", "z2")) < 0);
    Collector labeled = a.withLabels(java.util.Map.of("pool", "spot"));
    assertNotEquals(a, labeled);
    assertEquals(labeled, a.withLabels(java.util.Map.of("pool", "spot")));
    assertTrue(a.compareTo(labeled) < 0);
    assertTrue(labeled.compareTo(a.withLabels(java.util.Map.of("pool", "z"))) < 0);
    assertEquals("spot", labeled.labels().get("pool"));
    assertEquals("a@n1/z1{pool=spot}", labeled.toString());
    assertEquals("a@n1/z1", a.toString());
  }

  @Test
  void labelsAreValidated() {
    Collector a = Collector.of("a");
    assertThrows(NullPointerException.class, () -> a.withLabels(null));
    assertThrows(IllegalArgumentException.class, () -> a.withLabels(java.util.Map.of("", "v")));
    java.util.Map<String, String> withNull = new java.util.HashMap<>();
    withNull.put("k", null);
    NullPointerException e = assertThrows(NullPointerException.class, () -> a.withLabels(withNull));
    assertTrue(e.getMessage().contains("k"), e.getMessage());
  }
}
