package dev.apportion.allocation.kubernetes;

import static org.junit.jupiter.api.Assertions.fail;

import dev.apportion.allocation.Collector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/** Records every collector set a source delivers, with the time it arrived and its thread. */
final class Deliveries implements Consumer<List<Collector>> {

  static final Duration TIMEOUT = Duration.ofSeconds(10);

  /** One delivery. */
  static final class Delivery {
    final List<Collector> collectors;
    final long nanos;
    final String thread;

    Delivery(List<Collector> collectors, long nanos, String thread) {
      this.collectors = collectors;
      this.nanos = nanos;
      this.thread = thread;
    }

    @Override
    public String toString() {
      return collectors.toString();
    }
  }

  private final LinkedBlockingQueue<Delivery> queue = new LinkedBlockingQueue<>();
  private final List<Delivery> all = new ArrayList<>();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger maxInFlight = new AtomicInteger();

  @Override
  public void accept(List<Collector> collectors) {
    maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
    Delivery d = new Delivery(collectors, System.nanoTime(), Thread.currentThread().getName());
    synchronized (all) {
      all.add(d);
    }
    queue.add(d);
    inFlight.decrementAndGet();
  }

  /** Collectors as "name@node" strings, for readable assertions. */
  static List<String> names(List<Collector> collectors) {
    return collectors.stream().map(Collector::toString).collect(Collectors.toList());
  }

  /** The next delivery; fails after {@link #TIMEOUT}. */
  Delivery next() throws InterruptedException {
    Delivery d = queue.poll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    if (d == null) {
      fail("no delivery within " + TIMEOUT + "; all so far: " + all());
    }
    return d;
  }

  /** Waits for a delivery equal to {@code expected} ("name@node" strings), skipping others. */
  Delivery awaitSet(String... expected) throws InterruptedException {
    List<String> want = Arrays.asList(expected);
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (true) {
      long left = deadline - System.nanoTime();
      Delivery d = left <= 0 ? null : queue.poll(left, TimeUnit.NANOSECONDS);
      if (d == null) {
        fail("no delivery of " + want + " within " + TIMEOUT + "; all so far: " + all());
      }
      if (names(d.collectors).equals(want)) {
        return d;
      }
    }
  }

  /** Asserts that nothing is delivered for {@code quiet}. */
  void assertNothingFor(Duration quiet) throws InterruptedException {
    Delivery d = queue.poll(quiet.toMillis(), TimeUnit.MILLISECONDS);
    if (d != null) {
      fail("unexpected delivery " + d + "; all so far: " + all());
    }
  }

  List<Delivery> all() {
    synchronized (all) {
      return new ArrayList<>(all);
    }
  }

  int maxConcurrent() {
    return maxInFlight.get();
  }
}
