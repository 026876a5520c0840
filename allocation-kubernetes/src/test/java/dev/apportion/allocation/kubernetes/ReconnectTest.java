package dev.apportion.allocation.kubernetes;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A lost watch: the API server goes away and comes back on the same address with the same state.
 * The informer reconnects by itself, and the source says so in its log.
 */
class ReconnectTest {

  private static final String NS = "monitoring";

  private final KubernetesCrudDispatcher dispatcher = new KubernetesCrudDispatcher();
  private KubernetesMockServer server;
  private KubernetesClient client;
  private final PrintStream originalErr = System.err;
  private final ByteArrayOutputStream log = new ByteArrayOutputStream();

  private KubernetesMockServer newServer() {
    return new KubernetesMockServer(
        new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
  }

  @AfterEach
  void tearDown() {
    System.setErr(originalErr);
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.destroy();
    }
  }

  @Test
  void lostWatchReconnectsByItselfAndSaysSoInTheLog() throws Exception {
    // slf4j-simple writes to whatever System.err is at the time: tee it.
    System.setErr(new PrintStream(new Tee(originalErr, log), true, StandardCharsets.UTF_8));

    server = newServer();
    server.init(InetAddress.getLoopbackAddress(), 0);
    int port = server.getPort();
    client = server.createClient();
    Pods pods = new Pods(client, NS);
    pods.create("collector-a", "node-1");

    Deliveries deliveries = new Deliveries();
    try (KubernetesCollectorSource source =
        KubernetesCollectorSource.builder()
            .client(client)
            .namespace(NS)
            .labelSelector(Pods.SELECTOR)
            .coalescingInterval(Duration.ofMillis(50))
            .watchCheckInterval(Duration.ofMillis(100))
            .consumer(deliveries)
            .build()) {
      source.start().get(10, TimeUnit.SECONDS);
      deliveries.awaitSet("collector-a@node-1");
      await(source::isWatching, "the watch to open");

      server.destroy(); // the API server goes away: the watch is lost
      await(() -> !source.isWatching(), "the watch to be reported lost");
      await(() -> logged("Collector pod watch in namespace " + NS + " was lost"), "the lost line");

      server = newServer(); // back, same address, same state
      server.init(InetAddress.getLoopbackAddress(), port);
      await(source::isWatching, "the informer to reconnect");
      await(() -> logged("Collector pod watch in namespace " + NS + " re-established"), "the line");

      pods.create("collector-b", "node-2"); // events flow again
      deliveries.awaitSet("collector-a@node-1", "collector-b@node-2");
      server.destroy(); // before the source closes its watch: see KubernetesCollectorSourceTest
    }
    assertFalse(logged("giving up"));
    assertTrue(logged("Stopped watching collector pods in namespace " + NS));
  }

  private boolean logged(String text) {
    return log.toString(StandardCharsets.UTF_8).contains(text);
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out waiting for " + what);
      }
      Thread.sleep(25);
    }
  }

  /** Writes to two streams. */
  private static final class Tee extends OutputStream {
    private final PrintStream a;
    private final ByteArrayOutputStream b;

    Tee(PrintStream a, ByteArrayOutputStream b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public synchronized void write(int c) {
      a.write(c);
      b.write(c);
    }

    @Override
    public synchronized void write(byte[] buf, int off, int len) {
      a.write(buf, off, len);
      b.write(buf, off, len);
    }
  }
}
