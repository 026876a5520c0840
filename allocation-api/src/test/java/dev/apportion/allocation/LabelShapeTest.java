package dev.apportion.allocation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Targets built through a remembered {@link LabelShape} (the same names in the same order as an
 * earlier map) are exactly those built without one: same labels, hashes, node and zone.
 */
class LabelShapeTest {
  private static final String[] NAMES = {
    "namespace", "pod", "app", "é_not_ascii", "zz",
    "__meta_kubernetes_pod_node_name", "__meta_kubernetes_node_name",
    "__meta_kubernetes_endpoint_node_name",
    "__meta_kubernetes_endpointslice_address_target_kind",
    "__meta_kubernetes_endpointslice_address_target_name",
    "__meta_kubernetes_endpoint_address_target_kind",
    "__meta_kubernetes_endpoint_address_target_name",
    "__meta_kubernetes_endpointslice_endpoint_node_name",
    "__meta_kubernetes_endpointslice_endpoint_zone",
    "__meta_kubernetes_node_label_topology_kubernetes_io_zone",
    "__meta_other", "__address__", "__meta`", "__met",
  };
  private static final String[] VALUES = {"", " ", "Node", "n1", "zone-a", "ü-ß", "\uD83D\uDE00",
    "x\uD800", "Pod", "10.0.0.1:80"};

  /** The value every {@code __address__} label gets: a target's address must be it. */
  private static final String ADDRESS = "10.0.0.1:80";

  /** The address of a target of {@code m}: its {@code __address__}, else {@code otherwise}. */
  private static String address(Map<String, String> m, String otherwise) {
    String a = m.get("__address__");
    return a != null ? a : otherwise;
  }

  /** A label value drawn from {@link #VALUES}, but {@link #ADDRESS} for {@code __address__}. */
  private static String valueFor(String name, Random random) {
    String v = VALUES[random.nextInt(VALUES.length)];
    return name.equals("__address__") ? ADDRESS : v;
  }

  /** The same target built from another target's labels: no shape, names encoded one by one. */
  private static Target withoutShape(Target t) {
    return Target.of(t.job(), t.address(), t.labels());
  }

