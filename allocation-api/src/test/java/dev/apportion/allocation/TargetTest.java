package dev.apportion.allocation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.AbstractMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Construction rules, labels, node resolution and toString of {@link Target}. */
class TargetTest {
  private static final String POD_NODE = "__meta_kubernetes_pod_node_name";
  private static final String NODE_NAME = "__meta_kubernetes_node_name";
  private static final String ENDPOINT_NODE = "__meta_kubernetes_endpoint_node_name";
  private static final String SLICE_KIND = "__meta_kubernetes_endpointslice_address_target_kind";
  private static final String SLICE_NAME = "__meta_kubernetes_endpointslice_address_target_name";

  // ---- bad input ----------------------------------------------------------------------------

  @Test
  void nullJobIsRejectedNamingTheJob() {
    NullPointerException e =
        assertThrows(NullPointerException.class, () -> Target.of(null, "a:1", Map.of()));
    assertTrue(e.getMessage().contains("job"), e.getMessage());
    assertFalse(e.getMessage().contains("address"), e.getMessage());

    NullPointerException noLabels =
        assertThrows(NullPointerException.class, () -> Target.of(null, "a:1"));
    assertTrue(noLabels.getMessage().contains("job"), noLabels.getMessage());
  }

  @Test
  void nullAddressIsRejectedNamingTheAddress() {
    NullPointerException e =
        assertThrows(NullPointerException.class, () -> Target.of("job", null, Map.of()));
    assertTrue(e.getMessage().contains("address"), e.getMessage());
    assertFalse(e.getMessage().contains("job"), e.getMessage());

    NullPointerException noLabels =
        assertThrows(NullPointerException.class, () -> Target.of("job", null));
    assertTrue(noLabels.getMessage().contains("address"), noLabels.getMessage());
  }

  @Test
  void nullLabelsAreRejectedNamingTheLabels() {
    NullPointerException e =
        assertThrows(NullPointerException.class, () -> Target.of("job", "a:1", null));
    assertTrue(e.getMessage().contains("labels"), e.getMessage());
  }

  @Test
  void nullLabelNameIsRejectedNamingTheLabelName() {
    Map<String, String> labels = new HashMap<>();
    labels.put("pod", "p");
    labels.put(null, "v");
    NullPointerException e =
        assertThrows(NullPointerException.class, () -> Target.of("job", "a:1", labels));
    assertTrue(e.getMessage().contains("label name"), e.getMessage());
  }

  @Test
  void nullLabelValueIsRejectedNamingTheLabel() {
    Map<String, String> labels = new HashMap<>();
    labels.put("namespace", "default");
    labels.put("pod", null);
    NullPointerException e =
        assertThrows(NullPointerException.class, () -> Target.of("job", "a:1", labels));
    assertTrue(e.getMessage().contains("'pod'"), e.getMessage());
    assertTrue(e.getMessage().contains("value"), e.getMessage());
  }

