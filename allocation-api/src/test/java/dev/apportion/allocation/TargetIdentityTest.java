package dev.apportion.allocation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.identity.XxHash64;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Identity (equals, hashCode, hash, sameLabels) of {@link Target}, and the hash's stability. */
class TargetIdentityTest {
  private static final String POD_NODE = "__meta_kubernetes_pod_node_name";

  private static Target base() {
    return Target.of("kubernetes-pods", "10.0.0.1:8080",
        Map.of("namespace", "default", "pod", "api-7d9f", POD_NODE, "node-1",
            "__meta_kubernetes_pod_ready", "true"));
  }

  private static void assertSameIdentity(Target a, Target b) {
    assertEquals(a, b);
    assertEquals(b, a);
    assertEquals(a.hash(), b.hash());
    assertEquals(a.hashCode(), b.hashCode());
  }

  private static void assertDifferentIdentity(Target a, Target b) {
    assertNotEquals(a, b);
    assertNotEquals(b, a);
    assertNotEquals(a.hash(), b.hash(), a + " vs " + b);
    assertFalse(a.sameLabels(b));
    assertFalse(b.sameLabels(a));
  }

  // ---- __meta_* labels are not identity -----------------------------------------------------

  @Test
  void targetsDifferingOnlyInMetaLabelsAreEqual() {
    Target a = base();
    Target b = Target.of("kubernetes-pods", "10.0.0.1:8080",
        Map.of("namespace", "default", "pod", "api-7d9f", POD_NODE, "node-2",
            "__meta_kubernetes_pod_ready", "false", "__meta_kubernetes_pod_annotation_x", "y"));
    assertSameIdentity(a, b);
    assertFalse(a.sameLabels(b));
    assertFalse(b.sameLabels(a));
    assertNotEquals(a.node(), b.node(), "equal targets may still carry different metadata");
  }

  @Test
  void metaLabelsVersusNoMetaLabelsAreEqual() {
    Target without = Target.of("kubernetes-pods", "10.0.0.1:8080",
        Map.of("namespace", "default", "pod", "api-7d9f"));
    assertSameIdentity(base(), without);
    assertFalse(base().sameLabels(without));
  }

  @Test
  void sameLabelsIsTrueForItselfAndForAnIdenticalCopy() {
    Target a = base();
    assertTrue(a.sameLabels(a));
    assertTrue(a.sameLabels(base()));
    assertTrue(base().sameLabels(a));
  }

  @Test
  void sameLabelsIsFalseForUnequalTargetsWithTheSameLabels() {
    Map<String, String> labels = Map.of("pod", "p");
    assertFalse(Target.of("a", "x:1", labels).sameLabels(Target.of("b", "x:1", labels)));
    assertFalse(Target.of("a", "x:1", labels).sameLabels(Target.of("a", "x:2", labels)));
  }

  @Test
  void setsCollapseTargetsThatDifferOnlyInMetaLabels() {
    Set<Target> set = new HashSet<>(List.of(
        base(),
        Target.of("kubernetes-pods", "10.0.0.1:8080",
            Map.of("namespace", "default", "pod", "api-7d9f", POD_NODE, "node-9"))));
    assertEquals(1, set.size());
  }

  @Test
  void onlyTheExactMetaPrefixMarksMetadata() {
    Target plain = Target.of("job", "a:1");
    // "__meta_" itself and anything under it: metadata
    assertSameIdentity(plain, Target.of("job", "a:1", Map.of("__meta_", "x")));
    assertSameIdentity(plain, Target.of("job", "a:1", Map.of("__meta_anything", "x")));
    // near misses are identity labels
    for (String name : List.of("__meta", "__metadata", "_meta_x", "__META_x", "meta_x",
        " __meta_x")) {
      assertDifferentIdentity(plain, Target.of("job", "a:1", Map.of(name, "x")));
    }
    assertDifferentIdentity(plain, Target.of("job", "a:1", Map.of("__address__", "a:1")));
  }

  // ---- everything else is identity ----------------------------------------------------------

