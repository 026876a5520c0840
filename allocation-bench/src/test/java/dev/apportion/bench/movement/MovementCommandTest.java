package dev.apportion.bench.movement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The movement command's cost mode: the balance columns are then of cost. */
class MovementCommandTest {
  private static final Pattern ROW = Pattern.compile(
      "^consistent-hashing 1\\.15\\s+(\\d+\\.\\d+)\\s+(\\d+\\.\\d+)\\s", Pattern.MULTILINE);

  private static String run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = MovementCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void withParetoCostsConsistentHashingKeepsItsCostBand() {
    String out = run("--target-count", "4000", "--collector-count", "40", "--sweep", "0",
        "--strategy", "consistent-hashing", "--load-factor", "1.15", "--costs", "pareto");
    assertTrue(out.contains("heavy-tailed costs"), out);
    Matcher m = ROW.matcher(out);
    assertTrue(m.find(), out);
    double peak = Double.parseDouble(m.group(1));
    double min = Double.parseDouble(m.group(2));
    assertTrue(peak <= 1.15 && min >= 0.85, out);
  }

  @Test
  void anUnknownCostKindIsAOneLineError() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = MovementCommand.run(new String[] {"--costs", "zipf"},
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(2, code);
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("--costs"), err::toString);
  }
}
