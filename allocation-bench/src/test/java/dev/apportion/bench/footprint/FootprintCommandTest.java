package dev.apportion.bench.footprint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The command as a user runs it, at a small shape: it prints a figure per strategy and one per
 * target, and rejects bad input with exit code 2. The figures' values depend on the JVM; only
 * that they are plausible is checked.
 */
class FootprintCommandTest {
  private record Run(int exit, String out, String err) {}

  private static Run footprint(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit = FootprintCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(exit, out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void printsTheAllocatorsAndTheTargetsBytesPerTarget() {
    Run run = footprint("--targets", "20000", "--collectors", "50", "--repeats", "1",
        "--strategy", "rendezvous");
    assertEquals(0, run.exit(), run.err());
    assertTrue(run.out().matches("(?s).*\\n  rendezvous +[0-9.]+ .*"), run.out());
    Matcher target = Pattern.compile("label strings excluded\\): ([0-9.]+) bytes/target")
        .matcher(run.out());
    assertTrue(target.find(), run.out());
    double bytes = Double.parseDouble(target.group(1));
    // At least two references per label (name and value, 4 bytes each with compressed oops) and
    // the target object; far below a kilobyte per label. (184 B with the labels' view made on
    // first use, 224 B before.)
    assertTrue(bytes > 12 * 8 + 32 && bytes < 12 * 1024, "bytes per target: " + bytes);
  }

  @Test
  void rejectsAnUnknownStrategyAndBadCounts() {
    Run unknown = footprint("--strategy", "nope", "--targets", "10");
    assertEquals(2, unknown.exit());
    assertTrue(unknown.err().startsWith("apportion footprint: --strategy: unknown"),
        unknown.err());
    assertEquals(2, footprint("--repeats", "0").exit());
    assertEquals(2, footprint("--bogus").exit());
  }
}
