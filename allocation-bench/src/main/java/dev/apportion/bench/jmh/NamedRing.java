package dev.apportion.bench.jmh;

import com.dynatrace.hash4j.consistent.ConsistentBucketSetHasher;
import com.dynatrace.hash4j.consistent.ConsistentHashing;
import com.dynatrace.hash4j.random.PseudoRandomGeneratorProvider;
import com.google.common.hash.Hashing;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRing;
import dev.apportion.allocation.ring.HashRings;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.ishugaliy.allgood.consistent.hash.node.SimpleNode;

/**
 * The one small facade every ring in the benchmarks is reached through, ours and the peers', so
 * that adding a peer is one constant of {@link Type} (the Caffeine benchmarks' pattern). A ring
 * maps a target to a member's name and lets members be added and removed by name.
 *
 * <p>Each ring takes the key it natively takes: our rings, hash4j and Guava take the target's
 * 64-bit identity hash, computed once when the {@link Target} was built;
 * allgood-consistent-hash only takes a string, so it hashes the target's address on every lookup
 * (as the OpenTelemetry target allocator hashes the target URL). Not thread-safe.
 */
public interface NamedRing {

  /**
   * The member that owns {@code target}.
   *
   * @param target a target
   * @return the member's name
   */
  String owner(Target target);

  /**
   * Adds a member.
   *
   * @param name its name, not yet a member
   */
  void add(String name);

  /**
   * Removes a member.
   *
   * @param name its name, a member
   */
  void remove(String name);

  /** The rings compared. */
  enum Type {
    /** Ours: consistent hashing, 256 virtual nodes a member, bucket-indexed lookup. */
    CONSISTENT {
      @Override
      public NamedRing create(Collection<String> members) {
        return new Ours(HashRings.consistent(members));
      }
    },
    /** Ours: rendezvous hashing, one mix per member per lookup. */
    RENDEZVOUS {
      @Override
      public NamedRing create(Collection<String> members) {
        return new Ours(HashRings.rendezvous(members));
      }
    },
    /**
     * {@code com.github.ishugaliy:allgood-consistent-hash}: a TreeMap ring with its default
     * 1000 virtual nodes a member and MetroHash over the key string.
     */
    ALLGOOD {
      @Override
      public NamedRing create(Collection<String> members) {
        return new Allgood(members);
      }
    },
    /**
     * {@code com.dynatrace.hash4j:hash4j}'s JumpBackAnchor hash: a consistent bucket-set hasher
     * that can remove any bucket. Members are mapped to bucket ids in the order they arrive, so
     * its placement depends on the history of changes, not only on the member set.
     */
    HASH4J_ANCHOR {
      @Override
      public NamedRing create(Collection<String> members) {
        return new Anchor(members);
      }
    },
    /**
     * Guava's {@code Hashing.consistentHash} (jump hash) over the members in name order. It
     * cannot remove a named member: removing one shifts the buckets of every member after it.
     * The floor for "pick a bucket for a precomputed hash".
     */
    GUAVA_JUMP {
      @Override
      public NamedRing create(Collection<String> members) {
        return new Jump(members);
      }
    };

    /**
     * A ring over {@code members}.
     *
     * @param members the members' names; at least one
     * @return the ring
     */
    public abstract NamedRing create(Collection<String> members);
  }

  /** Our {@link HashRing}s: immutable, so a change builds the next ring. */
  final class Ours implements NamedRing {
    private HashRing ring;
    private final TreeMap<String, Double> weights = new TreeMap<>();

    Ours(HashRing ring) {
      this.ring = ring;
      for (String m : ring.members()) {
        weights.put(m, 1.0);
      }
    }

    @Override
    public String owner(Target target) {
      return ring.owner(target.hash());
    }

    @Override
    public void add(String name) {
      weights.put(name, 1.0);
      ring = ring.withMembers(weights);
    }

    @Override
    public void remove(String name) {
      weights.remove(name);
      ring = ring.withMembers(weights);
    }
  }

  /** allgood-consistent-hash's {@code HashRing}. */
  final class Allgood implements NamedRing {
    private final org.ishugaliy.allgood.consistent.hash.HashRing<SimpleNode> ring;

    Allgood(Collection<String> members) {
      ring = org.ishugaliy.allgood.consistent.hash.HashRing.<SimpleNode>newBuilder().build();
      for (String m : new TreeSet<>(members)) {
        ring.add(SimpleNode.of(m));
      }
    }

    @Override
    public String owner(Target target) {
      return ring.locate(target.address()).orElseThrow().getKey();
    }

    @Override
    public void add(String name) {
      ring.add(SimpleNode.of(name));
    }

    @Override
    public void remove(String name) {
      ring.remove(SimpleNode.of(name));
    }
  }

  /** hash4j's JumpBackAnchor bucket-set hasher, with a name for each bucket id. */
  final class Anchor implements NamedRing {
    private final ConsistentBucketSetHasher hasher =
        ConsistentHashing.jumpBackAnchorHash(PseudoRandomGeneratorProvider.splitMix64_V1());
    private final Map<String, Integer> ids = new HashMap<>();
    private String[] names = new String[16];

    Anchor(Collection<String> members) {
      for (String m : new TreeSet<>(members)) {
        add(m);
      }
    }

    @Override
    public String owner(Target target) {
      return names[hasher.getBucket(target.hash())];
    }

    @Override
    public void add(String name) {
      int id = hasher.addBucket();
      if (id >= names.length) {
        names = Arrays.copyOf(names, Math.max(id + 1, names.length * 2));
      }
      names[id] = name;
      ids.put(name, id);
    }

    @Override
    public void remove(String name) {
      int id = ids.remove(name);
      hasher.removeBucket(id);
      names[id] = null;
    }
  }

  /** Guava's jump hash over the members in name order. */
  final class Jump implements NamedRing {
    private final TreeSet<String> members;
    private String[] byBucket;

    Jump(Collection<String> members) {
      this.members = new TreeSet<>(members);
      byBucket = this.members.toArray(new String[0]);
    }

    @Override
    public String owner(Target target) {
      return byBucket[Hashing.consistentHash(target.hash(), byBucket.length)];
    }

    @Override
    public void add(String name) {
      members.add(name);
      byBucket = members.toArray(new String[0]);
    }

    @Override
    public void remove(String name) {
      members.remove(name);
      byBucket = members.toArray(new String[0]);
    }
  }
}