  @Test
  void differentJobAddressOrIdentityLabelMeansDifferentTargets() {
    Target a = base();
    Map<String, String> labels = new TreeMap<>(a.labels());
    assertDifferentIdentity(a, Target.of("other-job", "10.0.0.1:8080", labels));
    assertDifferentIdentity(a, Target.of("kubernetes-pods", "10.0.0.2:8080", labels));
    assertDifferentIdentity(a, Target.of("kubernetes-pods", "10.0.0.1:8081", labels));

    Map<String, String> otherValue = new TreeMap<>(labels);
    otherValue.put("pod", "api-xxxx");
    assertDifferentIdentity(a, Target.of("kubernetes-pods", "10.0.0.1:8080", otherValue));

    Map<String, String> renamed = new TreeMap<>(labels);
    renamed.put("pod_name", renamed.remove("pod"));
    assertDifferentIdentity(a, Target.of("kubernetes-pods", "10.0.0.1:8080", renamed));

    Map<String, String> extra = new TreeMap<>(labels);
    extra.put("team", "obs");
    assertDifferentIdentity(a, Target.of("kubernetes-pods", "10.0.0.1:8080", extra));

    Map<String, String> fewer = new TreeMap<>(labels);
    fewer.remove("namespace");
    assertDifferentIdentity(a, Target.of("kubernetes-pods", "10.0.0.1:8080", fewer));

    Map<String, String> emptyValue = new TreeMap<>(labels);
    emptyValue.put("team", "");
    assertDifferentIdentity(a, Target.of("kubernetes-pods", "10.0.0.1:8080", emptyValue));
  }

  @Test
  void identityIsCaseSensitive() {
    assertDifferentIdentity(Target.of("job", "host:1"), Target.of("Job", "host:1"));
    assertDifferentIdentity(Target.of("job", "host:1"), Target.of("job", "HOST:1"));
  }

  @Test
  void sameUrlAndJobWithDifferentLabelsAreTwoTargets() {
    Target a = Target.of("blackbox", "https://example.com/health", Map.of("module", "http_2xx"));
    Target b = Target.of("blackbox", "https://example.com/health", Map.of("module", "tcp"));
    assertDifferentIdentity(a, b);
    assertEquals(2, new HashSet<>(List.of(a, b)).size());
  }

  @Test
  void labelInsertionOrderDoesNotMatter() {
    Map<String, String> forward = new LinkedHashMap<>();
    forward.put("a", "1");
    forward.put("b", "2");
    forward.put(POD_NODE, "n");
    forward.put("c", "3");
    Map<String, String> backward = new LinkedHashMap<>();
    backward.put("c", "3");
    backward.put(POD_NODE, "n");
    backward.put("b", "2");
    backward.put("a", "1");
    Target f = Target.of("job", "a:1", forward);
    Target b = Target.of("job", "a:1", backward);
    assertSameIdentity(f, b);
    assertTrue(f.sameLabels(b));
    assertEquals(f.toString(), b.toString());
    assertEquals(f.labels(), b.labels());
  }

  @Test
  void notEqualToOtherTypes() {
    Target t = Target.of("job", "a:1");
    assertFalse(t.equals(null));
    assertFalse(t.equals((Object) "job/a:1"));
    assertEquals(t, t);
  }

  // ---- the encoding is unambiguous ----------------------------------------------------------

  static Stream<Arguments> lookalikes() {
    return Stream.of(
        Arguments.of(Target.of("ab", "c"), Target.of("a", "bc")),
        Arguments.of(Target.of("j", "x", Map.of("a", "bc")), Target.of("j", "x", Map.of("ab", "c"))),
        Arguments.of(Target.of("j", "x", Map.of("a", "")), Target.of("j", "x\u0001a\u0000")),
        Arguments.of(Target.of("j", "x", Map.of("a", "b", "c", "d")),
            Target.of("j", "x", Map.of("a", "b\u0001c\u0001d"))),
        // (Rows with an empty label name went when empty names became an error.)
        Arguments.of(Target.of("j", "x", Map.of("a", "b", "c", "d")),
            Target.of("j", "x", Map.of("a", "bc", "_", "d"))),
        Arguments.of(Target.of("j", "x", Map.of("a", "")), Target.of("j", "x")),
        Arguments.of(Target.of("j/x", "y"), Target.of("j", "x/y")),
        Arguments.of(Target.of("j", "x", Map.of("a", "1")), Target.of("j", "x", Map.of("1", "a"))));
  }

