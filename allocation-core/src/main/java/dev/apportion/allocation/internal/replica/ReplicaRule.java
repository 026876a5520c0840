package dev.apportion.allocation.internal.replica;

/**
 * What makes a collector a good home for a target's next replica: its tier. A further replica
 * goes to a collector of the best tier any collector offers it.
 */
public enum ReplicaRule {
  /**
   * Tier 1: on a node and in a zone none of the target's earlier replicas is on; tier 2: on
   * another node; tier 3: any collector not holding a replica. For every strategy but per-node.
   */
  DISTINCT,
  /**
   * Tier 1: in the target's zone, on a node none of its earlier replicas is on; tier 2: on
   * another node; tier 3: any collector not holding a replica. For per-node, whose further
   * replicas stay in the target's zone.
   */
  TARGET_ZONE
}
