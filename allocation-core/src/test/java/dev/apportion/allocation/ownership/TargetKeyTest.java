package dev.apportion.allocation.ownership;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.hash.Hashing;
import dev.apportion.allocation.Target;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The key is explicit, stable and leaves out exactly what it is told to. */
class TargetKeyTest {
  private static final Target PLAIN = Target.of("node-exporter", "10.0.0.1:9100");
  private static final Target LABELLED = Target.of("kubernetes-pods", "10.1.2.3:8080", Map.of(
      "namespace", "monitoring", "pod", "alloy-0", "instance", "host-a:8080",
      "__meta_kubernetes_pod_node_name", "node-7"));

  /**
   * Golden values: these numbers must never change, or replicas on different releases place
   * targets differently. A failure here is a breaking change, not a test to update.
   */
  @Test
  void keysArePinned() {
    assertEquals(0x9BEFC53E9072CE09L, TargetKey.identity().keyOf(PLAIN));
    assertEquals(0xA44C1DF47E0FCFE7L, TargetKey.identity().keyOf(LABELLED));
    assertEquals(0xA7AC1DCF700C0296L, TargetKey.excludingLabels("instance").keyOf(LABELLED));
    assertEquals(0xECDA6C85BEB08917L, TargetKey.onlyLabels("namespace", "pod").keyOf(LABELLED));
    assertEquals(0xD92876BC48737FE1L, TargetKey.onlyLabels("__address__").keyOf(PLAIN));
    assertEquals(0xA7EAD1E3CCF44478L, TargetKey.onlyLabels("job", "__meta_kubernetes_pod_node_name")
        .keyOf(LABELLED));
  }

  @Test
  void excludingIsTheIdentityOfTheTargetWithoutThoseLabels() {
    TargetKey key = TargetKey.excludingLabels("instance", "pod");
    Target reduced = Target.of("kubernetes-pods", "10.1.2.3:8080", Map.of(
        "namespace", "monitoring", "__meta_other", "x"));
    assertEquals(reduced.hash(), key.keyOf(LABELLED));
    assertEquals(PLAIN.hash(), key.keyOf(PLAIN), "a target without them keeps its identity");
    assertNotEquals(LABELLED.hash(), key.keyOf(LABELLED));
    assertSame(TargetKey.identity(), TargetKey.excludingLabels());
    // __meta_ labels are never in the identity, so excluding one changes nothing.
    assertEquals(LABELLED.hash(),
        TargetKey.excludingLabels("__meta_kubernetes_pod_node_name").keyOf(LABELLED));
  }

  @Test
  void onlyLabelsHashesTheDocumentedEncoding() {
    SplittableRandom rng = new SplittableRandom(1);
    for (Target t : Seeded.targets(rng, 200)) {
      assertEquals(encoded("namespace", t.labels().get("namespace"),
              "pod", t.labels().getOrDefault("pod", "")),
          TargetKey.onlyLabels("pod", "namespace", "pod").keyOf(t));
      assertEquals(encoded("__address__", t.address(), "job", t.job()),
          TargetKey.onlyLabels("job", "__address__").keyOf(t));
    }
    // A target's __address__ label is its address (Target.of rejects another); its job label
    // may differ from its job, and the label is what counts.
    Target carries = Target.of("j", "a:1", Map.of("job", "other", "__address__", "a:1"));
    assertEquals(encoded("__address__", "a:1", "job", "other"),
        TargetKey.onlyLabels("job", "__address__").keyOf(carries), "labels come first");
    String long300 = "x".repeat(300);
    assertEquals(encoded("k", long300),
        TargetKey.onlyLabels("k").keyOf(Target.of("j", "a:1", Map.of("k", long300))),
        "lengths above 127 take two bytes");
  }

  @Test
  void onlyLabelsIgnoresEverythingElse() {
    TargetKey key = TargetKey.onlyLabels("namespace");
    Target other = Target.of("another-job", "10.9.9.9:1", Map.of("namespace", "monitoring",
        "pod", "different"));
    assertEquals(key.keyOf(LABELLED), key.keyOf(other));
    assertNotEquals(key.keyOf(LABELLED),
        key.keyOf(Target.of("j", "a:1", Map.of("namespace", "default"))));
    assertEquals(key.keyOf(Target.of("j", "a:1")),
        key.keyOf(Target.of("j", "a:1", Map.of("namespace", ""))), "absent is empty");
  }

