package dev.apportion.allocation.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pins {@link XxHash64} to XXH64 with seed 0. Changing what it returns breaks the stability of
 * {@link Target#hash()} across releases.
 */
class XxHash64Test {

  private static long hash(String s) {
    byte[] bytes = s.getBytes(StandardCharsets.US_ASCII);
    return XxHash64.hash(bytes, bytes.length);
  }

  /** Reference vectors, verified against net.openhft zero-allocation-hashing. */
  static Stream<Arguments> referenceVectors() {
    return Stream.of(
        Arguments.of("", 0xef46db3751d8e999L),
        Arguments.of("a", 0xd24ec4f1a98c6e5bL),
        Arguments.of("abc", 0x44bc2cf5ad770999L),
        Arguments.of("Nobody inspects the spammish repetition", 0xfbcea83c8a378bf1L),
        Arguments.of("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdefXYZ",
            0x5b15f946643395e4L));
  }

  @ParameterizedTest
  @MethodSource("referenceVectors")
  void matchesReferenceVectors(String input, long expected) {
    assertEquals(expected, hash(input));
  }

  /** 128 bytes, {@code (i * 31 + 7) & 0xFF}: every byte value class, high bit set in many. */
  private static byte[] pattern() {
    byte[] data = new byte[128];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) (i * 31 + 7);
    }
    return data;
  }

  /*
   * The reference vectors above never reach the 8-byte tail lanes (their lengths are 0, 1, 3, 39
   * and 67). These lengths of pattern() cover every branch: the 32-byte stripes (none, one, several),
   * then 0-3 eight-byte lanes, an optional four-byte lane and 0-7 single bytes. The values come
   * from an independent implementation written from the XXH64 specification, which reproduces
   * the five reference vectors.
   */
  static Stream<Arguments> prefixesOfPattern() {
    return Stream.of(
        Arguments.of(4, 0xc60d15b1e3ff8f04L),
        Arguments.of(7, 0xafbefc3d6c6f9a8eL),
        Arguments.of(8, 0x3da5c7aa269683e0L),
        Arguments.of(12, 0x8fe8ab1c1fd0666eL),
        Arguments.of(15, 0xae2a37eb9357caa7L),
        Arguments.of(16, 0xa19ad429b02bc413L),
        Arguments.of(31, 0x4a74f3a1a39ad4a1L),
        Arguments.of(32, 0x8d57d6a4671cc43dL),
        Arguments.of(33, 0x62c9fd21ed857664L),
        Arguments.of(36, 0xa4475c606b0abc3cL),
        Arguments.of(40, 0x49b45332e280f187L),
        Arguments.of(44, 0xa6b69c7cee5d5b54L),
        Arguments.of(63, 0x5c320a0d2707057fL),
        Arguments.of(64, 0x7bbabbc45729d17eL),
        Arguments.of(65, 0xf3980c34bae65dc1L),
        Arguments.of(100, 0xefa0ad2d3e70c151L),
        Arguments.of(127, 0x4822f4e67f60ea91L),
        Arguments.of(128, 0x725a5b9b3bedfe94L));
  }

  @ParameterizedTest
  @MethodSource("prefixesOfPattern")
  void matchesIndependentImplementationAtEveryLength(int length, long expected) {
    byte[] exact = Arrays.copyOf(pattern(), length);
    assertEquals(expected, XxHash64.hash(exact, length));
  }

  @ParameterizedTest
  @MethodSource("prefixesOfPattern")
  void hashesOnlyTheFirstLengthBytes(int length, long expected) {
    // the whole 128-byte array, of which only the first `length` bytes count
    assertEquals(expected, XxHash64.hash(pattern(), length));
  }

  @Test
  void bytesPastLengthAreIgnored() {
    byte[] data = "abcXYZ".getBytes(StandardCharsets.US_ASCII);
    assertEquals(0x44bc2cf5ad770999L, XxHash64.hash(data, 3));
    assertEquals(0xef46db3751d8e999L, XxHash64.hash(data, 0));
  }

  // ---- seeds and offsets (Target.labelsHash() uses a seed other than 0) -------------------------

  /**
   * XXH64 of {@code pattern()}'s first {@code length} bytes with a non-zero seed. The first value
   * is the xxHash sanity-check vector (empty input, seed 2654435761 = PRIME32_1); the others come
   * from the independent implementation above, which reproduces it.
   */
  static Stream<Arguments> seededPrefixesOfPattern() {
    return Stream.of(
        Arguments.of(0, 2654435761L, 0xac75fda2929b17efL),
        Arguments.of(7, 2654435761L, 0x38386302628c52dcL),
        Arguments.of(12, 2654435761L, 0x026ca95299d9e652L),
        Arguments.of(31, 2654435761L, 0xb806f858c84789eaL),
        Arguments.of(32, 2654435761L, 0x8ef2e38dde10f162L),
        Arguments.of(44, 2654435761L, 0x3dcacfc20747e649L),
        Arguments.of(64, 2654435761L, 0x861fd034d84dab20L),
        Arguments.of(100, 2654435761L, 0x4ac13414471c7284L),
        Arguments.of(128, 2654435761L, 0xecce3e01f99b5f1eL),
        Arguments.of(0, 0x9e3779b97f4a7c15L, 0xc4349fc93c010000L),
        Arguments.of(7, 0x9e3779b97f4a7c15L, 0x2ce9adec2b2c8104L),
        Arguments.of(31, 0x9e3779b97f4a7c15L, 0x8137041f5af88413L),
        Arguments.of(32, 0x9e3779b97f4a7c15L, 0x184ebcf3745cd46cL),
        Arguments.of(44, 0x9e3779b97f4a7c15L, 0x588ee31c58a504d4L),
        Arguments.of(128, 0x9e3779b97f4a7c15L, 0x766daa420b6c6d5dL));
  }

  @ParameterizedTest
  @MethodSource("seededPrefixesOfPattern")
  void matchesIndependentImplementationWithASeed(int length, long seed, long expected) {
    assertEquals(expected, XxHash64.hash(pattern(), 0, length, seed));
  }

  @ParameterizedTest
  @MethodSource("seededPrefixesOfPattern")
  void hashesTheRangeFromOffset(int length, long seed, long expected) {
    byte[] shifted = new byte[length + 13];
    Arrays.fill(shifted, (byte) 0x5A);
    System.arraycopy(pattern(), 0, shifted, 5, length);
    assertEquals(expected, XxHash64.hash(shifted, 5, length, seed));
  }

  @ParameterizedTest
  @MethodSource("prefixesOfPattern")
  void seedZeroAtOffsetZeroIsTheUnseededHash(int length, long expected) {
    assertEquals(expected, XxHash64.hash(pattern(), 0, length, 0));
  }
}
