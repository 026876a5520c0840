package dev.apportion.bench.refreshheap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The command as a user runs it, at a small shape: a line per refresh in every mode, and bad
 * input rejected with exit code 2. Whether a collection falls within a refresh, and so the
 * figures, depends on the JVM; only the lines are checked.
 */
class RefreshHeapCommandTest {
  private record Run(int exit, String out, String err) {}

  private static Run refreshHeap(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit = RefreshHeapCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(exit, out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void printsALinePerRefreshInEveryMode() {
    for (String mode : new String[] {"UNCHANGED", "FIRST", "READ"}) {
      Run run = refreshHeap("--targets", "2000", "--refreshes", "2", "--mode", mode);
      assertEquals(0, run.exit(), run.err());
      assertTrue(run.out().startsWith("answer: 2000 targets, "), run.out());
      assertTrue(run.out().contains("; mode " + mode + "\n"), run.out());
      for (int i = 0; i < 2; i++) {
        assertTrue(
            run.out().matches("(?s).*\\nrefresh " + i + ": [0-9]+ ms, [0-9]+ collections during"
                + " it, growth (unknown \\(no collection: use -Xmn8m\\)|[-0-9.]+ MB \\([-0-9.]+x the answer\\)), kept [-0-9.]+"
                + " MB\\n.*"),
            run.out());
      }
    }
  }

  @Test
  void rejectsBadInput() {
    Run zero = refreshHeap("--refreshes", "0");
    assertEquals(2, zero.exit());
    assertTrue(zero.err().startsWith("apportion refresh-heap: --targets and --refreshes"),
        zero.err());
    assertEquals(2, refreshHeap("--mode", "SOMETIMES").exit());
    assertEquals(2, refreshHeap("--bogus").exit());
  }
}
