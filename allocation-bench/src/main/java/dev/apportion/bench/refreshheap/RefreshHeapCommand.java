package dev.apportion.bench.refreshheap;

import com.sun.management.GarbageCollectionNotificationInfo;
import com.sun.net.httpserver.HttpServer;
import dev.apportion.allocation.Allocator;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.server.TargetFeed;
import dev.apportion.allocation.server.TargetSource;
import dev.apportion.bench.jmh.ServerRefreshTime;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.Charset;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code apportion refresh-heap}: how much the heap grows while {@code allocation-server}
 * refreshes one HTTP SD source, the answer of {@link ServerRefreshTime} (100,000 targets, 26.5 MB
 * of JSON) served over loopback.
 *
 * <pre>
 * java -Xmx256m -Xmn8m -jar allocation-bench/target/apportion.jar refresh-heap
 * </pre>
 *
 * <p><b>How.</b> Before each refresh, two {@code System.gc()} and the used heap (the sum of the
 * heap memory pools) as the base. During the refresh a listener records the heap used after each
 * garbage collection; the growth is the largest of those less the base: what was alive at a
 * collection during the refresh beyond what was alive before it. A refresh without a collection
 * gives no figure, so run it with a small young generation ({@code -Xmn8m}: a collection every
 * few MB allocated). After the refresh, two {@code System.gc()} again give what the refresh kept.
 * This is growth, not allocation: JMH's {@code -prof gc} counts every byte allocated, garbage or
 * not.
 */
@Command(name = "refresh-heap", mixinStandardHelpOptions = true, sortOptions = false,
    description = {
      "Measures the heap growth during a refresh of one HTTP SD source: the largest heap used "
          + "after a garbage collection during the refresh, less the heap used before it."},
    exitCodeOnInvalidInput = 2)
public final class RefreshHeapCommand implements Callable<Integer> {
  /** Which refresh is measured. */
  enum Mode {
    /** The same answer again, on the same source and allocator (through the feed). */
    UNCHANGED,
    /** A new source and allocator each time (through the feed). */
    FIRST,
    /** The same answer again, the source's read alone (no feed, no allocator). */
    READ
  }

  @Option(names = "--targets", defaultValue = "100000",
      description = "Targets in the answer. Default: ${DEFAULT-VALUE}.")
  int targets;

  @Option(names = "--refreshes", defaultValue = "5",
      description = "Refreshes measured (after one untimed). Default: ${DEFAULT-VALUE}.")
  int refreshes;

  @Option(names = "--mode", defaultValue = "UNCHANGED",
      description = "UNCHANGED, FIRST or READ. Default: ${DEFAULT-VALUE}.")
  Mode mode;

  private PrintStream out = System.out;

  /** The largest heap used after a collection since {@link #reset}, and how many collections. */
  private static final class AfterGc implements NotificationListener {
    private long max;
    private int count;

    synchronized void reset() {
      max = 0;
      count = 0;
    }

    synchronized long max() {
      return max;
    }

    synchronized int count() {
      return count;
    }

    @Override
    public synchronized void handleNotification(Notification n, Object handback) {
      if (!n.getType().equals(GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION)) {
        return;
      }
      GarbageCollectionNotificationInfo info =
          GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
      long after = 0;
      for (MemoryUsage u : info.getGcInfo().getMemoryUsageAfterGc().values()) {
        after += u.getUsed();
      }
      max = Math.max(max, after);
      count++;
    }
  }

