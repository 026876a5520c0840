package dev.apportion.allocation.server;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code SIGHUP} reloads the config, as Prometheus does, instead of killing the process (the
 * JVM's default). Installed first thing, before the config is read: a signal that comes before
 * the service runs is remembered and reloads once {@link #reloadWith} is called. The JDK's only
 * signal API is {@code sun.misc.Signal} (module {@code jdk.unsupported}), reached reflectively so
 * that the build stays free of internal-API warnings; where it is missing, only {@code POST
 * /-/reload} reloads. A reload runs on its own thread, never the signal's; signals that come
 * while one runs are folded into at most one more. Thread-safe.
 */
final class Hangups {
  private final ExecutorService reloads =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "apportion-reload");
            t.setDaemon(true);
            return t;
          });
  private Reloader reloader;
  private boolean pending;
  private boolean queued;
  private final boolean installed;

  private Hangups() {
    this.installed = handle(this::signalled);
  }

  /** Installs the handler; where signals cannot be handled, the object does nothing. */
  static Hangups install() {
    return new Hangups();
  }

  /** Whether {@code SIGHUP} is handled here. */
  boolean installed() {
    return installed;
  }

  /** From now on a {@code SIGHUP} reloads with {@code r}; one that came before reloads now. */
  synchronized void reloadWith(Reloader r) {
    reloader = r;
    if (pending) {
      pending = false;
      queue();
    }
  }

  private synchronized void signalled() {
    if (reloader == null) {
      pending = true;
    } else {
      queue();
    }
  }

  private void queue() {
    if (queued) {
      return;
    }
    queued = true;
    Future<?> unused =
        reloads.submit(
            () -> {
              Reloader r;
              synchronized (this) {
                queued = false;
                r = reloader;
              }
              r.reloadLogged();
            });
  }

  private static boolean handle(Runnable onHup) {
    try {
      Class<?> signalClass = Class.forName("sun.misc.Signal");
      Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
      Object hup = signalClass.getConstructor(String.class).newInstance("HUP");
      Object handler =
          java.lang.reflect.Proxy.newProxyInstance(
              handlerClass.getClassLoader(),
              new Class<?>[] {handlerClass},
              (proxy, method, margs) -> {
                switch (method.getName()) {
                  case "handle" -> {
                    onHup.run();
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