  @ParameterizedTest
  @MethodSource("lookalikes")
  void lookalikeIdentitiesDiffer(Target a, Target b) {
    assertDifferentIdentity(a, b);
  }

  // ---- the hash follows the documented encoding ---------------------------------------------

  /**
   * The encoding documented on {@link Target}, written again here from the documentation: version
   * byte 1, then job, address and each identity label's name and value in name order, each as its
   * UTF-8 length in unsigned LEB128 followed by its UTF-8 bytes.
   */
  private static long documentedHash(String job, String address, Map<String, String> labels) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(1);
    writeString(out, job);
    writeString(out, address);
    for (Map.Entry<String, String> e : new TreeMap<>(labels).entrySet()) {
      if (!e.getKey().startsWith("__meta_")) {
        writeString(out, e.getKey());
        writeString(out, e.getValue());
      }
    }
    byte[] bytes = out.toByteArray();
    return XxHash64.hash(bytes, bytes.length);
  }

  private static void writeString(ByteArrayOutputStream out, String s) {
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    long n = utf8.length;
    do {
      int b = (int) (n & 0x7F);
      n >>>= 7;
      out.write(n == 0 ? b : b | 0x80);
    } while (n != 0);
    out.writeBytes(utf8);
  }

  static Stream<Arguments> encodingCases() {
    return Stream.of(
        Arguments.of("j", "x", Map.of()),
        Arguments.of("kubernetes-pods", "10.0.0.1:8080",
            Map.of("pod", "api", "namespace", "default", POD_NODE, "node-1")),
        // non-ASCII: lengths are UTF-8 byte counts, not char counts
        Arguments.of("j\u00f6b", "h\u00f6st:1", Map.of("\u2603", "\uD83D\uDE00", "z", "\u00e9")),
        // 127, 128 and 16384 bytes: the LEB128 length grows to 2 then 3 bytes
        Arguments.of("j".repeat(127), "a".repeat(128), Map.of("l".repeat(16384), "v".repeat(300))));
  }

  @ParameterizedTest
  @MethodSource("encodingCases")
  void hashIsXxh64OfTheDocumentedEncoding(String job, String address, Map<String, String> labels) {
    assertEquals(documentedHash(job, address, labels), Target.of(job, address, labels).hash());
  }

  @Test
  void hashCodeIsDerivedFromHash() {
    for (Target t : List.of(base(), Target.of("j", "x"), Target.of("ab", "c"))) {
      long h = t.hash();
      assertEquals((int) (h ^ (h >>> 32)), t.hashCode());
    }
  }

  // ---- golden values: stability across releases -------------------------------------------

  /*
   * Target.hash() is documented as stable across releases and JVMs: allocator replicas (and
   * collectors deciding ownership locally) agree on placement only because they compute the same
   * number for the same target. These constants were computed once by running this code, and
   * agree with an independent implementation of the documented encoding and of XXH64 written from
   * its specification. They must never change: if one of these assertions fails, the change
   * breaks placement compatibility with every earlier release and must be reverted, not
   * "fixed" by updating the constant.
   */

  @Test
  void goldenHashOfTargetWithoutLabels() {
    assertEquals(0x28d1a472c98e8e38L, Target.of("kubernetes-pods", "10.0.0.1:8080").hash());
  }

  @Test
  void goldenHashOfTargetWithIdentityAndMetaLabels() {
    Target t = Target.of("kubernetes-pods", "10.0.0.1:8080",
        Map.of("namespace", "default", "pod", "api-7d9f", POD_NODE, "node-1"));
    assertEquals(0xc01a978230a186f0L, t.hash());
    assertEquals(Optional.of("node-1"), t.node());
  }

  @Test
  void goldenHashOfTargetWithNonAsciiLabels() {
    Target t = Target.of("node-exporter", "http://node-1.example.com:9100/metrics",
        Map.of("instance", "n\u00f6de-1 \u2603", "zone", "eu-west-1a"));
    assertEquals(0x1b11994caf6e8e8eL, t.hash());
  }

  @Test
  void goldenHashOfTargetWithLongStrings() {
    // lengths 130, 200, 300 and 128: two-byte LEB128 lengths
    Target t = Target.of("j".repeat(130), "a".repeat(200), Map.of("l".repeat(300), "v".repeat(128)));
    assertEquals(0x79b4b0a5d6e26325L, t.hash());
  }
}
