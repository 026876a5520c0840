package dev.apportion.allocation.internal.hash;

/**
 * The tokens of a consistent-hashing ring, defined once for the exported ring
 * ({@code dev.apportion.allocation.ring}) and the engine's consistent-hashing placer: a member
 * places its token {@code j} (from 0) at {@code mix(memberHash + (j + 1) * golden)}, and a
 * token is stored as one {@code long}, its position in the high {@value #POSITION_BITS} bits and
 * its member's number (an index or an id) in the low {@value #ID_BITS}. So every replica, and
 * the standalone ring, puts a member's tokens at the same places. Pure, no allocation.
 */
public final class RingTokens {
  /** Low bits of a token that hold its member's number. */
  public static final int ID_BITS = 20;
  /** High bits of a token that hold its position on the ring. */
  public static final int POSITION_BITS = 64 - ID_BITS;
  /** The member-number bits of a token. */
  public static final long ID_MASK = (1L << ID_BITS) - 1;
  /** The position bits of a token (and of a key, looked up on the ring). */
  public static final long POSITION_MASK = ~ID_MASK;
  /** 2^64 divided by the golden ratio: consecutive tokens' inputs are this far apart. */
  private static final long GOLDEN = 0x9E3779B97F4A7C15L;

  private RingTokens() {}

  /**
   * The position of a member's token {@code j}.
   *
   * @param memberHash the member's hash (its name's fingerprint)
   * @param j the token's number, from 0
   * @return the position: the low {@value #ID_BITS} bits clear
   */
  public static long position(long memberHash, int j) {
    return SplitMix.mix(memberHash + (j + 1) * GOLDEN) & POSITION_MASK;
  }

  /**
   * A member's token {@code j}, stored with the member's number.
   *
   * @param memberHash the member's hash
   * @param j the token's number, from 0
   * @param id the member's number, below {@code 2^}{@value #ID_BITS}
   * @return the token
   */
  public static long token(long memberHash, int j, int id) {
    return position(memberHash, j) | id;
  }

  /**
   * The member number a token holds.
   *
   * @param token a token
   * @return its member's number
   */
  public static int id(long token) {
    return (int) (token & ID_MASK);
  }

  /**
   * How many tokens a member of {@code weight} places: {@code weight * perUnit}, rounded, within
   * {@code [least, most]}.
   *
   * @param weight the member's weight (its capacity)
   * @param perUnit tokens per unit of weight (the virtual nodes)
   * @param least the fewest tokens a member places
   * @param most the most tokens a member places
   * @return the count
   */
  public static int count(double weight, int perUnit, int least, int most) {
    return (int) Math.max(least, Math.min(most, Math.round(weight * perUnit)));
  }
}
