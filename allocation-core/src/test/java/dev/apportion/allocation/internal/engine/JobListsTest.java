package dev.apportion.allocation.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.collect.ImmutableList;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One collector's entry of a snapshot: a list per job, and the edit a change makes of it. */
class JobListsTest {
  private static final Collector C = Collector.of("c-0", "node-0");

  private static ImmutableList<Target> run(String job, int n) {
    List<Target> run = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      run.add(Target.of(job, "10.0." + job.length() + "." + i + ":80", Map.of()));
    }
    run.sort(TargetOrder.HASH);
    return ImmutableList.copyOf(run);
  }

  @SuppressWarnings("unchecked")
  private static ImmutableList<Target>[] lists(ImmutableList<?>... lists) {
    return (ImmutableList<Target>[]) lists;
  }

  @Test
  void eachJobReadsItsOwnListAndTheUnknownReadEmpty() {
    ImmutableList<Target> a = run("a", 2);
    ImmutableList<Target> c = run("ccc", 3);
    JobLists e = JobLists.of(C, new String[] {"a", "ccc"}, lists(a, c), 5);
    assertEquals(5, e.count);
    assertEquals(List.of("a", "ccc"), List.copyOf(e.jobs()));
    assertSame(a, e.targets("a"), "a read returns the list itself: no copy, no allocation");
    assertSame(c, e.targets("ccc"));
    assertEquals(List.of(), e.targets("b"));
    assertTrue(e.jobs().contains("ccc"));
    assertTrue(!e.jobs().contains("b"));
  }

  @Test
  void aChangeReplacesItsJobsListsDropsTheEmptiedAndAddsTheNew() {
    ImmutableList<Target> a = run("a", 2);
    ImmutableList<Target> bb = run("bb", 1);
    ImmutableList<Target> ccc = run("ccc", 3);
    JobLists e = JobLists.of(C, new String[] {"a", "bb", "ccc"}, lists(a, bb, ccc), 6);
    // "a" emptied, "ab" new, "ccc" with one target less; "bb" untouched.
    ImmutableList<Target> ab = run("ab", 4);
    ImmutableList<Target> fewer = ccc.subList(0, 2);
    JobLists next = e.with(new String[] {"a", "ab", "ccc"}, lists(ImmutableList.of(), ab, fewer),
        3);
    assertEquals(List.of("ab", "bb", "ccc"), List.copyOf(next.jobs()));
    assertEquals(7, next.count, "4 + 1 + 2");
    assertSame(bb, next.targets("bb"), "an untouched list is shared");
    assertSame(ab, next.targets("ab"));
    assertEquals(fewer, next.targets("ccc"));
    assertEquals(List.of(), next.targets("a"));
    // The last entry is unchanged.
    assertEquals(6, e.count);
    assertSame(a, e.targets("a"));
    assertEquals(List.of("a", "bb", "ccc"), List.copyOf(e.jobs()));
  }

  @Test
  void anEmptyEntryHoldsNothing() {
    JobLists e = JobLists.empty(C);
    assertEquals(0, e.count);
    assertTrue(e.jobs().isEmpty());
    assertEquals(List.of(), e.targets("a"));
    JobLists one = e.with(new String[] {"a"}, lists(run("a", 1)), 1);
    assertEquals(1, one.count);
    assertEquals(List.of("a"), List.copyOf(one.jobs()));
  }
}
