package dev.apportion.allocation.internal.engine;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.internal.collections.Passes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The collectors of a {@code setCollectors} call in name order, each with its member when it has
 * one (null for a new name): found once by name, not again when the set is applied.
 */
final class CollectorsInNameOrder {
  private static final Comparator<Collector> BY_NAME = Comparator.comparing(Collector::name);

  private final Collector[] collectors;
  private final Member[] members;

  private CollectorsInNameOrder(Collector[] collectors, Member[] members) {
    this.collectors = collectors;
    this.members = members;
  }

  /**
   * The collectors given, in name order; throws on a repeated name. The members are in name
   * order already: a known collector takes its member's place, found by name, and only the new
   * ones are sorted and merged in, so a set that changed little costs O(n), whatever order it
   * comes in.
   *
   * @param given the collectors, none null
   * @param current the current members
   * @param index the name index of the last snapshot, which answers most names with one probe
   * @return the collectors in name order, with their members
   * @throws IllegalArgumentException if two collectors share a name
   */
  static CollectorsInNameOrder of(Collector[] given, Members current, NameIndex index) {
    Collector[] known = new Collector[current.size()];
    List<Collector> fresh = new ArrayList<>();
    for (Collector c : given) {
      locate(c, current, index, known, fresh);
    }
    fresh.sort(BY_NAME);
    for (int i = 1; i < fresh.size(); i++) {
      if (fresh.get(i - 1).name().equals(fresh.get(i).name())) {
        throw duplicate(fresh.get(i));
      }
    }
    Collector[] out = new Collector[given.length];
    Member[] outMembers = new Member[given.length];
    Member[] members = current.array();
    int freshCount = fresh.size();
    int w = 0;
    int f = 0;
    for (int i = 0; i < known.length; i++) {
      Collector c = known[i];
      if (c == null) {
        continue;
      }
      while (f < freshCount && fresh.get(f).name().compareTo(c.name()) < 0) {
        out[w++] = fresh.get(f++);
      }
      outMembers[w] = members[i];
      out[w++] = c;
    }
    while (f < fresh.size()) {
      out[w++] = fresh.get(f++);
    }
    return new CollectorsInNameOrder(out, outMembers);
  }

  /**
   * Finds collector {@code c}'s member: records {@code c} at the member's index in {@code known},
   * or adds it to {@code fresh} when no member has its name. A method a collector
   * ({@link Passes}).
   *
   * @throws IllegalArgumentException if {@code known} has a collector of that name already
   */
  private static void locate(Collector c, Members members, NameIndex index, Collector[] known,
      List<Collector> fresh) {
    // The name index answers with one probe (the name's cached hash, then its arrays); what it
    // says is checked against the members, and searched for when it differs.
    String name = c.name();
    int at = index.get(name);
    Member m = at >= 0 && at < members.size() && members.get(at).name().equals(name)
        ? members.get(at) : members.byName(name);
    if (m == null) {
      fresh.add(c);
    } else if (known[m.index()] != null) {
      throw duplicate(c);
    } else {
      known[m.index()] = c;
    }
  }

  private static IllegalArgumentException duplicate(Collector c) {
    return new IllegalArgumentException("duplicate collector name '" + c.name()
        + "': collector names must be unique within one setCollectors call");
  }

  /** The collectors, in name order. */
  Collector[] collectors() {
    return collectors;
  }

  /** By the index of {@link #collectors()}: each one's member, or null for a new name. */
  Member[] members() {
    return members;
  }
}
