package dev.apportion.allocation.internal.chash;

import dev.apportion.allocation.internal.engine.Assignment;

/**
 * {@link ConsistentHashingPlacer}'s placement in progress, by position in the view's
 * identity-hash order ({@link Assignment#slotAt}): what {@link BoundedMatching} writes and
 * {@link FloorPhase} then adjusts, before the placer writes it to the assignment. Plain arrays,
 * read and written directly by those two in their loops; kept between calls, sized to the largest
 * placement seen, so a placement allocates nothing once they are large enough. {@link #distance}
 * is a whole placement's alone (a change's probe rounds do not read it): a placer may let it go
 * after a large one ({@link #releaseDistance}).
 */
final class ViewScratch {
  private static final long[] NONE = {};

  /** By position: the member id the target goes to. */
  int[] chosen = new int[0];
  /** By position: the cost the target is placed with. */
  long[] cost = new long[0];
  /**
   * By position: the distance from the target's hash clockwise to the token that accepted it, or
   * -1 for a target costlier than every cap, set aside and placed alone (never moved again).
   */
  long[] distance = NONE;
  /** By position: the target's ring position (recorded for the floor phase only). */
  long[] position = new long[0];
  /** By token: the position of its first target strictly past it (for the floor phase only). */
  int[] firstAfter = new int[0];

  /**
   * Makes {@link #chosen} and {@link #cost} hold {@code n} targets (growing them loses their
   * contents): what a change's probe rounds read and write.
   *
   * @param n how many targets the view holds
   */
  void ensure(int n) {
    if (chosen.length < n) {
      chosen = new int[n];
      cost = new long[n];
    }
  }

  /**
   * Makes {@link #distance} hold {@code n} targets (growing it loses its contents): for a whole
   * placement.
   *
   * @param n how many targets the view holds
   */
  void ensureDistance(int n) {
    if (distance.length < n) {
      distance = new long[n];
    }
  }

  /** Lets go of {@link #distance}, which no change reads: the next whole placement sizes it. */
  void releaseDistance() {
    distance = NONE;
  }

  /**
   * Makes {@link #position} hold {@code n} targets and {@link #firstAfter} a ring of
   * {@code tokens} tokens.
   *
   * @param n how many targets the view holds
   * @param tokens how many tokens the ring has
   * @param tokenBuffer the ring's buffer length, which {@link #firstAfter} is grown to
   */
  void ensureArcs(int n, int tokens, int tokenBuffer) {
    if (position.length < n) {
      position = new long[n];
    }
    if (firstAfter.length < tokens) {
      firstAfter = new int[tokenBuffer];
    }
  }
}
