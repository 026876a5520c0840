package dev.apportion.allocation.internal.partition;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.Members;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToIntFunction;

/**
 * The partitions' collectors: the members grouped by their {@link PartitionKey} value, and each
 * member's key value remembered while its collector object is the same and the key resolves as
 * it did ({@link PartitionKey#version()}), so a collector change looks up only the collectors that
 * came or changed. Writer-thread only.
 */
final class MemberPartitions {
  /** The members of one moment by partition. */
  static final class Grouping {
    private final Map<String, List<Member>> lists;
    private final int[] groupOf;

    Grouping(Map<String, List<Member>> lists, int[] groupOf) {
      this.lists = lists;
      this.groupOf = groupOf;
    }

    /** Each key value's members, in name order; key values in order. */
    Map<String, List<Member>> lists() {
      return lists;
    }

    /** By member id: the group id of its partition, or -1 when it has no value. */
    int[] groupOf() {
      return groupOf;
    }
  }

  private final PartitionKey key;
  /** By member id: the key value of the collector {@link #from} names. */
  private String[] valueOf = new String[0];
  private Collector[] from = new Collector[0];
  private long version;

  MemberPartitions(PartitionKey key) {
    this.key = key;
  }

  /**
   * The members grouped by key value.
   *
   * @param members the members
   * @param groupId the group id of a key value, made when new
   * @return the grouping
   */
  // By reference: the same collector object (immutable) has the same value, and a value instance
  // seen before has the group found for it.
  @SuppressWarnings("ReferenceEquality")
  Grouping group(Members members, ToIntFunction<String> groupId) {
    long v = key.version();
    if (version != v) {
      Arrays.fill(from, null);
      version = v;
    }
    Map<String, List<Member>> lists = new TreeMap<>();
    int maxId = Math.max(0, members.maxId());
    int[] groupOf = new int[maxId + 1];
    Arrays.fill(groupOf, -1);
    if (valueOf.length <= maxId) {
      valueOf = Arrays.copyOf(valueOf, Math.max(maxId + 1, valueOf.length * 2));
      from = Arrays.copyOf(from, valueOf.length);
    }
    // The list and group of the last few values seen, by reference (values are few: zones; a
    // member's kept value is the same instance from call to call), before the sorted map.
    String[] seenValue = new String[8];
    List<Member>[] seenList = newLists(seenValue.length);
    int[] seenGroupId = new int[seenValue.length];
    int valuesSeen = 0;
    for (Member m : members.array()) {
      // A member's value is its collector's, or its node's zone: kept while both are.
      String k;
      int id = m.id();
      if (from[id] == m.collector()) {
        k = valueOf[id];
      } else {
        k = key.of(m);
        valueOf[id] = k;
        from[id] = m.collector();
      }
      if (k != null) {
        int j = 0;
        while (j < valuesSeen && seenValue[j] != k) {
          j++;
        }
        if (j < valuesSeen) {
          seenList[j].add(m);
          groupOf[id] = seenGroupId[j];
          continue;
        }
        List<Member> list = lists.computeIfAbsent(k, x -> new ArrayList<>());
        list.add(m);
        int gid = groupId.applyAsInt(k);
        groupOf[id] = gid;
        if (valuesSeen < seenValue.length) {
          seenValue[valuesSeen] = k;
          seenList[valuesSeen] = list;
          seenGroupId[valuesSeen++] = gid;
        }
      }
    }
    return new Grouping(lists, groupOf);
  }

  @SuppressWarnings("unchecked")
  private static List<Member>[] newLists(int n) {
    return (List<Member>[]) new List<?>[n];
  }
}
