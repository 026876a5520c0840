package dev.apportion.allocation.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The snapshot's target table against a model (a map sorted in {@link TargetOrder}), under random
 * changes of every size: additions, removals, owner changes and new instances of known targets
 * (a relabel stores the new instance), including changes much larger than the table (a
 * reshard) and shrinking to nothing.
 */
class TargetTableTest {

  private static Target target(int i, int labels) {
    return Target.of("job-" + (i % 3), "10.0." + (i / 250) + "." + (i % 250) + ":9100",
        Map.of("__meta_kubernetes_pod_label_rev", "r" + labels, "team", "t" + (i % 7)));
  }

  // REMOVE is a sentinel compared by identity, as the table does.
  @SuppressWarnings("ReferenceEquality")
  @ParameterizedTest
  @ValueSource(ints = {1, 5, 200, 5000})
  void randomChangesMatchASortedMap(int largestChange) {
    for (long seed = 1; seed <= 12; seed++) {
      Random random = new Random(seed);
      TargetTable table = TargetTable.EMPTY;
      TreeMap<Target, String> model = new TreeMap<>(TargetOrder.HASH);
      int universe = 4 * largestChange + 64;
      for (int op = 0; op < 60; op++) {
        int k = 1 + random.nextInt(largestChange);
        TreeMap<Target, String> change = new TreeMap<>(TargetOrder.HASH);
        for (int c = 0; c < k; c++) {
          Target t = target(random.nextInt(universe), random.nextInt(3));
          int what = random.nextInt(4);
          change.put(t, what == 0 ? TargetTable.REMOVE : what == 1 ? null : "c-" + what);
        }
        Target[] targets = change.keySet().toArray(new Target[0]);
        String[] owners = change.values().toArray(new String[0]);
        table = table.apply(targets, owners, targets.length);
        for (int c = 0; c < targets.length; c++) {
          if (owners[c] == TargetTable.REMOVE) {
            model.remove(targets[c]);
          } else {
            // The table keeps the instance it was last given: so does the model.
            model.remove(targets[c]);
            model.put(targets[c], owners[c]);
          }
        }
        String where = "seed " + seed + " op " + op;
        assertEquals(model.size(), table.size(), where);
        List<Target> inOrder = new ArrayList<>();
        table.forEach(inOrder::add);
        assertEquals(new ArrayList<>(model.keySet()), inOrder, where);
        for (Map.Entry<Target, String> e : model.entrySet()) {
          assertSame(e.getKey(), table.instance(e.getKey()), where);
          assertEquals(e.getValue(), table.owner(e.getKey()), where);
        }
        for (int c = 0; c < targets.length; c++) {
          if (owners[c] == TargetTable.REMOVE) {
            assertNull(table.instance(targets[c]), where);
          }
        }
      }
    }
  }
}
