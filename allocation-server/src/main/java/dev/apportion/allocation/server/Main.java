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
 * until the JVM is stopped (SIGTERM closes the server first). {@code SIGHUP} and {@code POST
 * /-/reload} reload the config ({@link Reloader}): a bad file keeps the running config.
 */
public final class Main {
  private Main() {}

  /**
   * Runs the service; returns only when the JVM shuts down.
   *
   * @param args one argument: the config file
   */
  public static void main(String[] args) {
    int status = run(args, new PrintStream(System.err, true, StandardCharsets.UTF_8));
    if (status != 0) {
      System.exit(status);
    }
  }

  static int run(String[] args, PrintStream err) {
    if (args.length != 1 || args[0].startsWith("-")) {
      err.println("usage: java -jar apportion-server.jar CONFIG.yaml (docs/server.md describes the file)");
      return 2;
    }
    // Jetty's start and stop lines at INFO would say nothing the service's own line does not.
    if (System.getProperty("org.slf4j.simpleLogger.log.org.eclipse.jetty") == null) {
      System.setProperty("org.slf4j.simpleLogger.log.org.eclipse.jetty", "warn");
    }
    Service service;
    Reloader reloader = new Reloader(Path.of(args[0]));
    try {
      service = new Service(ServerConfig.read(Path.of(args[0])), null, reloader);
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
    onSighup(reloader);
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

  /**
   * Reloads on {@code SIGHUP}, as Prometheus does, instead of dying of it (the JVM's default). The
   * JDK's only signal API is {@code sun.misc.Signal} (module {@code jdk.unsupported}), reached
   * reflectively so that the build stays free of internal-API warnings; where it is missing, only
   * {@code POST /-/reload} reloads. The reload runs on its own thread, never the signal's.
   */
  static boolean onSighup(Reloader reloader) {
    try {
      Class<?> signalClass = Class.forName("sun.misc.Signal");
      Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
      Object hup = signalClass.getConstructor(String.class).newInstance("HUP");
      java.util.concurrent.ExecutorService reloads =
          java.util.concurrent.Executors.newSingleThreadExecutor(
              r -> {
                Thread t = new Thread(r, "apportion-reload");
                t.setDaemon(true);
                return t;
              });
      Object handler =
          java.lang.reflect.Proxy.newProxyInstance(
              handlerClass.getClassLoader(),
              new Class<?>[] {handlerClass},
              (proxy, method, margs) -> {
                switch (method.getName()) {
                  case "handle" -> {
                    java.util.concurrent.Future<?> unused = reloads.submit(reloader::reloadLogged);
                    return null;
                  }
                  case "hashCode" -> {
                    return System.identityHashCode(proxy);
                  }
                  case "equals" -> {
                    return proxy == margs[0];
                  }
                  default -> {
                    return "apportion SIGHUP handler";
                  }
                }
              });
      signalClass.getMethod("handle", signalClass, handlerClass).invoke(null, hup, handler);
      return true;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return false;
    }
  }
}