  /**
   * Alloy's bug class: each replica discovers the same targets with a host-specific
   * {@code instance}. Keyed by identity, the replicas disagree (gaps and duplicates); with
   * {@code instance} excluded, every target has exactly one owner.
   */
  @Test
  void excludingAVolatileLabelGivesOneOwnerPerTarget() {
    SplittableRandom rng = new SplittableRandom(17);
    List<String> members = Seeded.members(rng, 5);
    List<Target> base = Seeded.targets(rng, 2000);
    for (TargetKey key : List.of(TargetKey.identity(), TargetKey.excludingLabels("instance"))) {
      List<Ownership> views = new ArrayList<>();
      for (String m : members) {
        views.add(Ownership.builder(m).key(key).build(members));
      }
      int miscovered = 0;
      for (Target t : base) {
        int owners = 0;
        for (Ownership view : views) {
          if (view.owns(withInstance(t, view.self()))) {
            owners++;
          }
        }
        miscovered += owners == 1 ? 0 : 1;
      }
      if (key.equals(TargetKey.identity())) {
        assertTrue(miscovered > base.size() / 4, "identity key miscovered only " + miscovered);
      } else {
        assertEquals(0, miscovered);
      }
    }
  }

  @Test
  void targetsThatDifferOnlyInAnExcludedLabelHaveOneOwner() {
    SplittableRandom rng = new SplittableRandom(23);
    List<String> members = Seeded.members(rng, 9);
    TargetKey key = TargetKey.excludingLabels("instance", "__param_signature");
    List<Ownership> views = new ArrayList<>();
    for (String m : members) {
      views.add(Ownership.builder(m).key(key).build(members));
    }
    Ownership identity = Ownership.of(members.get(0), members);
    int differUnderIdentity = 0;
    for (Target t : Seeded.targets(rng, 500)) {
      Target a = withInstance(t, "host-a");
      Target b = withInstance(t, "host-b");
      Map<String, String> signed = new TreeMap<>(b.labels());
      signed.put("__param_signature", Long.toHexString(rng.nextLong()));
      Target c = Target.of(t.job(), t.address(), signed);
      for (Ownership view : views) {
        assertEquals(view.keyOf(a), view.keyOf(b));
        assertEquals(view.keyOf(a), view.keyOf(c));
        assertEquals(view.ownerOf(a), view.ownerOf(b));
        assertEquals(view.ownerOf(a), view.ownerOf(c));
      }
      differUnderIdentity += identity.ownerOf(a).equals(identity.ownerOf(b)) ? 0 : 1;
    }
    assertTrue(differUnderIdentity > 100, "the labels did not matter: " + differUnderIdentity);
  }

  @Test
  void describeNamesTheConfiguration() {
    assertEquals("identity", TargetKey.identity().describe());
    assertEquals("onlyLabels[\"a\",\"b\"]", TargetKey.onlyLabels("b", "a", "b").describe());
    assertEquals("excludingLabels[\"instance\"]",
        TargetKey.excludingLabels("instance").describe());
    assertEquals("onlyLabels[\"a\\\"b\",\"c\\\\\"]",
        TargetKey.onlyLabels("a\"b", "c\\").describe());
    assertEquals(TargetKey.onlyLabels("b", "a"), TargetKey.onlyLabels("a", "b"));
    assertEquals(TargetKey.onlyLabels("b", "a").hashCode(),
        TargetKey.onlyLabels("a", "b").hashCode());
    assertNotEquals(TargetKey.onlyLabels("a"), TargetKey.excludingLabels("a"));
    assertEquals(List.of("a", "b"), TargetKey.onlyLabels("b", "a").labelNames());
    assertEquals(TargetKey.onlyLabels("x").describe(), TargetKey.onlyLabels("x").toString());
  }

  @Test
  void invalidNamesAreRejected() {
    assertThrows(IllegalArgumentException.class, TargetKey::onlyLabels);
    assertThrows(IllegalArgumentException.class, () -> TargetKey.onlyLabels("a", ""));
    assertThrows(IllegalArgumentException.class, () -> TargetKey.excludingLabels(""));
    assertThrows(NullPointerException.class, () -> TargetKey.onlyLabels("a", null));
    assertThrows(NullPointerException.class, () -> TargetKey.excludingLabels((String[]) null));
    assertThrows(NullPointerException.class, () -> TargetKey.identity().keyOf(null));
  }

  private static Target withInstance(Target t, String instance) {
    Map<String, String> labels = new TreeMap<>(t.labels());
    labels.put("instance", instance);
    return Target.of(t.job(), t.address(), labels);
  }

  /** The onlyLabels encoding, written out again: byte 2, then LEB128-length-prefixed UTF-8. */
  private static long encoded(String... namesAndValues) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(2);
    for (String s : namesAndValues) {
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      List<Integer> varint = new ArrayList<>();
      int n = b.length;
      do {
        int low = n % 128;
        n /= 128;
        varint.add(n > 0 ? low + 128 : low);
      } while (n > 0);
      varint.forEach(out::write);
      out.write(b, 0, b.length);
    }
    return Hashing.farmHashFingerprint64().hashBytes(out.toByteArray()).asLong();
  }
}
