package dev.apportion.allocation.internal.collections;

/**
 * How a pass over many positions is shaped so that HotSpot compiles it early: the one place that
 * explains such shaping. Code shaped this way says so with a link here and nothing more.
 *
 * <p><b>Why.</b> HotSpot compiles a method after a few hundred calls, but a loop inside a method
 * called once only after tens of thousands of iterations in all (an on-stack replacement), and
 * leaving such a loop compiled while it ran can throw the compiled code away (the loop's exit
 * was never profiled: an uncommon trap), sending the rest of the method back to the
 * interpreter. A pass that runs once a call over thousands of positions (per-node's fallback
 * pool, the ring's tokens, a refresh's targets) or once a collector change over the collectors
 * would therefore run interpreted, or in C1's profiling code, for the first several calls of a
 * process, and a collector change for ever: measured, a fresh JVM's per-node placement of
 * 10,000 targets on 100 collectors spent 35% of its samples in the interpreter and 41% in C1's
 * profiling code.
 *
 * <p><b>The shapes.</b>
 * <ul>
 *   <li>A pass calls a method per chunk of positions ({@link #CHUNK} here; a multiple of a
 *       batch for the engine's input, a run of buckets for the ring) instead of looping over all
 *       of them in one call: the calls reach the compile threshold within the first call or two,
 *       each compiled with its loop's exit in its profile, and once compiled a call costs
 *       nothing beside a chunk's work.
 *   <li>A pass over members, run once a collector change, calls a method per member, or reads
 *       flat arrays the members were copied into, instead of several calls a member in a loop
 *       that stays interpreted.
 *   <li>One method a pass: consecutive passes of one operation are separate methods, so that one
 *       pass's exit does not cost the next.
 *   <li>Scratch sized once for its largest use, so that no growth branch is untaken in one call
 *       and taken in the next (which the JIT would compile as an uncommon trap).
 * </ul>
 */
public final class Passes {
  /** Positions a chunk of a pass covers. */
  public static final int CHUNK = 64;

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
  public static int end(int from, int n) {
    return n - from <= CHUNK ? n : from + CHUNK;
  }
}
