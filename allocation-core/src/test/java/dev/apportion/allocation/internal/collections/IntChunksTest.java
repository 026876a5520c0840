package dev.apportion.allocation.internal.collections;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link IntChunks}: growth keeps the values, every chunk but the last is full, the last grows
 * with bounded headroom, the chunks read directly hold what {@code get} reads, and a chunk of the
 * default size is below half of G1's smallest region.
 */
class IntChunksTest {

  @Test
  void growthKeepsTheValuesAcrossChunks() {
    // Chunks of 256 from small steps: the last chunk is grown (copied) many times before the
    // next one starts, so the values must survive the copies.
    IntChunks chunks = new IntChunks(8);
    int written = 0;
    for (int n = 1; n <= 700; n += 37) {
      chunks.ensureCapacity(n);
      assertTrue(chunks.capacity() >= n, "capacity " + chunks.capacity() + " for " + n);
      for (int i = written; i < n; i++) {
        chunks.set(i, i * 31 + 7);
      }
      written = n;
      int[][] direct = chunks.chunks();
      for (int i = 0; i < n; i++) {
        assertEquals(i * 31 + 7, chunks.get(i), "n " + n + " index " + i);
        assertEquals(i * 31 + 7, direct[i >>> chunks.shift()][i & 255], "n " + n + " index " + i);
      }
    }
  }

  @Test
  void chunksAreFullButForTheLastAndBelowHalfARegion() {
    IntChunks chunks = new IntChunks(8);
    chunks.ensureCapacity(5);
    assertTrue(chunks.capacity() >= 5 && chunks.capacity() <= 5 + 16, "one short chunk");
    chunks.ensureCapacity(600);
    // Two full chunks of 256 and a last one of the 88 more it needs, with an eighth of headroom.
    assertTrue(chunks.capacity() >= 600 && chunks.capacity() <= 600 + 88 / 8 + 16,
        "capacity " + chunks.capacity());
    assertEquals(3, chunks.chunks().length);
    assertEquals(256, chunks.chunks()[0].length);
    assertEquals(256, chunks.chunks()[1].length);
    chunks.ensureCapacity(chunks.capacity() + 1);
    assertTrue(chunks.capacity() < 768, "the last chunk grown, no fourth one");
    assertTrue((4L << IntChunks.DEFAULT_SHIFT) < 512 * 1024);
    assertThrows(IllegalArgumentException.class, () -> new IntChunks(0));
    assertThrows(IllegalArgumentException.class, () -> new IntChunks(31));
  }
}
