package dev.apportion.allocation.internal.replica;

import java.util.Arrays;

/**
 * The owners of every target, by rank then target index (collector ids, -1 for none), held in
 * chunks of {@value #CHUNK} so that a snapshot shares every chunk a change did not touch. The
 * writer's table copies a chunk on its first write after a {@link #freeze}; a frozen table is
 * read-only and never changes. A change that moves a few hundred replicas therefore copies a few
 * hundred chunks at most, not every target's owners.
 */
final class OwnerTable {
  private static final int SHIFT = 6;
  /** Owners a chunk. */
  static final int CHUNK = 1 << SHIFT;
  private static final int MASK = CHUNK - 1;

  private final int size;
  private final int[][][] chunks;
  /** Writer only: whether a chunk is shared with a frozen table; null when this one is frozen. */
  private final boolean[][] shared;

  /** A writer's table of {@code ranks} x {@code size} owners, every one -1. */
  OwnerTable(int ranks, int size) {
    this.size = size;
    int count = (size + MASK) >>> SHIFT;
    this.chunks = new int[ranks][count][];
    this.shared = new boolean[ranks][count];
    for (int[][] rank : chunks) {
      for (int c = 0; c < count; c++) {
        rank[c] = new int[Math.min(CHUNK, size - (c << SHIFT))];
        Arrays.fill(rank[c], -1);
      }
    }
  }

  private OwnerTable(int size, int[][][] chunks) {
    this.size = size;
    this.chunks = chunks;
    this.shared = null;
  }

  /** Targets in the table. */
  int size() {
    return size;
  }

  /** The owner of target {@code i}'s replica {@code rank}, or -1. */
  int get(int rank, int i) {
    return chunks[rank][i >>> SHIFT][i & MASK];
  }

  /** Sets the owner of target {@code i}'s replica {@code rank} (writer's table only). */
  void set(int rank, int i, int owner) {
    int c = i >>> SHIFT;
    int[] chunk = chunks[rank][c];
    if (shared[rank][c]) {
      chunk = chunk.clone();
      chunks[rank][c] = chunk;
      shared[rank][c] = false;
    }
    chunk[i & MASK] = owner;
  }

  /** A read-only table of the owners now; the writer's next writes copy what they touch. */
  OwnerTable freeze() {
    int[][][] copy = new int[chunks.length][][];
    for (int r = 0; r < chunks.length; r++) {
      copy[r] = chunks[r].clone();
      Arrays.fill(shared[r], true);
    }
    return new OwnerTable(size, copy);
  }
}