  @Test
  void shapedTargetsEqualUnshapedOnes() {
    Random random = new Random(7);
    for (int round = 0; round < 300; round++) {
      List<String> names = new ArrayList<>(List.of(NAMES));
      Collections.shuffle(names, random);
      names = names.subList(0, 1 + random.nextInt(names.size()));
      Target first = null;
      for (int k = 0; k < 20; k++) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String n : names) {
          m.put(new String(n.toCharArray()), valueFor(n, random));
        }
        Target t = Target.of("job", address(m, "addr:" + k), m);
        Target reference = withoutShape(t);
        String why = "round " + round + ", " + m;
        assertEquals(m, t.labels(), why);
        assertEquals(reference.hash(), t.hash(), why);
        assertEquals(reference.labelsHash(), t.labelsHash(), why);
        assertEquals(reference.node(), t.node(), why);
        assertEquals(reference.zone(), t.zone(), why);
        assertEquals(reference.toString(), t.toString(), why);
        if (first == null) {
          first = t;
        } else {
          for (int i = 0; i < t.kv.length; i += 2) {
            assertSame(first.kv[i], t.kv[i], "one instance per name: " + why);
          }
        }
      }
    }
  }

  @Test
  void theNodeFollowsItsPrecedenceWithAShape() {
    Map<String, String> m = new HashMap<>();
    m.put("__meta_kubernetes_endpointslice_address_target_kind", "Node");
    m.put("__meta_kubernetes_endpointslice_address_target_name", "n-slice");
    m.put("__meta_kubernetes_endpointslice_endpoint_node_name", "n-endpoint");
    m.put("__meta_kubernetes_pod_node_name", " ");
    for (int i = 0; i < 3; i++) {
      assertEquals("n-slice", Target.of("j", "a:" + i, m).node().orElseThrow());
    }
    m.put("__meta_kubernetes_endpointslice_address_target_kind", "Pod");
    assertEquals("n-endpoint", Target.of("j", "a", m).node().orElseThrow());
    m.put("__meta_kubernetes_pod_node_name", "n-pod");
    assertEquals("n-pod", Target.of("j", "a", m).node().orElseThrow());
  }

  /** At least two of {@link #NAMES}, in a random order. */
  private static List<String> someNames(Random random) {
    List<String> names = new ArrayList<>(List.of(NAMES));
    Collections.shuffle(names, random);
    return new ArrayList<>(names.subList(0, 2 + random.nextInt(names.size() - 2)));
  }

  /** A map with the names given, in that order, each value drawn by {@link #valueFor}. */
  private static Map<String, String> mapOf(List<String> names, Random random) {
    Map<String, String> m = new LinkedHashMap<>();
    for (String n : names) {
      m.put(new String(n.toCharArray()), valueFor(n, random));
    }
    return m;
  }

  /**
   * A map that differs from the shape of the map read before it at any one pair (another name
   * there, another order, a name more or less) is not taken for that shape: its target is the one
   * built without a shape, and the first shape, seen again, still builds the same targets.
   */
  @Test
  void aMapThatLeavesTheLastShapeAtAnyPairIsBuiltAsWithoutIt() {
    Random random = new Random(11);
    for (int round = 0; round < 2000; round++) {
      List<String> names = someNames(random);
      Map<String, String> first = mapOf(names, random);
      Target.of("job", address(first, "addr:0"), first);
      int at = random.nextInt(names.size());
      List<String> other = new ArrayList<>(names);
      int how = random.nextInt(4);
      switch (how) {
        case 0 -> other.set(at, "other_" + at);
        case 1 -> Collections.swap(other, at, (at + 1) % other.size());
        case 2 -> {
          other.remove(at);
          other.add("zz_last");
        }
        default -> other.add(at, "inserted");
      }
      Map<String, String> m = mapOf(other, random);
      Target t = Target.of("job", address(m, "addr:1"), m);
      String why = "round " + round + ", change " + how + " at " + at + ", " + m;
      Target reference = withoutShape(t);
      assertEquals(m, t.labels(), why);
      assertEquals(reference.hash(), t.hash(), why);
      assertEquals(reference.labelsHash(), t.labelsHash(), why);
      assertEquals(reference.node(), t.node(), why);
      assertEquals(reference.zone(), t.zone(), why);
      // The map of the first shape again: read as its shape, or as the new one, the same.
      Map<String, String> back = mapOf(names, random);
      Target again = Target.of("job", address(back, "addr:2"), back);
      assertEquals(back, again.labels(), why);
      assertEquals(withoutShape(again).hash(), again.hash(), why);
    }
  }

  /**
   * A map of the last shape's names but a null value, or another map of its size with an empty
   * name, fails, and leaves nothing behind in the thread's reader or shapes: the next map of that
   * shape is built as before.
   */
  @Test
  void anInvalidPairInAMapOfTheLastShapeFailsAsWithoutIt() {
    Random random = new Random(13);
    for (int round = 0; round < 200; round++) {
      List<String> names = someNames(random);
      Map<String, String> good = mapOf(names, random);
      Target first = Target.of("job", address(good, "addr:0"), good);
      int at = random.nextInt(names.size());
      Map<String, String> nullValue = new LinkedHashMap<>(good);
      nullValue.put(names.get(at), null);
      assertThrows(NullPointerException.class,
          () -> Target.of("job", address(nullValue, "addr:1"), nullValue));
      List<String> withEmpty = new ArrayList<>(names);
      withEmpty.set(at, "");
      Map<String, String> emptyName = mapOf(withEmpty, random);
      assertThrows(IllegalArgumentException.class,
          () -> Target.of("job", address(emptyName, "addr:2"), emptyName));
      Target next = Target.of("job", address(good, "addr:0"), new LinkedHashMap<>(good));
      assertEquals(first, next);
      assertEquals(first.labelsHash(), next.labelsHash());
      assertEquals(good, next.labels());
    }
  }

  /**
   * A map whose {@code size()} says one pair more than its {@code forEach} gives (as a map changed
   * while read may) after a map of the shape its pairs begin: the pairs given are built, as
   * without a shape, not the shape's names with a value missing.
   */
  @Test
  void aMapThatGivesFewerPairsThanItsSizeIsBuiltFromWhatItGives() {
    Random random = new Random(17);
    for (int round = 0; round < 200; round++) {
      List<String> names = someNames(random);
      Map<String, String> first = mapOf(names, random);
      Target.of("job", address(first, "addr:0"), first);
      Map<String, String> given = mapOf(names.subList(0, names.size() - 1), random);
      Map<String, String> lying = new LinkedHashMap<>(given) {
        @Override
        public int size() {
          return super.size() + 1;
        }
      };
      Target t = Target.of("job", address(lying, "addr:1"), lying);
      assertEquals(given, t.labels(), "round " + round);
      assertEquals(Target.of("job", address(given, "addr:1"), new TreeMap<>(given)).labelsHash(),
          t.labelsHash(),
          "round " + round);
    }
  }
}
