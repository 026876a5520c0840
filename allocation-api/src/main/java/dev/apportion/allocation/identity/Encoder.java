package dev.apportion.allocation.identity;

import java.util.Arrays;

/**
 * The canonical encoding of strings that a target's identity hash and an ownership key are
 * computed over: each string as its UTF-8 length (unsigned LEB128) followed by its UTF-8 bytes,
 * exactly as {@code String.getBytes(UTF_8)} encodes them (ASCII one byte per char, a surrogate
 * pair four bytes, an unpaired surrogate the byte {@code '?'}), written into a growable buffer.
 * The encoding is unambiguous: no two sequences of strings share it. With {@link XxHash64}'s
 * published specification it is what makes {@code Target.hash()} stable across releases and JVMs;
 * golden values in the tests pin both, and changing either is a breaking change.
 *
 * <p>Not thread-safe; reused by one thread (see {@link Canonical}). Allocates only to grow.
 */
public final class Encoder {
  private static final int INITIAL = 256;
  /** A buffer past this many bytes is dropped by {@link #trim()}, so one huge input pins nothing. */
  private static final int RETAINED_MAX = 1 << 16;

  private byte[] bytes = new byte[INITIAL];
  private int length;

  /** An empty encoder with a small buffer. */
  public Encoder() {}

  /**
   * The buffer; bytes {@code [0, length())} are what was written since the last {@link #reset()}.
   *
   * @return the buffer itself, not a copy
   */
  public byte[] bytes() {
    return bytes;
  }

  /**
   * How many bytes were written since the last {@link #reset()}.
   *
   * @return the count
   */
  public int length() {
    return length;
  }

  /** Forgets what was written, keeping the buffer. */
  public void reset() {
    length = 0;
  }

  /** Drops a buffer grown past a few tens of kilobytes, keeping a small one. */
  void trim() {
    if (bytes.length > RETAINED_MAX) {
      bytes = new byte[INITIAL];
    }
  }

  /**
   * XXH64 of bytes {@code [from, to)} with {@code seed}.
   *
   * @param from the first byte
   * @param to past the last byte
   * @param seed the seed
   * @return the hash
   */
  public long hash(int from, int to, long seed) {
    return XxHash64.hash(bytes, from, to - from, seed);
  }

  private void ensure(long capacity) {
    if (capacity > bytes.length) {
      if (capacity > Integer.MAX_VALUE - 8) {
        throw new IllegalArgumentException("target too large to hash: " + capacity + " bytes");
      }
      bytes = Arrays.copyOf(bytes, (int) Math.max(capacity, Math.min(
          (long) bytes.length << 1, Integer.MAX_VALUE - 8)));
    }
  }

  /**
   * Writes one byte (a version or kind tag that opens an encoding).
   *
   * @param b the byte, in its low 8 bits
   */
  public void writeByte(int b) {
    ensure(length + 1L);
    bytes[length++] = (byte) b;
  }

  /** Writes {@code n} bytes already encoded, from {@code src[from]} on. */
  void writeEncoded(byte[] src, int from, int n) {
    ensure((long) length + n);
    System.arraycopy(src, from, bytes, length, n);
    length += n;
  }

  /**
   * Writes pairs {@code [from, to)} of a label array, names and values; the names' encodings are
   * copied from {@code shape} when it is given (it must be the shape of {@code kv}).
   */
  void writePairs(String[] kv, int from, int to, LabelShape shape) {
    if (shape == null) {
      for (int i = from << 1, end = to << 1; i < end; i++) {
        writeString(kv[i]);
      }
      return;
    }
    byte[] names = shape.encoded;
    int[] offsets = shape.offsets;
    for (int p = from; p < to; p++) {
      int start = offsets[p];
      writeEncoded(names, start, offsets[p + 1] - start);
      writeString(kv[(p << 1) + 1]);
    }
  }

  /**
   * Writes {@code s} as its UTF-8 length and bytes. One pass when it is ASCII: the chars are
   * copied behind room for the length of an ASCII string; at the first other char the rest's
   * UTF-8 length is counted and the ASCII prefix moved if the length takes another number of
   * bytes.
   *
   * @param s the string
   */
  public void writeString(String s) {
    int chars = s.length();
    int prefix = lebSize(chars);
    ensure((long) length + prefix + chars);
    byte[] b = bytes;
    int start = length + prefix;
    int i = 0;
    // A plain loop over charAt: measured faster here (JDK 17) than copying the chars out with
    // getChars and checking and narrowing them in two array loops.
    for (; i < chars; i++) {
      char c = s.charAt(i);
      if (c >= 0x80) {
        break;
      }
      b[start + i] = (byte) c;
    }
    if (i == chars) {
      writeLeb(b, length, chars);
      length = start + chars;
      return;
    }
    long utf8 = i + utf8Length(s, i);
    ensure(length + 5L + utf8);
    int utf8Prefix = lebSize((int) utf8);
    b = bytes;
    if (utf8Prefix != prefix) {
      System.arraycopy(b, start, b, length + utf8Prefix, i);
      start = length + utf8Prefix;
    }
    writeLeb(b, length, (int) utf8);
    int p = start + i;
    while (i < chars) {
      char c = s.charAt(i++);
      if (c < 0x80) {
        b[p++] = (byte) c;
      } else if (c < 0x800) {
        b[p++] = (byte) (0xC0 | (c >> 6));
        b[p++] = (byte) (0x80 | (c & 0x3F));
      } else if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c) && i < chars
            && Character.isLowSurrogate(s.charAt(i))) {
          int cp = Character.toCodePoint(c, s.charAt(i++));
          b[p++] = (byte) (0xF0 | (cp >> 18));
          b[p++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
          b[p++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
          b[p++] = (byte) (0x80 | (cp & 0x3F));
        } else {
          b[p++] = '?';
        }
      } else {
        b[p++] = (byte) (0xE0 | (c >> 12));
        b[p++] = (byte) (0x80 | ((c >> 6) & 0x3F));
        b[p++] = (byte) (0x80 | (c & 0x3F));
      }
    }
    length = p;
  }

  /** The UTF-8 length of {@code s} from char {@code from} on, as {@code getBytes} counts it. */
  private static long utf8Length(String s, int from) {
    long n = 0;
    int chars = s.length();
    for (int i = from; i < chars; i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n++;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c) && i + 1 < chars
            && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
          n += 4;
        } else {
          n++;
        }
      } else {
        n += 3;
      }
    }
    return n;
  }

  private static int lebSize(int n) {
    return n < (1 << 7) ? 1 : n < (1 << 14) ? 2 : n < (1 << 21) ? 3 : n < (1 << 28) ? 4 : 5;
  }

  private static void writeLeb(byte[] b, int at, int n) {
    while ((n & ~0x7F) != 0) {
      b[at++] = (byte) ((n & 0x7F) | 0x80);
      n >>>= 7;
    }
    b[at] = (byte) n;
  }
}
