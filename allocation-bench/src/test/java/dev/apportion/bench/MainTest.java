package dev.apportion.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MainTest {
  private record Run(int exit, String out, String err) {}

  private static Run run(String... args) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit = Main.dispatch(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(exit, out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void helpPrintsTheUsageWithEveryCommand() throws Exception {
    for (String help : new String[] {"--help", "-h", "help"}) {
      Run run = run(help);
      assertEquals(0, run.exit(), help);
      assertEquals("", run.err(), help);
      for (String command : new String[] {"simulate", "footprint", "movement", "refresh-heap",
          "bench"}) {
        assertTrue(run.out().contains("\n  " + command + " "), command + " in\n" + run.out());
      }
    }
  }

  @Test
  void noArgumentPrintsTheUsageInsteadOfRunningEveryBenchmark() throws Exception {
    Run run = run();
    assertEquals(2, run.exit());
    assertEquals("", run.out());
    assertTrue(run.err().startsWith("Usage: java -jar apportion.jar COMMAND"), run.err());
  }

  @Test
  void aCommandsHelpIsItsOwn() throws Exception {
    Run run = run("simulate", "--help");
    assertEquals(0, run.exit(), run.err());
    assertTrue(run.out().contains("Usage: simulate"), run.out());
    assertTrue(run.out().contains("--table"), run.out());
  }
}
