package dev.apportion.allocation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.identity.XxHash64;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * How {@link Target} stores and hashes its labels: the array it shares through
 * {@link Target#labels()}, the UTF-8 encoding the identity hash is computed over, and
 * {@link Target#labelsHash()}.
 */
class TargetStorageTest {
  private static final String POD_NODE = "__meta_kubernetes_pod_node_name";

  // ---- the identity encoding is getBytes(UTF_8), whatever the chars -------------------------------

  /** The documented encoding, built the way the original implementation built it. */
  private static long referenceHash(String job, String address, Map<String, String> labels) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(1);
    writeString(out, job);
    writeString(out, address);
    for (Map.Entry<String, String> e : new TreeMap<>(labels).entrySet()) {
      if (!e.getKey().startsWith(Target.META_PREFIX)) {
        writeString(out, e.getKey());
        writeString(out, e.getValue());
      }
    }
    byte[] bytes = out.toByteArray();
    return XxHash64.hash(bytes, bytes.length);
  }

  private static void writeString(ByteArrayOutputStream out, String s) {
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    int n = utf8.length;
    while ((n & ~0x7F) != 0) {
      out.write((n & 0x7F) | 0x80);
      n >>>= 7;
    }
    out.write(n);
    out.write(utf8, 0, utf8.length);
  }

  static Stream<String> awkwardStrings() {
    return Stream.of(
        "\u007f", "\u0080", "\u00ff", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff", "\ufffd",
        "n\u00f6de", "\u2603 snow", "\u65e5\u672c",
        // supplementary code points: surrogate pairs, four bytes each
        "\uD83D\uDE00", "x\uD83D\uDE00y", "\uD800\uDC00", "\uDBFF\uDFFF",
        // unpaired surrogates: getBytes writes '?'
        "\uD83D", "\uDE00", "a\uD83D", "\uDE00a", "\uD83D\uD83D\uDE00", "\uDE00\uD83D",
        "\uD83Dx\uDE00", "\uDBFF", "\uDC00\uDC00",
        // an ASCII prefix whose length (1 byte of LEB128) grows to 2 bytes once the rest is counted
        "a".repeat(120) + "\u00e9".repeat(5),
        "a".repeat(127) + "\uD83D",
        "a".repeat(100) + "\uD83D\uDE00".repeat(10),
        "\u00e9".repeat(64),
        // 2 to 3 bytes of LEB128, and past the scratch buffer kept between targets
        "\u2603".repeat(6000),
        "b".repeat(70_000) + "\u00e9",
        "\u00e9" + "b".repeat(70_000));
  }

  @ParameterizedTest
  @MethodSource("awkwardStrings")
  void identityHashIsXxh64OfGetBytesUtf8(String s) {
    assertEquals(referenceHash(s, "a:1", Map.of()), Target.of(s, "a:1").hash());
    assertEquals(referenceHash("j", "a:1", Map.of(s, s)), Target.of("j", "a:1", Map.of(s, s)).hash());
    Map<String, String> mixed = Map.of("a", s, "__meta_x", s, "z" + s, "v");
    assertEquals(referenceHash("j", s, mixed), Target.of("j", s, mixed).hash());
  }

  @Test
  void identityHashIsXxh64OfGetBytesUtf8OnRandomStrings() {
    Random random = new Random(7L);
    char[] interesting = {'a', '~', '\u007f', '\u0080', '\u00e9', '\u07ff', '\u0800', '\u2603',
        '\uD800', '\uD83D', '\uDBFF', '\uDC00', '\uDE00', '\uDFFF', '\uE000', '\uFFFF'};
    for (int round = 0; round < 2000; round++) {
      StringBuilder sb = new StringBuilder();
      int length = random.nextInt(round % 100 == 0 ? 400 : 20);
      for (int i = 0; i < length; i++) {
        sb.append(random.nextBoolean()
            ? interesting[random.nextInt(interesting.length)]
            : (char) random.nextInt(Character.MAX_VALUE + 1));
      }
      String s = sb.toString();
      Map<String, String> labels = Map.of("l", s, "m" + s, "v");
      assertEquals(referenceHash("j", "x" + s, labels), Target.of("j", "x" + s, labels).hash(),
          () -> s.chars().mapToObj(Integer::toHexString).toList().toString());
    }
  }

  // ---- labelsHash ---------------------------------------------------------------------------------

  private static Map<String, String> sample() {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("pod", "api-7d9f");
    labels.put(POD_NODE, "node-1");
    labels.put("namespace", "default");
    labels.put("__meta_kubernetes_pod_ready", "true");
    return labels;
  }

  @Test
  void labelsHashIsEqualForEqualLabelsWhateverTheMap() {
    Map<String, String> in = sample();
    Target reference = Target.of("job", "a:1", in);
    Map<String, String> custom = new AbstractMap<>() {
      @Override
      public Set<Map.Entry<String, String>> entrySet() {
        return in.entrySet();
      }
    };
    for (Map<String, String> labels : List.of(new HashMap<>(in), new TreeMap<>(in),
        Map.copyOf(in), new ConcurrentSkipListMap<>(in), custom, reference.labels(),
        Target.of("other-job", "b:2", in).labels())) {
      Target t = Target.of("job", "a:1", labels);
      assertEquals(reference.hash(), t.hash(), labels.getClass().getName());
      assertEquals(reference.labelsHash(), t.labelsHash(), labels.getClass().getName());
      assertTrue(reference.sameLabels(t));
      assertTrue(t.sameLabels(reference));
    }
    assertEquals(Target.of("job", "a:1", Map.of()).labelsHash(), Target.of("job", "a:1").labelsHash());
  }

  @Test
  void labelsHashDiffersWhenAnyLabelJobOrAddressDiffers() {
    Target base = Target.of("job", "a:1", sample());
    List<Target> others = new ArrayList<>();
    others.add(Target.of("job2", "a:1", sample()));
    others.add(Target.of("job", "a:2", sample()));
    for (String name : sample().keySet()) {
      Map<String, String> changed = sample();
      changed.put(name, changed.get(name) + "x");
      others.add(Target.of("job", "a:1", changed));
      Map<String, String> removed = sample();
      removed.remove(name);
      others.add(Target.of("job", "a:1", removed));
      Map<String, String> renamed = sample();
      renamed.put(name + "_", renamed.remove(name));
      others.add(Target.of("job", "a:1", renamed));
    }
    Map<String, String> added = sample();
    added.put("__meta_kubernetes_pod_annotation_x", "y");
    others.add(Target.of("job", "a:1", added));
    Map<String, String> moved = sample();
    moved.put("__meta_a", moved.remove("__meta_kubernetes_pod_ready"));
    others.add(Target.of("job", "a:1", moved));

    for (Target other : others) {
      assertNotEquals(base.labelsHash(), other.labelsHash(), other.labels().toString());
      assertFalse(base.sameLabels(other), other.labels().toString());
    }
  }

  @Test
  void aChangedMetaLabelChangesTheLabelsHashButNotTheIdentity() {
    Map<String, String> changed = sample();
    changed.put(POD_NODE, "node-2");
    Target a = Target.of("job", "a:1", sample());
    Target b = Target.of("job", "a:1", changed);
    assertEquals(a, b);
    assertEquals(a.hash(), b.hash());
    assertNotEquals(a.labelsHash(), b.labelsHash());
    assertFalse(a.sameLabels(b));
  }

  @Test
  void labelsHashIsNotTheIdentityHash() {
    // not required, but a labels hash equal to the identity hash would mean the seeds collapsed
    assertNotEquals(Target.of("job", "a:1").hash(), Target.of("job", "a:1").labelsHash());
  }

  // ---- another target's labels are shared, not copied ------------------------------------------

  @Test
  void anotherTargetsLabelsGiveAnEqualTargetWithEqualLabels() {
    Target old = Target.of("job", "a:1", sample());
    Target same = Target.of("job", "a:1", old.labels());
    assertEquals(old, same);
    assertEquals(old.hash(), same.hash());
    assertTrue(old.sameLabels(same));
    assertEquals(old.labels(), same.labels());
    assertEquals(old.node(), same.node());
    assertEquals(old.toString(), same.toString());

    Target moved = Target.of("job", "a:2", old.labels());
    assertEquals(List.copyOf(old.labels().entrySet()), List.copyOf(moved.labels().entrySet()));
    assertEquals(Optional.of("node-1"), moved.node());
    assertEquals(Target.of("job", "a:2", sample()), moved);
    assertTrue(Target.of("job", "a:2", sample()).sameLabels(moved));
  }

  @Test
  void subMapsOfAnotherTargetsLabelsAreCopiedRanges() {
    Target old = Target.of("job", "a:1", sample());
    Map<String, String> identityOnly = new TreeMap<>(sample());
    identityOnly.keySet().removeIf(k -> k.startsWith(Target.META_PREFIX));
    Target head = Target.of("job", "a:1", old.labels().headMap("namespace"));
    Target tail = Target.of("job", "a:1", old.labels().tailMap("namespace"));
    Target meta = Target.of("job", "a:1", old.labels().subMap("__meta_", "__meta`"));

    assertEquals(Map.of(POD_NODE, "node-1", "__meta_kubernetes_pod_ready", "true"), head.labels());
    assertEquals(Optional.of("node-1"), head.node());
    assertEquals(Target.of("job", "a:1"), head);
    assertEquals(identityOnly, tail.labels());
    assertEquals(old, tail);
    assertEquals(Optional.empty(), tail.node());
    assertEquals(head.labels(), meta.labels());
    assertTrue(head.sameLabels(meta));
  }

  // ---- copying ----------------------------------------------------------------------------------

  @Test
  void manyUnsortedLabelsAreSorted() {
    Random random = new Random(11L);
    for (int round = 0; round < 50; round++) {
      Map<String, String> in = new HashMap<>();
      int n = random.nextInt(300);
      for (int i = 0; i < n; i++) {
        in.put(Integer.toString(random.nextInt(1000), 36) + (random.nextBoolean() ? "" : "_x"),
            Integer.toString(i));
      }
      Target t = Target.of("job", "a:1", in);
      assertEquals(List.copyOf(new TreeMap<>(in).entrySet()), List.copyOf(t.labels().entrySet()));
      assertEquals(referenceHash("job", "a:1", in), t.hash());
    }
  }

  @Test
  void aMapThatRepeatsANameKeepsTheLastValueLikeMapPut() {
    List<Map.Entry<String, String>> entries = List.of(
        Map.entry("b", "1"), Map.entry("a", "1"), Map.entry("b", "2"), Map.entry("a", "2"),
        Map.entry("c", "1"));
    Map<String, String> broken = new AbstractMap<>() {
      @Override
      public Set<Map.Entry<String, String>> entrySet() {
        return new AbstractSet<>() {
          @Override
          public Iterator<Map.Entry<String, String>> iterator() {
            return entries.iterator();
          }

          @Override
          public int size() {
            return entries.size();
          }
        };
      }
    };
    Target t = Target.of("job", "a:1", broken);
    assertEquals(List.of(Map.entry("a", "2"), Map.entry("b", "2"), Map.entry("c", "1")),
        List.copyOf(t.labels().entrySet()));
    assertTrue(t.sameLabels(Target.of("job", "a:1", Map.of("a", "2", "b", "2", "c", "1"))));
  }
}
