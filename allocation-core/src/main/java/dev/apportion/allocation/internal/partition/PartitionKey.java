package dev.apportion.allocation.internal.partition;

import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.NodeZones;
import java.util.Objects;

/**
 * What a {@link PartitionedPlacer} partitions by: a target's and a collector's value of one key.
 * {@link Allocators#ZONE} reads zones (the target's through {@link NodeZones}, a collector's own
 * zone or else its node's); any other key is a
 * label name, read from the target's labels and the collector's. Blank values are no value.
 */
public abstract class PartitionKey {
  private final String name;

  private PartitionKey(String name) {
    this.name = name;
  }

  /**
   * The key for {@code name}.
   *
   * @param name {@link Allocators#ZONE} or a label name
   * @param zones where target zones are resolved
   * @return the key
   */
  public static PartitionKey of(String name, NodeZones zones) {
    Objects.requireNonNull(zones);
    if (Allocators.ZONE.equals(name)) {
      zones.use();
      return new PartitionKey(name) {
        @Override
        String of(Target t) {
          return zones.zoneOf(t);
        }

        @Override
        String of(Member m) {
          // A collector without a zone of its own is in its node's (from the topology).
          String z = m.collector().zone().orElse(null);
          return z != null ? z : zones.zoneOfNode(m.node());
        }

        @Override
        boolean changed(Target from, Target to) {
          return !from.zone().equals(to.zone()) || !from.node().equals(to.node());
        }

        @Override
        long version() {
          return zones.version();
        }
      };
    }
    return new PartitionKey(name) {
      @Override
      String of(Target t) {
        return nonBlank(t.labels().get(name));
      }

      @Override
      String of(Member m) {
        return nonBlank(m.collector().labels().get(name));
      }

      @Override
      boolean changed(Target from, Target to) {
        return !Objects.equals(of(from), of(to));
      }
    };
  }

  private static String nonBlank(String s) {
    return s == null || s.isBlank() ? null : s;
  }

  /** The key's name. @return {@link Allocators#ZONE} or a label name */
  String name() {
    return name;
  }

  /** A target's value, or null. */
  abstract String of(Target t);

  /** A member's value, or null. */
  abstract String of(Member m);

  /** Whether a relabel may have changed the target's value. */
  abstract boolean changed(Target from, Target to);

  /**
   * A number that changes whenever some unchanged target's value may have changed (zones resolve
   * through the collectors' nodes and the supplied topology); a label's value never does.
   */
  long version() {
    return 0;
  }
}
