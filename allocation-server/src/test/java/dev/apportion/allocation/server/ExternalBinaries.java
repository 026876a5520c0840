package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The real programs the end-to-end tests run (Prometheus, vmagent, Chromium, the OpenTelemetry
 * Collector): a missing one fails the test under CI ({@code CI} set, as {@code .ci/run} does, which
 * installs them) and skips it elsewhere with a message that says how to get it.
 */
final class ExternalBinaries {
  private ExternalBinaries() {}

  /** The executable {@code name} on {@code PATH}, or null. */
  static Path onPath(String name) {
    for (String d : System.getenv().getOrDefault("PATH", "").split(":", -1)) {
      Path p = Path.of(d.isEmpty() ? "." : d, name);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  /**
   * The executable {@code name} on {@code PATH}; fails under CI and skips elsewhere without it.
   *
   * @param hint how to install it, for the message
   */
  static String require(String name, String hint) {
    return require(onPath(name), "the " + name + " binary is not on PATH: " + hint);
  }

  /** {@code binary} if it is executable; fails under CI and skips elsewhere, with {@code message}, if not. */
  static String require(Path binary, String message) {
    if (binary != null && Files.isExecutable(binary)) {
      return binary.toString();
    }
    missing(message);
    return null;
  }

  /**
   * The executable {@code name} on {@code PATH}, or null where it may be absent; fails under CI
   * without it.
   */
  static String optional(String name, String hint) {
    Path p = onPath(name);
    if (p == null && System.getenv("CI") != null) {
      fail("the " + name + " binary is not on PATH: " + hint);
    }
    return p == null ? null : p.toString();
  }

  private static void missing(String message) {
    if (System.getenv("CI") != null) {
      fail(message);
    }
    assumeTrue(false, message);
  }
}