  @Test
  void nullMetaLabelValueIsRejectedToo() {
    Map<String, String> labels = new HashMap<>();
    labels.put(POD_NODE, null);
    NullPointerException e =
        assertThrows(NullPointerException.class, () -> Target.of("job", "a:1", labels));
    assertTrue(e.getMessage().contains(POD_NODE), e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "  ", "\t", "\r\n"})
  void blankJobIsRejectedNamingTheJob(String blank) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Target.of(blank, "a:1", Map.of()));
    assertTrue(e.getMessage().contains("job"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Target.of(blank, "a:1"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "  ", "\t", "\r\n"})
  void blankAddressIsRejectedNamingTheAddress(String blank) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Target.of("job", blank, Map.of()));
    assertTrue(e.getMessage().contains("address"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Target.of("job", blank));
  }

  @Test
  void emptyLabelValuesAreAllowedButAnEmptyNameIsRejected() {
    Target t = Target.of("job", "a:1", Map.of("x", "", "y", "1"));
    assertEquals(Map.of("x", "", "y", "1"), t.labels());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Target.of("job", "a:1", Map.of("", "v", "x", "")));
    assertTrue(e.getMessage().contains("label name must not be empty"), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> Target.of("job", "a:1", new java.util.TreeMap<>(Map.of("", ""))));
  }

  @Test
  void aBlankNodeLabelNamesNoNode() {
    assertEquals(Optional.empty(), Target.of("j", "a:1",
        Map.of("__meta_kubernetes_pod_node_name", "  ")).node());
    assertEquals(Optional.of("n2"), Target.of("j", "a:1",
        Map.of("__meta_kubernetes_pod_node_name", " ", "__meta_kubernetes_node_name", "n2"))
        .node());
  }

  // ---- accessors and labels -----------------------------------------------------------------

  @Test
  void accessors() {
    Target t = Target.of("kubernetes-pods", "10.0.0.1:8080", Map.of("pod", "api"));
    assertEquals("kubernetes-pods", t.job());
    assertEquals("10.0.0.1:8080", t.address());
    assertEquals(Map.of("pod", "api"), t.labels());
  }

  @Test
  void twoArgumentFactoryHasNoLabels() {
    Target t = Target.of("job", "a:1");
    assertTrue(t.labels().isEmpty());
    assertEquals(Optional.empty(), t.node());
    assertEquals(Target.of("job", "a:1", Map.of()), t);
    assertEquals(Target.of("job", "a:1", Map.of()).hash(), t.hash());
  }

  @Test
  void labelsIncludeMetaLabelsAndAreSortedByName() {
    Map<String, String> in = new LinkedHashMap<>();
    in.put("zone", "z");
    in.put("app", "a");
    in.put(POD_NODE, "node-1");
    in.put("Zeta", "upper");
    in.put("mid", "m");
    SortedMap<String, String> labels = Target.of("job", "a:1", in).labels();
    assertEquals(List.of("Zeta", POD_NODE, "app", "mid", "zone"), List.copyOf(labels.keySet()));
    assertEquals(List.of("upper", "node-1", "a", "m", "z"), List.copyOf(labels.values()));
    assertNull(labels.comparator(), "natural (String) order");
    assertEquals(in, labels);
  }

  @Test
  // JdkObsolete: Target.labels() returns a SortedMap (public API); that is what is tested.
  @SuppressWarnings("JdkObsolete")
  void labelsAreUnmodifiable() {
    Map<String, String> in = new HashMap<>();
    in.put("a", "1");
    in.put("b", "2");
    SortedMap<String, String> labels = Target.of("job", "a:1", in).labels();
    assertThrows(UnsupportedOperationException.class, () -> labels.put("c", "3"));
    assertThrows(UnsupportedOperationException.class, () -> labels.put("a", "changed"));
    assertThrows(UnsupportedOperationException.class, () -> labels.remove("a"));
    assertThrows(UnsupportedOperationException.class, labels::clear);
    assertThrows(UnsupportedOperationException.class, () -> labels.putAll(Map.of("d", "4")));
    assertThrows(UnsupportedOperationException.class, () -> labels.keySet().remove("a"));
    assertThrows(UnsupportedOperationException.class,
        () -> labels.entrySet().iterator().next().setValue("changed"));
    assertThrows(UnsupportedOperationException.class, () -> labels.headMap("b").put("0", "0"));
    assertThrows(UnsupportedOperationException.class, () -> labels.values().clear());
    assertEquals(Map.of("a", "1", "b", "2"), labels);
  }

  @Test
  void labelMapIsCopied() {
    Map<String, String> in = new HashMap<>();
    in.put("pod", "api");
    in.put(POD_NODE, "node-1");
    Target t = Target.of("job", "a:1", in);
    long hash = t.hash();
    Target twin = Target.of("job", "a:1", Map.of("pod", "api", POD_NODE, "node-1"));

    in.put("pod", "changed");
    in.put("extra", "x");
    in.put(POD_NODE, "node-2");
    in.remove("nothing");

    assertEquals(Map.of("pod", "api", POD_NODE, "node-1"), t.labels());
    assertEquals(Optional.of("node-1"), t.node());
    assertEquals(hash, t.hash());
    assertEquals(twin, t);
    assertTrue(twin.sameLabels(t));

    in.clear();
    assertEquals(2, t.labels().size());
  }

  @Test
  void acceptsAnyMapImplementation() {
    Map<String, String> custom = new AbstractMap<>() {
      @Override
      public java.util.Set<Map.Entry<String, String>> entrySet() {
        return java.util.Set.of(Map.entry("b", "2"), Map.entry("a", "1"));
      }
    };
    Target t = Target.of("job", "a:1", custom);
    assertEquals(List.of("a", "b"), List.copyOf(t.labels().keySet()));
    assertEquals(Target.of("job", "a:1", Map.of("a", "1", "b", "2")), t);
  }

  // ---- node ---------------------------------------------------------------------------------

  private static Optional<String> nodeOf(String... nameValuePairs) {
    Map<String, String> labels = new LinkedHashMap<>();
    for (int i = 0; i < nameValuePairs.length; i += 2) {
      labels.put(nameValuePairs[i], nameValuePairs[i + 1]);
    }
    return Target.of("job", "10.0.0.1:9100", labels).node();
  }

  @Test
  void noLabelsMeansNoNode() {
    assertEquals(Optional.empty(), Target.of("job", "a:1").node());
    assertEquals(Optional.empty(), nodeOf());
    assertEquals(Optional.empty(), nodeOf("pod", "p", "namespace", "default"));
  }

  @Test
  void eachNodeLabelAloneResolves() {
    assertEquals(Optional.of("n-pod"), nodeOf(POD_NODE, "n-pod"));
    assertEquals(Optional.of("n-node"), nodeOf(NODE_NAME, "n-node"));
    assertEquals(Optional.of("n-ep"), nodeOf(ENDPOINT_NODE, "n-ep"));
    assertEquals(Optional.of("n-slice"), nodeOf(SLICE_KIND, "Node", SLICE_NAME, "n-slice"));
  }

  @Test
  void podNodeNameWinsOverEverything() {
    assertEquals(Optional.of("n-pod"), nodeOf(
        SLICE_KIND, "Node", SLICE_NAME, "n-slice",
        ENDPOINT_NODE, "n-ep",
        NODE_NAME, "n-node",
        POD_NODE, "n-pod"));
  }

  @Test
  void nodeNameWinsOverEndpointAndSlice() {
    assertEquals(Optional.of("n-node"), nodeOf(
        SLICE_KIND, "Node", SLICE_NAME, "n-slice", ENDPOINT_NODE, "n-ep", NODE_NAME, "n-node"));
  }

  @Test
  void endpointNodeNameWinsOverSlice() {
    assertEquals(Optional.of("n-ep"), nodeOf(
        SLICE_KIND, "Node", SLICE_NAME, "n-slice", ENDPOINT_NODE, "n-ep"));
  }

  @Test
  void emptyValuesAreSkipped() {
    assertEquals(Optional.of("n-node"), nodeOf(POD_NODE, "", NODE_NAME, "n-node"));
    assertEquals(Optional.of("n-ep"), nodeOf(POD_NODE, "", NODE_NAME, "", ENDPOINT_NODE, "n-ep"));
    assertEquals(Optional.of("n-slice"), nodeOf(
        POD_NODE, "", NODE_NAME, "", ENDPOINT_NODE, "", SLICE_KIND, "Node", SLICE_NAME, "n-slice"));
    assertEquals(Optional.empty(), nodeOf(
        POD_NODE, "", NODE_NAME, "", ENDPOINT_NODE, "", SLICE_KIND, "Node", SLICE_NAME, ""));
  }

  @Test
  void sliceNameCountsOnlyWhenTheKindIsNode() {
    assertEquals(Optional.empty(), nodeOf(SLICE_KIND, "Pod", SLICE_NAME, "api-7d9f"));
    assertEquals(Optional.empty(), nodeOf(SLICE_KIND, "node", SLICE_NAME, "n1"));
    assertEquals(Optional.empty(), nodeOf(SLICE_KIND, "Node ", SLICE_NAME, "n1"));
    assertEquals(Optional.empty(), nodeOf(SLICE_KIND, "", SLICE_NAME, "n1"));
    assertEquals(Optional.empty(), nodeOf(SLICE_NAME, "n1"));
    assertEquals(Optional.empty(), nodeOf(SLICE_KIND, "Node"));
  }

  @Test
  void lookalikeLabelsAreNotNodeLabels() {
    assertEquals(Optional.empty(), nodeOf("node", "n1"));
    assertEquals(Optional.empty(), nodeOf("kubernetes_pod_node_name", "n1"));
    assertEquals(Optional.empty(), nodeOf("__meta_kubernetes_pod_node_name_x", "n1"));
    assertEquals(Optional.empty(), nodeOf("__META_KUBERNETES_POD_NODE_NAME", "n1"));
  }

  private static final String EP_KIND = "__meta_kubernetes_endpoint_address_target_kind";
  private static final String EP_NAME = "__meta_kubernetes_endpoint_address_target_name";
  private static final String SLICE_EP_NODE = "__meta_kubernetes_endpointslice_endpoint_node_name";
  private static final String SLICE_ZONE = "__meta_kubernetes_endpointslice_endpoint_zone";
  private static final String NODE_ZONE = "__meta_kubernetes_node_label_topology_kubernetes_io_zone";

  @Test
  void theEndpointsRolesNodeTargetResolvesOnlyWhenTheKindIsNode() {
    assertEquals(Optional.of("n-ept"), nodeOf(EP_KIND, "Node", EP_NAME, "n-ept"));
    assertEquals(Optional.empty(), nodeOf(EP_KIND, "Pod", EP_NAME, "api-7d9f"));
    assertEquals(Optional.empty(), nodeOf(EP_KIND, "Node", EP_NAME, " "));
    assertEquals(Optional.empty(), nodeOf(EP_NAME, "n-ept"));
  }

  @Test
  void theEndpointSlicesEndpointNodeNameResolves() {
    assertEquals(Optional.of("n-sen"), nodeOf(SLICE_EP_NODE, "n-sen"));
    assertEquals(Optional.empty(), nodeOf(SLICE_EP_NODE, ""));
  }

  @Test
  void theNewFormsComeAfterTheExistingOnesInThatOrder() {
    assertEquals(Optional.of("n-slice"), nodeOf(SLICE_EP_NODE, "n-sen", EP_KIND, "Node",
        EP_NAME, "n-ept", SLICE_KIND, "Node", SLICE_NAME, "n-slice"));
    assertEquals(Optional.of("n-ep"), nodeOf(SLICE_EP_NODE, "n-sen", EP_KIND, "Node",
        EP_NAME, "n-ept", ENDPOINT_NODE, "n-ep"));
    assertEquals(Optional.of("n-ept"), nodeOf(SLICE_EP_NODE, "n-sen", EP_KIND, "Node",
        EP_NAME, "n-ept"));
    assertEquals(Optional.of("n-sen"), nodeOf(SLICE_EP_NODE, "n-sen", EP_KIND, "Pod",
        EP_NAME, "api-1"));
  }

  private static Optional<String> zoneOf(String... nameValuePairs) {
    Map<String, String> labels = new HashMap<>();
    for (int i = 0; i < nameValuePairs.length; i += 2) {
      labels.put(nameValuePairs[i], nameValuePairs[i + 1]);
    }
    return Target.of("job", "10.0.0.1:9100", labels).zone();
  }

  @Test
  void zoneResolvesFromTheSliceEndpointThenTheNodeLabel() {
    assertEquals(Optional.empty(), zoneOf());
    assertEquals(Optional.of("z-slice"), zoneOf(SLICE_ZONE, "z-slice"));
    assertEquals(Optional.of("z-node"), zoneOf(NODE_ZONE, "z-node"));
    assertEquals(Optional.of("z-slice"), zoneOf(SLICE_ZONE, "z-slice", NODE_ZONE, "z-node"));
    assertEquals(Optional.of("z-node"), zoneOf(SLICE_ZONE, " ", NODE_ZONE, "z-node"));
    assertEquals(Optional.empty(), zoneOf("zone", "z", "topology_kubernetes_io_zone", "z"));
  }

  @Test
  void theZoneIsMetadataNotIdentity() {
    Target a = Target.of("job", "a:1", Map.of(SLICE_ZONE, "z1"));
    Target b = Target.of("job", "a:1", Map.of(SLICE_ZONE, "z2"));
    assertEquals(a, b);
    assertEquals(a.hash(), b.hash());
  }

  // ---- toString -----------------------------------------------------------------------------

  @Test
  void toStringShowsJobAddressAndIdentityLabelsOnly() {
    assertEquals("job/a:1", Target.of("job", "a:1").toString());
    assertEquals("job/a:1", Target.of("job", "a:1", Map.of(POD_NODE, "n")).toString());
    Map<String, String> in = new LinkedHashMap<>();
    in.put("pod", "api");
    in.put(POD_NODE, "n");
    in.put("namespace", "default");
    assertEquals("job/a:1{namespace=\"default\",pod=\"api\"}",
        Target.of("job", "a:1", in).toString());
  }

  @Test
  void aCostIsBetweenZeroAndTheMaximumAndIsNotIdentity() {
    Target t = Target.of("node", "10.0.0.1:9100");
    assertEquals(Target.DEFAULT_COST, t.cost());
    assertEquals(0, t.withCost(0).cost());
    assertEquals(Target.MAX_COST, t.withCost(Target.MAX_COST).cost());
    assertEquals(t, t.withCost(42));
    assertEquals(t.hash(), t.withCost(42).hash());
    IllegalArgumentException negative =
        assertThrows(IllegalArgumentException.class, () -> t.withCost(-1));
    assertTrue(negative.getMessage().contains("must not be negative"), negative.getMessage());
    IllegalArgumentException huge =
        assertThrows(IllegalArgumentException.class, () -> t.withCost(Target.MAX_COST + 1));
    assertTrue(huge.getMessage().contains("at most " + Target.MAX_COST), huge.getMessage());
  }

  /**
   * An {@code __address__} label other than the address given is rejected, naming both, whichever
   * way the target is built: from a map, from a map of a shape seen before, from another
   * target's labels, through an interner. One equal to the address is kept as a label.
   */
  @Test
  void anAddressLabelThatDisagreesWithTheAddressIsRejected() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Target.of("j", "a:1", Map.of("__address__", "b:2")));
    assertTrue(e.getMessage().contains("'a:1'") && e.getMessage().contains("'b:2'"),
        e.getMessage());

    Target agreeing = Target.of("j", "a:1", Map.of("__address__", "a:1", "pod", "p"));
    assertEquals("a:1", agreeing.labels().get("__address__"));
    assertThrows(IllegalArgumentException.class,
        () -> Target.of("j", "b:2", agreeing.labels()));

    Map<String, String> shaped = new LinkedHashMap<>();
    shaped.put("pod", "p");
    shaped.put("__address__", "a:1");
    assertEquals("a:1", Target.of("j", "a:1", shaped).address());
    Map<String, String> sameShape = new LinkedHashMap<>(shaped);
    sameShape.put("__address__", "c:3");
    e = assertThrows(IllegalArgumentException.class, () -> Target.of("j", "a:1", sameShape));
    assertTrue(e.getMessage().contains("'c:3'"), e.getMessage());

    TargetInterner interner = new TargetInterner();
    assertThrows(IllegalArgumentException.class,
        () -> interner.intern("j", "b:2", Map.of("__address__", "a:1")));
    assertEquals(0, interner.size());
    assertEquals(Target.of("j", "a:1", Map.of("__address__", "a:1")),
        interner.intern("j", "a:1", Map.of("__address__", "a:1")));
  }
}
