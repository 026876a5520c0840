package dev.apportion.allocation.server;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * Runs the allocation server from one YAML file: {@code java -jar apportion-server.jar CONFIG}.
 *
 * <p>A bad config (unreadable, malformed, an unknown key or strategy, a bad value) prints one line
 * to standard error and exits with status 2; an address that cannot be bound exits with 1. Blocks
 * until the JVM is stopped (SIGTERM closes the server first). {@code SIGHUP} reloads the config
 * ({@link Reloader}), and so does {@code POST /-/reload} when the server was started with {@code
 * --web.enable-lifecycle} (as Prometheus's): a bad file keeps the running config. The {@code
 * SIGHUP} handler is installed before anything else, so a signal during the start never kills
 * the process: one that comes before the service runs reloads it once it does.
 */
public final class Main {
  /** The flag that enables {@code POST /-/reload}, named as Prometheus names it. */
  static final String ENABLE_LIFECYCLE = "--web.enable-lifecycle";

  /** Installed when the class is initialized: before the first instruction of {@code main}. */
  private static final Hangups HANGUPS = Hangups.install();

  private Main() {}

  /**
   * Runs the service; returns only when the JVM shuts down.
   *
   * @param args one argument: the config file
   */
  public static void main(String[] args) {
    int status = run(args, new PrintStream(System.err, true, StandardCharsets.UTF_8), HANGUPS);
    if (status != 0) {
      System.exit(status);
    }
  }

  static int run(String[] args, PrintStream err) {
    return run(args, err, HANGUPS);
  }

  static int run(String[] args, PrintStream err, Hangups hangups) {
    boolean lifecycle = args.length == 2 && ENABLE_LIFECYCLE.equals(args[0]);
    String config = args.length == 0 ? "-" : args[args.length - 1];
    if (!(args.length == 1 || lifecycle) || config.startsWith("-")) {
      err.println(
          "usage: java -jar apportion-server.jar [" + ENABLE_LIFECYCLE + "] CONFIG.yaml"
              + " (docs/server.md describes the file)");
      return 2;
    }
    // Jetty's start and stop lines at INFO would say nothing the service's own line does not.
    if (System.getProperty("org.slf4j.simpleLogger.log.org.eclipse.jetty") == null) {
      System.setProperty("org.slf4j.simpleLogger.log.org.eclipse.jetty", "warn");
    }
    Service service;
    Reloader reloader = new Reloader(Path.of(config), lifecycle);
    try {
      service = new Service(ServerConfig.read(Path.of(config)), null, reloader);
    } catch (ConfigException e) {
      err.println("apportion-server: bad config: " + e.getMessage());
      return 2;
    }
    try {
      service.start();
    } catch (IOException e) {
      err.println("apportion-server: cannot listen on " + service.config().listen() + ": " + e.getMessage());
      service.close();
      return 1;
    }
    reloader.started(service);
    hangups.reloadWith(reloader);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  reloader.current().close();
                  stopped.countDown();
                },
                "apportion-shutdown"));
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }
}
