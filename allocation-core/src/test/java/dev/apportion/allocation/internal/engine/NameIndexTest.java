package dev.apportion.allocation.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.apportion.allocation.Collector;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** {@link NameIndex}: every member found at its index, anything else not, collisions included. */
class NameIndexTest {

  private static Members members(List<String> names) {
    List<String> sorted = new ArrayList<>(new TreeSet<>(names));
    Member[] ms = new Member[sorted.size()];
    for (int i = 0; i < ms.length; i++) {
      ms[i] = new Member(Collector.of(sorted.get(i)), i);
      ms[i].index(i);
    }
    return new Members(ms);
  }

  @Test
  void findsEveryMemberAtItsIndexAndNothingElse() {
    for (int n : new int[] {0, 1, 2, 3, 7, 64, 1000}) {
      List<String> names = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        names.add("collector-" + i);
      }
      Members ms = members(names);
      NameIndex index = NameIndex.of(ms);
      for (int i = 0; i < ms.size(); i++) {
        // A new string equal to the name: found by equality, not identity.
        assertEquals(i, index.get(new String(ms.get(i).name())), ms.get(i).name());
      }
      assertEquals(-1, index.get("collector-" + n));
      assertEquals(-1, index.get("other"));
      assertEquals(-1, index.get(null));
      assertEquals(-1, index.get(""));
    }
  }

  @Test
  void namesWithTheSameHashAreTold() {
    // "Aa" and "BB" have the same String.hashCode, and so do all their concatenations.
    List<String> names = new ArrayList<>();
    for (String a : List.of("Aa", "BB")) {
      for (String b : List.of("Aa", "BB")) {
        for (String c : List.of("Aa", "BB")) {
          names.add(a + b + c);
        }
      }
    }
    Members ms = members(names.subList(0, 6));
    NameIndex index = NameIndex.of(ms);
    for (int i = 0; i < ms.size(); i++) {
      assertEquals(i, index.get(ms.get(i).name()));
    }
    // Same hash as every member, not a member.
    assertEquals(-1, index.get(names.get(6)));
    assertEquals(-1, index.get(names.get(7)));
  }
}
