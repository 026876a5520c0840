package dev.apportion.allocation.internal;

/**
 * How a pass over a view is cut so that HotSpot compiles it early.
 *
 * <p>HotSpot compiles a method after a few hundred calls, but a loop inside a method called once
 * only after tens of thousands of iterations in all (an on-stack replacement). A pass over
 * per-node's fallback pool (thousands of targets, once a write) or over the collectors (once a
 * collector change) therefore runs interpreted for the first several writes of a process, and a
 * collector change for ever: measured, a fresh JVM's per-node placement of 10,000 targets on 100
 * collectors spent 35% of its samples in the interpreter and 41% in C1's profiling code. Such a
 * pass calls a method per {@link #CHUNK} positions instead: the calls reach the compile
 * threshold within the first write or two, and once compiled the call costs nothing beside 64
 * positions' work.
 */
final class Passes {
  /** Positions a chunk of a pass covers. */
  static final int CHUNK = 64;

  private Passes() {}

  /**
   * The end of the chunk that starts at {@code from}. A pass's loop ({@code for (int from = 0;
   * from < n; from += CHUNK)}) assumes {@code n <= Integer.MAX_VALUE - CHUNK}, far above any
   * view's size (a view is indexed by int arrays of its size).
   *
   * @param from the chunk's first position, below {@code n}
   * @param n the pass's end
   * @return {@code min(n, from + CHUNK)}, without overflow
   */
  static int end(int from, int n) {
    return n - from <= CHUNK ? n : from + CHUNK;
  }
}
