package dev.apportion.allocation.internal;

import dev.apportion.allocation.Allocators;
import org.junit.jupiter.api.Nested;

/**
 * The shared contract at 2 and 3 replicas, for every strategy that places replicas: each nested
 * class is {@link AllocatorContractTest} with {@code replicas(k)} on the strategy's builder (the
 * strategies' own test classes hold it at 1).
 */
class ReplicatedContractTest {

  /** The contract for {@code strategy} at {@code k} replicas. */
  abstract static class Replicated extends AllocatorContractTest {
    private final String strategy;
    private final int k;

    Replicated(String strategy, int k) {
      this.strategy = strategy;
      this.k = k;
    }

    @Override
    Allocators.Builder builder() {
      return Allocators.builder(strategy).replicas(k);
    }

    @Override
    int replicas() {
      return k;
    }

    @Override
    boolean deterministic() {
      return !strategy.equals(Allocators.LEAST_WEIGHTED);
    }
  }

  @Nested
  class ConsistentHashingTwo extends Replicated {
    ConsistentHashingTwo() {
      super(Allocators.CONSISTENT_HASHING, 2);
    }
  }

  @Nested
  class ConsistentHashingThree extends Replicated {
    ConsistentHashingThree() {
      super(Allocators.CONSISTENT_HASHING, 3);
    }
  }

  @Nested
  class RendezvousTwo extends Replicated {
    RendezvousTwo() {
      super(Allocators.RENDEZVOUS, 2);
    }
  }

  @Nested
  class RendezvousThree extends Replicated {
    RendezvousThree() {
      super(Allocators.RENDEZVOUS, 3);
    }
  }

  @Nested
  class LeastWeightedTwo extends Replicated {
    LeastWeightedTwo() {
      super(Allocators.LEAST_WEIGHTED, 2);
    }
  }

  @Nested
  class LeastWeightedThree extends Replicated {
    LeastWeightedThree() {
      super(Allocators.LEAST_WEIGHTED, 3);
    }
  }

  @Nested
  class PerNodeTwo extends Replicated {
    PerNodeTwo() {
      super(Allocators.PER_NODE, 2);
    }
  }

  @Nested
  class PerNodeThree extends Replicated {
    PerNodeThree() {
      super(Allocators.PER_NODE, 3);
    }
  }
}
