package dev.apportion.allocation.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@code least-weighted} against the plain rule it implements, written the slow, obvious way: each
 * new or orphaned target, in identity-hash order, goes to the collector with the fewest targets,
 * then the fewest of its job, then the smaller name. Random histories of target and collector
 * changes, with few and many jobs, must give exactly the model's assignment after every call.
 */
class LeastWeightedModelTest {

  /** The rule, with a scan of every collector per placement. */
  private static final class Model {
    final TreeMap<String, Map<Target, Boolean>> held = new TreeMap<>();
    final Map<Target, String> owner = new HashMap<>();
    final List<Target> known = new ArrayList<>();

    void place(List<Target> targets) {
      targets.sort((a, b) -> Long.compareUnsigned(a.hash(), b.hash()));
      for (Target t : targets) {
        String best = null;
        int bestLoad = 0;
        int bestJob = 0;
        for (Map.Entry<String, Map<Target, Boolean>> e : held.entrySet()) {
          int load = e.getValue().size();
          int job = (int) e.getValue().keySet().stream().filter(x -> x.job().equals(t.job()))
              .count();
          if (best == null || load < bestLoad || (load == bestLoad && job < bestJob)) {
            best = e.getKey();
            bestLoad = load;
            bestJob = job;
          }
        }
        held.get(best).put(t, true);
        owner.put(t, best);
      }
    }

    void setCollectors(Set<String> names) {
      if (names.isEmpty()) {
        return;
      }
      boolean first = held.isEmpty();
      List<Target> orphans = new ArrayList<>();
      for (String gone : new ArrayList<>(held.keySet())) {
        if (!names.contains(gone)) {
          for (Target t : held.remove(gone).keySet()) {
            owner.remove(t);
            orphans.add(t);
          }
        }
      }
      for (String n : names) {
        held.putIfAbsent(n, new HashMap<>());
      }
      place(first ? new ArrayList<>(known) : orphans);
    }

    void setTargets(List<Target> targets) {
      List<Target> added = new ArrayList<>();
      for (Target t : targets) {
        if (!known.contains(t)) {
          added.add(t);
        }
      }
      for (Target t : known) {
        if (!targets.contains(t)) {
          String o = owner.remove(t);
          if (o != null) {
            held.get(o).remove(t);
          }
        }
      }
      known.clear();
      known.addAll(targets);
      if (!held.isEmpty()) {
        place(added);
      }
    }
  }

  @Test
  void randomHistoriesMatchTheModel() {
    for (int jobs : new int[] {1, 3, 40}) {
      for (long seed = 1; seed <= 25; seed++) {
        Random random = new Random(seed * 31 + jobs);
        Allocator a = Allocators.builder("least-weighted").build();
        Model model = new Model();
        TreeMap<Integer, Target> pool = new TreeMap<>();
        for (int op = 0; op < 40; op++) {
          if (random.nextInt(3) == 0) {
            TreeSet<String> names = new TreeSet<>();
            int n = random.nextInt(7);
            for (int i = 0; i < n; i++) {
              names.add("c-" + random.nextInt(12));
            }
            List<Collector> collectors = new ArrayList<>();
            names.forEach(name -> collectors.add(Collector.of(name)));
            a.setCollectors(collectors);
            model.setCollectors(names);
          } else {
            int changes = random.nextInt(60);
            for (int i = 0; i < changes; i++) {
              int id = random.nextInt(150);
              if (random.nextInt(4) == 0) {
                pool.remove(id);
              } else {
                pool.put(id, Target.of("job-" + random.nextInt(jobs), "10.0.0." + id + ":80"));
              }
            }
            List<Target> targets = new ArrayList<>(pool.values());
            a.setTargets(targets);
            model.setTargets(new ArrayList<>(targets));
          }
          for (Target t : model.known) {
            assertEquals(Optional.ofNullable(model.owner.get(t)), a.snapshot().collectorOf(t),
                "jobs " + jobs + ", seed " + seed + ", op " + op + ": " + t);
          }
        }
      }
    }
  }
}
