package dev.apportion.allocation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
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
          m.put(new String(n.toCharArray()), VALUES[random.nextInt(VALUES.length)]);
        }
        Target t = Target.of("job", "addr:" + k, m);
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
}
