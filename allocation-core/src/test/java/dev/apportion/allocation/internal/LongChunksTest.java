package dev.apportion.allocation.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link LongChunks} and {@link IntChunks}: growth keeps the values, moves either way and across
 * chunks do what {@link System#arraycopy} does within one array, and the chunks stay below half
 * of G1's smallest region.
 */
class LongChunksTest {

  /** Random growths and overlapping moves against a flat array doing the same. */
  @Test
  void movesAndGrowthMatchAFlatArray() {
    for (long seed = 1; seed <= 200; seed++) {
      Random random = new Random(seed);
      int shift = 1 + random.nextInt(5);
      LongChunks chunks = new LongChunks(shift);
      long[] model = new long[0];
      for (int step = 0; step < 40; step++) {
        if (step == 0 || random.nextInt(5) == 0) {
          int n = model.length + random.nextInt(100);
          chunks.ensureCapacity(n);
          assertTrue(chunks.capacity() >= n, "seed " + seed + " step " + step);
          long[] grown = new long[n];
          System.arraycopy(model, 0, grown, 0, model.length);
          for (int i = model.length; i < n; i++) {
            grown[i] = random.nextLong();
            chunks.set(i, grown[i]);
          }
          model = grown;
        } else if (model.length > 0) {
          int length = random.nextInt(model.length + 1);
          int from = random.nextInt(model.length - length + 1);
          int to = random.nextInt(model.length - length + 1);
          System.arraycopy(model, from, model, to, length);
          chunks.move(from, to, length);
        }
        long[] held = new long[model.length];
        for (int i = 0; i < held.length; i++) {
          held[i] = chunks.get(i);
        }
        assertArrayEquals(model, held, "seed " + seed + " step " + step + " shift " + shift);
      }
    }
  }

  /**
   * Every chunk but the last is full; the last grows with headroom up to a full chunk; a chunk
   * of the default size is below 512 KB (half of G1's smallest region).
   */
  @Test
  void chunksAreFullButForTheLastAndBelowHalfARegion() {
    LongChunks chunks = new LongChunks(8);
    chunks.ensureCapacity(5);
    assertTrue(chunks.capacity() >= 5 && chunks.capacity() <= 5 + 16, "one short chunk");
    chunks.ensureCapacity(600);
    // Two full chunks of 256 and a last one of the 88 more it needs, with an eighth of headroom.
    assertTrue(chunks.capacity() >= 600 && chunks.capacity() <= 600 + 88 / 8 + 16,
        "capacity " + chunks.capacity());
    chunks.ensureCapacity(chunks.capacity() + 1);
    assertTrue(chunks.capacity() < 768, "the last chunk grown, no fourth one");
    assertEquals(0, LongChunks.chunkCount(0, 4));
    assertEquals(1, LongChunks.chunkCount(16, 4));
    assertEquals(2, LongChunks.chunkCount(17, 4));
    assertTrue((8L << LongChunks.DEFAULT_SHIFT) < 512 * 1024);
    assertThrows(IllegalArgumentException.class, () -> new LongChunks(0));
    assertThrows(IllegalArgumentException.class, () -> new IntChunks(31));
  }

  /** The int chunks keep their values through growth. */
  @Test
  void intChunksKeepTheirValuesThroughGrowth() {
    IntChunks chunks = new IntChunks(3);
    for (int n = 1; n <= 100; n += 7) {
      chunks.ensureCapacity(n);
      for (int i = 0; i < n; i++) {
        if (i >= n - 7) {
          chunks.set(i, i * 31);
        }
      }
      for (int i = 0; i < n; i++) {
        assertEquals(i * 31, chunks.get(i), "n " + n + " index " + i);
      }
    }
  }
}
