package dev.apportion.allocation.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;

/** One collector's entry of a snapshot: its runs by job in one array, and their list views. */
class JobListsTest {
  private static final Collector C = Collector.of("c-0", "node-0");

  private static Target t(String job, int i) {
    return Target.of(job, "10.0.0." + i + ":80", Map.of());
  }

  /** Runs of 2, 1 and 3 targets for jobs a, b and c, each run in identity-hash order. */
  private static JobLists sample(List<List<Target>> runs) {
    String[] jobs = {"a", "b", "c"};
    int[] sizes = {2, 1, 3};
    List<Target> all = new ArrayList<>();
    int[] ends = new int[jobs.length];
    for (int j = 0; j < jobs.length; j++) {
      List<Target> run = new ArrayList<>();
      for (int i = 0; i < sizes[j]; i++) {
        run.add(t(jobs[j], 10 * j + i));
      }
      run.sort(TargetOrder.HASH);
      runs.add(run);
      all.addAll(run);
      ends[j] = all.size();
    }
    return JobLists.of(C, jobs, ends, all.toArray(new Target[0]));
  }

  @Test
  void eachJobReadsItsOwnRunInOrder() {
    List<List<Target>> runs = new ArrayList<>();
    JobLists e = sample(runs);
    assertEquals(6, e.count);
    assertEquals(List.of("a", "b", "c"), List.copyOf(e.jobs()));
    assertEquals(runs.get(0), e.targets("a"));
    assertEquals(runs.get(1), e.targets("b"));
    assertEquals(runs.get(2), e.targets("c"));
    assertEquals(List.of(), e.targets("b0"));
    assertEquals(List.of(), e.targets(""));
    assertEquals(3, e.jobCount());
    assertEquals(2, e.start(1));
    assertEquals(3, e.end(1));
    assertEquals(0, e.start(0));
  }

  @Test
  void aRunIsReadThroughOneViewMadeOnItsFirstRead() {
    JobLists e = sample(new ArrayList<>());
    List<Target> first = e.targets("c");
    assertSame(first, e.targets("c"), "a second read returns the view the first made");
    assertNotSame(first, e.targets("a"));
    // Another collector value shares the array but not the views (they are made again).
    JobLists moved = e.withCollector(Collector.of("c-0", "node-1"));
    assertEquals(first, moved.targets("c"));
    assertSame(e.all(), moved.all());
    assertSame(e.jobs(), moved.jobs(), "the names' set is shared");
  }

  @Test
  void aViewIsAnUnmodifiableRandomAccessList() {
    List<List<Target>> runs = new ArrayList<>();
    JobLists e = sample(runs);
    List<Target> v = e.targets("c");
    List<Target> want = runs.get(2);
    assertEquals(want.hashCode(), v.hashCode());
    assertEquals(v, want);
    assertEquals(want, v);
    assertTrue(v instanceof java.util.RandomAccess);
    assertEquals(3, v.size());
    for (int i = 0; i < 3; i++) {
      assertSame(want.get(i), v.get(i));
    }
    assertThrows(IndexOutOfBoundsException.class, () -> v.get(3));
    assertThrows(IndexOutOfBoundsException.class, () -> v.get(-1));
    assertArrayEquals(want.toArray(), v.toArray());
    assertArrayEquals(want.toArray(new Target[0]), v.toArray(new Target[0]));
    List<Target> seen = new ArrayList<>();
    v.forEach(seen::add);
    assertEquals(want, seen);
    Iterator<Target> it = v.iterator();
    for (int i = 0; i < 3; i++) {
      assertSame(want.get(i), it.next());
    }
    assertThrows(NoSuchElementException.class, it::next);
    assertEquals(want.subList(1, 3), v.subList(1, 3));
    assertTrue(v.contains(want.get(1)));
    assertEquals(2, v.indexOf(want.get(2)));
    Target other = t("c", 99);
    assertThrows(UnsupportedOperationException.class, () -> v.add(other));
    assertThrows(UnsupportedOperationException.class, () -> v.set(0, other));
    assertThrows(UnsupportedOperationException.class, () -> v.remove(0));
    assertThrows(UnsupportedOperationException.class, v::clear);
    assertThrows(UnsupportedOperationException.class, () -> v.subList(0, 1).clear());
    assertThrows(UnsupportedOperationException.class, () -> v.sort(TargetOrder.HASH.reversed()));
    assertEquals(want, e.targets("c"), "nothing changed the run");
  }

  @Test
  void newTargetsForTheSameJobsShareTheNames() {
    List<List<Target>> runs = new ArrayList<>();
    JobLists e = sample(runs);
    Target[] fewer = {runs.get(0).get(0), runs.get(1).get(0), runs.get(2).get(0)};
    JobLists next = e.withTargets(new int[] {1, 2, 3}, fewer);
    assertSame(e.jobs(), next.jobs());
    assertEquals(3, next.count);
    assertEquals(List.of(runs.get(0).get(0)), next.targets("a"));
    assertEquals(List.of(runs.get(2).get(0)), next.targets("c"));
    assertEquals(runs.get(0), e.targets("a"), "the old entry is unchanged");
  }

  @Test
  void anEmptyEntryHoldsNothing() {
    JobLists e = JobLists.empty(C);
    assertEquals(0, e.count);
    assertEquals(0, e.jobCount());
    assertTrue(e.jobs().isEmpty());
    assertEquals(List.of(), e.targets("a"));
    assertEquals(0, e.all().length);
  }
}
