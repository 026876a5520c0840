package dev.apportion.allocation.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * {@link LabelMap}, the array-backed map behind {@link Target#labels()}, held to the behaviour of
 * {@code Collections.unmodifiableSortedMap(new TreeMap<>(labels))}.
 */
class LabelMapTest {
  /** Names drawn from a small alphabet so that sub-map bounds often hit, miss and fall between. */
  private static final String[] ALPHABET = {"a", "b", "_", "__meta_", "__meta_x", "Z", "\u00e9"};

  private static String randomName(Random random) {
    StringBuilder sb = new StringBuilder();
    int parts = 1 + random.nextInt(3);
    for (int i = 0; i < parts; i++) {
      sb.append(ALPHABET[random.nextInt(ALPHABET.length)]);
    }
    return sb.toString();
  }

  private static Map<String, String> randomLabels(Random random, int max) {
    Map<String, String> labels = new HashMap<>();
    int n = random.nextInt(max + 1);
    for (int i = 0; i < n; i++) {
      labels.put(randomName(random), "v" + random.nextInt(5));
    }
    return labels;
  }

  /** Everything a reader can observe of a sorted map, compared against the reference. */
  // JdkObsolete: LabelMap is the SortedMap that Target.labels() returns; that is what is tested.
  @SuppressWarnings("JdkObsolete")
  private static void assertSameSortedMap(SortedMap<String, String> expected,
      SortedMap<String, String> actual, Random random) {
    assertEquals(expected.size(), actual.size());
    assertEquals(expected.isEmpty(), actual.isEmpty());
    assertEquals(List.copyOf(expected.keySet()), List.copyOf(actual.keySet()));
    assertEquals(List.copyOf(expected.values()), List.copyOf(actual.values()));
    assertEquals(List.copyOf(expected.entrySet()), List.copyOf(actual.entrySet()));
    assertEquals(expected, actual);
    assertEquals(actual, expected);
    assertEquals(expected.hashCode(), actual.hashCode());
    assertEquals(expected.toString(), actual.toString());
    assertEquals(expected.entrySet(), actual.entrySet());
    assertEquals(expected.keySet(), actual.keySet());
    assertNull(actual.comparator());
    if (expected.isEmpty()) {
      assertThrows(NoSuchElementException.class, actual::firstKey);
      assertThrows(NoSuchElementException.class, actual::lastKey);
    } else {
      assertEquals(expected.firstKey(), actual.firstKey());
      assertEquals(expected.lastKey(), actual.lastKey());
    }
    List<String> forEach = new ArrayList<>();
    actual.forEach((k, v) -> forEach.add(k + "=" + v));
    List<String> reference = new ArrayList<>();
    expected.forEach((k, v) -> reference.add(k + "=" + v));
    assertEquals(reference, forEach);
    for (int i = 0; i < 12; i++) {
      String key = randomName(random);
      assertEquals(expected.get(key), actual.get(key), key);
      assertEquals(expected.containsKey(key), actual.containsKey(key), key);
      assertEquals(expected.getOrDefault(key, "none"), actual.getOrDefault(key, "none"), key);
      assertEquals(expected.keySet().contains(key), actual.keySet().contains(key), key);
      String value = "v" + random.nextInt(6);
      assertEquals(expected.containsValue(value), actual.containsValue(value), value);
      assertEquals(expected.values().contains(value), actual.values().contains(value), value);
      assertEquals(expected.entrySet().contains(Map.entry(key, value)),
          actual.entrySet().contains(Map.entry(key, value)), key + "=" + value);
    }
  }

  /** Whether the reference accepts a call: sub-map bounds are checked the same way. */
  private static <T> void assertSameOutcome(Function<SortedMap<String, String>, T> call,
      SortedMap<String, String> expected, SortedMap<String, String> actual,
      BiConsumer<T, T> ifBothReturn) {
    T want;
    try {
      want = call.apply(expected);
    } catch (IllegalArgumentException e) {
      assertThrows(IllegalArgumentException.class, () -> call.apply(actual));
      return;
    }
    ifBothReturn.accept(want, call.apply(actual));
  }

  private static void compareRecursively(SortedMap<String, String> expected,
      SortedMap<String, String> actual, Random random, int depth) {
    assertSameSortedMap(expected, actual, random);
    if (depth == 0) {
      return;
    }
    String a = randomName(random);
    String b = randomName(random);
    BiConsumer<SortedMap<String, String>, SortedMap<String, String>> recurse =
        (want, got) -> compareRecursively(want, got, random, depth - 1);
    assertSameOutcome(m -> m.headMap(a), expected, actual, recurse);
    assertSameOutcome(m -> m.tailMap(a), expected, actual, recurse);
    assertSameOutcome(m -> m.subMap(a, b), expected, actual, recurse);
    assertSameOutcome(m -> m.subMap(b, a), expected, actual, recurse);
    assertSameOutcome(m -> m.subMap(a, a), expected, actual, recurse);
  }

  @Test
  void behavesLikeATreeMapOnRandomLabelSets() {
    Random random = new Random(20240611L);
    for (int round = 0; round < 400; round++) {
      Map<String, String> in = randomLabels(random, round % 50 == 0 ? 120 : 14);
      SortedMap<String, String> actual = Target.of("job", "a:1", in).labels();
      assertTrue(actual instanceof LabelMap);
      compareRecursively(new TreeMap<>(in), actual, random, 3);
    }
  }

  @Test
  void subMapsOfSubMapsRejectKeysOutsideTheirBoundsLikeTreeMap() {
    Map<String, String> in = Map.of("a", "1", "c", "3", "e", "5", "g", "7");
    SortedMap<String, String> labels = Target.of("job", "a:1", in).labels();
    SortedMap<String, String> sub = labels.subMap("b", "f");
    SortedMap<String, String> ref = new TreeMap<>(in).subMap("b", "f");
    assertEquals(ref, sub);
    assertEquals(Map.of("c", "3", "e", "5"), sub);
    assertThrows(IllegalArgumentException.class, () -> sub.headMap("g"));
    assertThrows(IllegalArgumentException.class, () -> sub.tailMap("a"));
    assertThrows(IllegalArgumentException.class, () -> sub.tailMap("f"));
    assertThrows(IllegalArgumentException.class, () -> sub.subMap("a", "c"));
    assertThrows(IllegalArgumentException.class, () -> labels.subMap("e", "c"));
    assertEquals(ref.headMap("f"), sub.headMap("f"));
    assertEquals(ref.tailMap("b"), sub.tailMap("b"));
    assertEquals(Map.of(), sub.headMap("b"));
    assertNull(sub.get("a"), "out of range: absent, as in TreeMap");
    assertFalse(sub.containsKey("g"));
    assertEquals("c", sub.firstKey());
    assertEquals("e", sub.lastKey());
    assertThrows(NoSuchElementException.class, () -> sub.subMap("c", "c").firstKey());
  }

  @Test
  void nullKeysAreRejectedLikeTreeMap() {
    SortedMap<String, String> labels = Target.of("job", "a:1", Map.of("a", "1")).labels();
    assertThrows(NullPointerException.class, () -> labels.get(null));
    assertThrows(NullPointerException.class, () -> labels.containsKey(null));
    assertThrows(NullPointerException.class, () -> labels.headMap(null));
    assertThrows(NullPointerException.class, () -> labels.tailMap(null));
    assertThrows(NullPointerException.class, () -> labels.subMap(null, "b"));
    assertFalse(labels.containsValue(null));
    assertFalse(labels.entrySet().contains(null));
  }

  @Test
  void equalsAndHashCodeFollowTheMapContract() {
    Map<String, String> in = Map.of("a", "1", "b", "2", "__meta_x", "3");
    SortedMap<String, String> labels = Target.of("job", "a:1", in).labels();
    assertEquals(in, labels);
    assertEquals(labels, in);
    assertEquals(new HashMap<>(in), labels);
    assertEquals(in.hashCode(), labels.hashCode());
    assertEquals(labels, Target.of("other", "b:2", new TreeMap<>(in)).labels());
    assertNotEquals(labels, Map.of("a", "1", "b", "2"));
    assertNotEquals(labels, Map.of("a", "1", "b", "2", "__meta_x", "4"));
    assertNotEquals(labels, Map.of("a", "1", "b", "2", "__meta_y", "3"));
    assertNotEquals(labels, List.of());
    Map<Object, Object> withOtherKeyTypes = new HashMap<>();
    withOtherKeyTypes.put(1, "1");
    withOtherKeyTypes.put(null, "2");
    withOtherKeyTypes.put("__meta_x", "3");
    assertNotEquals(labels, withOtherKeyTypes);
    assertNotEquals(withOtherKeyTypes, labels);
    assertEquals(Map.of(), Target.of("job", "a:1").labels());
    assertEquals(0, Target.of("job", "a:1").labels().hashCode());
  }

  @Test
  void labelsOfATargetAreOneObject() {
    Target t = Target.of("job", "a:1", Map.of("a", "1"));
    assertSame(t.labels(), t.labels());
  }

  @Test
  void everyMutatorThrowsEvenWhenItWouldChangeNothing() {
    SortedMap<String, String> labels =
        Target.of("job", "a:1", Map.of("a", "1", "b", "2")).labels();
    assertUnmodifiable(labels);
    assertUnmodifiable(labels.headMap("b"));
    assertUnmodifiable(labels.tailMap("b"));
    assertUnmodifiable(labels.subMap("a", "z"));
    assertUnmodifiable(labels.subMap("x", "z"));
    assertUnmodifiable(Target.of("job", "a:1").labels());
    assertEquals(Map.of("a", "1", "b", "2"), labels);
  }

  // JdkObsolete: LabelMap is the SortedMap that Target.labels() returns; that is what is tested.
  @SuppressWarnings("JdkObsolete")
  private static void assertUnmodifiable(SortedMap<String, String> m) {
    List<Executable> calls = List.of(
        () -> m.put("a", "x"),
        () -> m.put("new", "x"),
        () -> m.remove("a"),
        () -> m.remove("absent"),
        () -> m.remove("a", "1"),
        m::clear,
        () -> m.putAll(Map.of()),
        () -> m.putAll(Map.of("c", "3")),
        () -> m.putIfAbsent("c", "3"),
        () -> m.replace("a", "x"),
        () -> m.replace("a", "1", "x"),
        () -> m.replaceAll((k, v) -> v),
        () -> m.computeIfAbsent("c", k -> "3"),
        () -> m.computeIfPresent("a", (k, v) -> v),
        () -> m.compute("a", (k, v) -> v),
        () -> m.merge("a", "x", (v, w) -> v),
        () -> m.keySet().remove("a"),
        () -> m.keySet().remove("absent"),
        () -> m.keySet().clear(),
        () -> m.keySet().add("c"),
        () -> m.keySet().removeIf(k -> true),
        () -> m.keySet().retainAll(List.of()),
        () -> m.keySet().removeAll(List.of("a")),
        () -> m.values().clear(),
        () -> m.values().remove("1"),
        () -> m.values().removeIf(v -> true),
        () -> m.entrySet().clear(),
        () -> m.entrySet().remove(Map.entry("a", "1")),
        () -> m.entrySet().add(Map.entry("c", "3")),
        () -> removeFirst(m.keySet()),
        () -> removeFirst(m.values()),
        () -> removeFirst(m.entrySet()));
    for (Executable call : calls) {
      assertThrows(UnsupportedOperationException.class, call);
    }
    if (!m.isEmpty()) {
      assertThrows(UnsupportedOperationException.class,
          () -> m.entrySet().iterator().next().setValue("x"));
    }
  }

  private static void removeFirst(Collection<?> c) {
    Iterator<?> it = c.iterator();
    if (it.hasNext()) {
      it.next();
    }
    it.remove();
  }

  @Test
  void iteratorsEndWithNoSuchElement() {
    SortedMap<String, String> labels = Target.of("job", "a:1", Map.of("a", "1")).labels();
    for (Collection<?> c : List.<Collection<?>>of(labels.keySet(), labels.values(),
        labels.entrySet())) {
      Iterator<?> it = c.iterator();
      it.next();
      assertFalse(it.hasNext());
      assertThrows(NoSuchElementException.class, it::next);
    }
    Set<Map.Entry<String, String>> entries = labels.entrySet();
    assertEquals(Set.of(Map.entry("a", "1")), entries);
  }
}