  /**
   * Runs the command.
   *
   * @param args the arguments after {@code refresh-heap}
   * @param out where the figures go
   * @param err where errors go
   * @return the exit code: 0, or 2 for bad input
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    RefreshHeapCommand command = new RefreshHeapCommand();
    command.out = out;
    CommandLine cli = new CommandLine(command);
    cli.setOut(new PrintWriter(out, true, Charset.defaultCharset()));
    cli.setErr(new PrintWriter(err, true, Charset.defaultCharset()));
    cli.setParameterExceptionHandler((e, a) -> {
      err.println("apportion refresh-heap: " + e.getMessage() + " (see refresh-heap --help)");
      return 2;
    });
    cli.setExecutionExceptionHandler((e, c, p) -> {
      if (e instanceof IllegalArgumentException) {
        err.println("apportion refresh-heap: " + e.getMessage());
        return 2;
      }
      throw e;
    });
    return cli.execute(args);
  }

  private static long usedHeap() {
    long used = 0;
    for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
      if (p.getType() == MemoryType.HEAP) {
        used += p.getUsage().getUsed();
      }
    }
    return used;
  }

  private static long settledHeap() throws InterruptedException {
    System.gc();
    System.gc();
    Thread.sleep(200);
    return usedHeap();
  }

  @Override
  public Integer call() throws IOException, InterruptedException, ListenerNotFoundException {
    if (targets < 1 || refreshes < 1) {
      throw new IllegalArgumentException("--targets and --refreshes must be at least 1");
    }
    byte[] answer = ServerRefreshTime.answer(targets);
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
    server.createContext("/sd", ex -> {
      ex.sendResponseHeaders(200, answer.length);
      try (OutputStream body = ex.getResponseBody()) {
        body.write(answer);
      }
    });
    server.start();
    AfterGc afterGc = new AfterGc();
    List<NotificationEmitter> emitters = new ArrayList<>();
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (gc instanceof NotificationEmitter e) {
        e.addNotificationListener(afterGc, null, null);
        emitters.add(e);
      }
    }
    try {
      URI url = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/sd");
      HttpClient client = HttpClient.newHttpClient();
      List<Collector> collectors = new ArrayList<>(1000);
      for (int j = 0; j < 1000; j++) {
        collectors.add(Collector.of("collector-" + j, "node-" + j));
      }
      out.printf("answer: %d targets, %d bytes; mode %s%n", targets, answer.length, mode);
      Refresher r = new Refresher(url, client, collectors);
      r.refresh(mode == Mode.READ);
      List<Long> growths = new ArrayList<>();
      for (int i = 0; i < refreshes; i++) {
        if (mode == Mode.FIRST) {
          r.renew();
        }
        long base = settledHeap();
        afterGc.reset();
        long start = System.nanoTime();
        r.refresh(mode == Mode.READ);
        long ms = (System.nanoTime() - start) / 1_000_000;
        Thread.sleep(300); // the notifications of the refresh's collections arrive
        int collections = afterGc.count();
        long growth = afterGc.max() - base;
        long kept = settledHeap() - base;
        if (collections > 0) {
          growths.add(growth);
        }
        out.printf(
            "refresh %d: %d ms, %d collections during it, growth %s, kept %.1f MB%n",
            i, ms, collections,
            collections == 0 ? "unknown (no collection: use -Xmn8m)"
                : String.format("%.1f MB (%.2fx the answer)", growth / 1e6,
                    growth / (double) answer.length),
            kept / 1e6);
      }
      r.close();
      if (!growths.isEmpty()) {
        Collections.sort(growths);
        long median = growths.get(growths.size() / 2);
        long max = growths.get(growths.size() - 1);
        out.printf("growth: median %.1f MB (%.2fx the answer), max %.1f MB (%.2fx)%n",
            median / 1e6, median / (double) answer.length, max / 1e6,
            max / (double) answer.length);
      }
      return 0;
    } finally {
      for (NotificationEmitter e : emitters) {
        e.removeNotificationListener(afterGc);
      }
      server.stop(0);
    }
  }

  /** A feed over one HTTP SD source, as {@link ServerRefreshTime} builds it, and the source. */
  private static final class Refresher {
    private final URI url;
    private final HttpClient client;
    private final List<Collector> collectors;
    private final TargetSource source;
    private Allocator allocator;
    private TargetFeed feed;
    private List<?> held = List.of();

    Refresher(URI url, HttpClient client, List<Collector> collectors) {
      this.url = url;
      this.client = client;
      this.collectors = collectors;
      this.source = TargetSource.httpSd("pods", url, client, Duration.ofSeconds(60));
      renew();
    }

    void renew() {
      if (feed != null) {
        feed.close();
      }
      allocator = Allocators.builder(Allocators.CONSISTENT_HASHING).build();
      allocator.setCollectors(collectors);
      TargetSource s = TargetSource.httpSd("pods", url, client, Duration.ofSeconds(60));
      feed = TargetFeed.builder(allocator).source(s).readTimeout(Duration.ofSeconds(60)).build();
    }

    void refresh(boolean readOnly) throws IOException, InterruptedException {
      if (readOnly) {
        held = source.read();
        return;
      }
      feed.refresh();
      if (allocator.snapshot().targets().isEmpty()) {
        throw new IllegalStateException("nothing placed");
      }
    }

    void close() {
      feed.close();
      held = List.of();
    }

    @Override
    public String toString() {
      return "Refresher{" + held.size() + " targets held by the read}";
    }
  }
}
