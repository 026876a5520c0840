package dev.apportion.allocation.internal.collections;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** {@link Passes}: chunks that cover a pass exactly once, in order, without overflow. */
class PassesTest {

  @Test
  void chunksCoverEveryPositionOnceInOrder() {
    for (int n = 0; n <= 300; n++) {
      int next = 0;
      int chunks = 0;
      for (int from = 0; from < n; from += Passes.CHUNK) {
        assertEquals(next, from, "n " + n);
        int end = Passes.end(from, n);
        assertEquals(Math.min(n, from + Passes.CHUNK), end, "n " + n + " from " + from);
        next = end;
        chunks++;
      }
      assertEquals(n, next);
      assertEquals((n + Passes.CHUNK - 1) / Passes.CHUNK, chunks);
    }
  }

  @Test
  void theLastChunkEndsAtTheEndNearTheLargestInt() {
    int n = Integer.MAX_VALUE - 10;
    assertEquals(n, Passes.end(n - 5, n));
    assertEquals(n - 100 + Passes.CHUNK, Passes.end(n - 100, n));
  }
}
