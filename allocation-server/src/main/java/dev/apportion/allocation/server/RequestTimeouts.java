package dev.apportion.allocation.server;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Closes a connection that takes longer than the header timeout to complete a TLS handshake or
 * the headers of any of its requests, the first or a later one on a kept-alive connection: idle
 * timeouts alone let a client that sends one byte now and then hold a connection for ever. The
 * time between requests (nothing sent) is the idle timeout's. One task on the connector's
 * scheduler looks at every open connection a few times per timeout: a connection that has no
 * request yet is closed once it is older than the timeout; a kept-alive one is closed once bytes
 * have been arriving for longer than the timeout without making a request (the checks see the
 * connection's counts of requests and bytes in), so a request is never cut for taking less.
 * Thread-safe.
 */
final class RequestTimeouts implements Connection.Listener {
  private final Scheduler scheduler;
  private final long timeoutNanos;
  private final long tickMillis;
  private final Map<Connection, Watch> open = new ConcurrentHashMap<>();
  private volatile boolean stopped;
  /** Whether the checks run: started at the first connection, once the scheduler runs. */
  private final java.util.concurrent.atomic.AtomicBoolean ticking = new java.util.concurrent.atomic.AtomicBoolean();

  /** What was last seen of one connection. */
  private static final class Watch {
    final long openedNanos = System.nanoTime();
    volatile boolean handshaken;
    long messages;
    long bytes;
    long waitingSince;
  }

  RequestTimeouts(Scheduler scheduler, Duration timeout) {
    this.scheduler = scheduler;
    this.timeoutNanos = timeout.toNanos();
    this.tickMillis = Math.max(50, Math.min(1000, timeout.toMillis() / 4));
  }

  private void schedule() {
    if (!stopped) {
      Scheduler.Task unused = scheduler.schedule(this::check, tickMillis, TimeUnit.MILLISECONDS);
    }
  }

  /** Stops watching (the server stops). */
  void stop() {
    stopped = true;
  }

  @Override
  public void onOpened(Connection connection) {
    if (ticking.compareAndSet(false, true)) {
      schedule();
    }
    Watch w = new Watch();
    if (connection instanceof SslConnection ssl) {
      ssl.addHandshakeListener(
          new SslHandshakeListener() {
            @Override
            public void handshakeSucceeded(Event event) {
              w.handshaken = true;
            }
          });
    }
    open.put(connection, w);
  }

  @Override
  public void onClosed(Connection connection) {
    open.remove(connection);
  }

  private void check() {
    try {
      long now = System.nanoTime();
      for (Map.Entry<Connection, Watch> e : open.entrySet()) {
        Connection c = e.getKey();
        Watch w = e.getValue();
        if (c instanceof SslConnection) {
          if (!w.handshaken && now - w.openedNanos > timeoutNanos) {
            close(c);
          }
        } else {
          long messages = c.getMessagesIn();
          long bytes = c.getBytesIn();
          if (messages == 0) {
            // The first request: its headers within the timeout of the connection's opening.
            if (now - w.openedNanos > timeoutNanos) {
              close(c);
            }
          } else if (messages != w.messages) {
            w.waitingSince = 0; // a request came: whatever was pending completed
          } else if (bytes != w.bytes && w.waitingSince == 0) {
            w.waitingSince = now; // bytes of a request that has not come (yet)
          } else if (w.waitingSince != 0 && now - w.waitingSince > timeoutNanos) {
            close(c);
          }
          w.messages = messages;
          w.bytes = bytes;
        }
      }
    } finally {
      schedule();
    }
  }

  /** Closes the socket itself (below TLS, if any), not only the decrypted view of it. */
  private static void close(Connection c) {
    EndPoint ep = c.getEndPoint();
    while (ep instanceof EndPoint.Wrapper w && w.unwrap() != null && w.unwrap() != ep) {
      ep = w.unwrap();
    }
    ep.close();
    c.getEndPoint().close();
  }
}
