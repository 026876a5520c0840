package dev.apportion.allocation.server;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.nio.file.Path;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reloads the service's config on {@code SIGHUP} and {@code POST /-/reload}, as Prometheus does:
 * the file is read and checked whole; a bad one leaves the running config in place, is logged at
 * ERROR and exported ({@code apportion_server_config_last_reload_successful 0}). A good one is built
 * into a new allocator, feed and collector source beside the running ones, read once, and swapped in
 * under the same listener ({@link Service#reloaded}); an unchanged file changes nothing.
 *
 * <p>A reload that changes nothing logs nothing. {@code POST /-/reload} reloads only when enabled
 * ({@link #overHttp()}); its answer never quotes the file (the log says why a reload failed).
 *
 * <p>Thread-safe: reloads are serialized. {@link #reload()} blocks while the new config's sources
 * are read (at most its {@code requestTimeout}, plus the collectors' first delivery).
 */
final class Reloader implements AllocationServer.Reload {
  private static final Logger LOG = LoggerFactory.getLogger(Reloader.class);

  private final Path file;
  private final boolean overHttp;
  private final Object lock = new Object();

  @GuardedBy("lock")
  private Service current;

  private volatile boolean lastSuccessful = true;
  private volatile long lastSuccessMillis = System.currentTimeMillis();
  /** The last failed reload's message; null while none failed. */
  private volatile String lastError;

  /**
   * @param file the config file
   * @param overHttp whether {@code POST /-/reload} reloads too ({@code --web.enable-lifecycle});
   *     {@code SIGHUP} always does
   */
  Reloader(Path file, boolean overHttp) {
    this.file = Objects.requireNonNull(file, "file");
    this.overHttp = overHttp;
  }

  /** Whether {@code POST /-/reload} is enabled. */
  boolean overHttp() {
    return overHttp;
  }

  /** Sets the service first started; called once, before any reload. */
  void started(Service service) {
    synchronized (lock) {
      current = service;
    }
  }

  /** The service now running. */
  Service current() {
    synchronized (lock) {
      return current;
    }
  }

  /** Whether the last reload succeeded (true before the first). Never blocks. */
  boolean lastSuccessful() {
    return lastSuccessful;
  }

  /** When the config was last loaded successfully, in epoch milliseconds. Never blocks. */
  long lastSuccessMillis() {
    return lastSuccessMillis;
  }

  /** The last failed reload's message (unescaped); null while none failed. Never blocks. */
  String lastError() {
    return lastError;
  }

  @Override
  public String reload() throws ConfigException {
    synchronized (lock) {
      try {
        ServerConfig next = ServerConfig.read(file);
        if (next.equals(current.config())) {
          // Nothing changed, nothing logged: a caller polling the endpoint fills no log.
          lastSuccessful = true;
          lastSuccessMillis = System.currentTimeMillis();
          return "unchanged";
        }
        current = current.reloaded(next);
        lastSuccessful = true;
        lastSuccessMillis = System.currentTimeMillis();
        LOG.info("config reloaded from {}", file);
        return "reloaded";
      } catch (ConfigException e) {
        lastSuccessful = false;
        lastError = e.getMessage();
        LOG.error("reloading the config failed; the running config stays: {}", LogSafe.text(e.getMessage()));
        throw e;
      } catch (RuntimeException e) {
        lastSuccessful = false;
        lastError = e.toString();
        LOG.error("reloading the config failed; the running config stays", e);
        throw new ConfigException(LogSafe.text(e.toString()));
      }
    }
  }

  /** {@link #reload()} for a signal: the outcome is logged (and exported), nothing thrown. */
  void reloadLogged() {
    try {
      reload();
    } catch (ConfigException e) {
      // logged and exported by reload()
    }
  }
}
