package dev.apportion.allocation.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watch health of one {@link KubernetesCollectorSource}'s informer: logs when the pod watch is
 * lost and when it is back, and decides which failures the informer reports are retried.
 *
 * <p><b>What it does.</b> {@link #check()} samples {@link SharedIndexInformer#isWatching()}; after
 * {@value #LOST_AFTER_CHECKS} consecutive samples that find the watch down it logs a WARN line, and
 * when the watch is open again it logs an INFO line with the outage and asks the delivery for an
 * update (the informer re-listed or resumed, so the set may have moved). {@link
 * #onInformerException} logs a failed list or watch and tells the informer to retry, except that a
 * 401 or 403 on the initial list stops it (the start future then fails with that error).
 *
 * <p><b>Threads.</b> {@link #check()} runs on the source's delivery thread, scheduled there by
 * {@link CoalescingDelivery#runPeriodically}, so checks never overlap each other or a delivery.
 * {@link #onInformerException} runs on whichever fabric8 thread reports the failure, concurrently
 * with anything; it reads final fields and the delivery's volatile closed flag only.
 *
 * <p><b>What guards what.</b> No lock: {@code notWatchingChecks}, {@code reportedLost} and {@code
 * lostSinceNanos} are confined to the delivery thread, the only thread that runs {@link #check()}.
 *
 * <p><b>Why.</b> The informer reconnects by itself; this class only observes it. fabric8 reports no
 * event when a watch closes and reopens, so the watch state is sampled; the consecutive-samples
 * threshold keeps the informer's routine watch restart (a gap of about a second every five to ten
 * minutes) out of the log. Sampling on the delivery thread needs no lock of its own.
 */
final class WatchHealth {

  // The source's logger: the log lines keep the category they have always had.
  private static final Logger LOG = LoggerFactory.getLogger(KubernetesCollectorSource.class);

  /**
   * Consecutive watch checks that must find the watch down before it is reported lost: with the
   * default one-second check, about three seconds. The informer restarts its watch every five to
   * ten minutes with a gap of about a second; that routine gap is not reported.
   */
  static final int LOST_AFTER_CHECKS = 4;

  private final String namespace;
  private final SharedIndexInformer<Pod> informer;
  private final CoalescingDelivery delivery;

  // Delivery thread only.
  private int notWatchingChecks;
  private boolean reportedLost;
  private long lostSinceNanos;

  WatchHealth(String namespace, SharedIndexInformer<Pod> informer, CoalescingDelivery delivery) {
    this.namespace = namespace;
    this.informer = informer;
    this.delivery = delivery;
  }

  /** Runs on the delivery thread: samples the watch once. */
  void check() {
    if (delivery.isClosed() || !delivery.isDelivering()) {
      return;
    }
    if (informer.isWatching()) {
      if (reportedLost) {
        LOG.info(
            "Collector pod watch in namespace {} re-established after {} ms",
            namespace,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lostSinceNanos));
        // The informer re-listed or resumed the watch; make sure the set reflects it.
        delivery.requestUpdate();
      }
      notWatchingChecks = 0;
      reportedLost = false;
      return;
    }
    notWatchingChecks++;
    if (notWatchingChecks == 1) {
      lostSinceNanos = System.nanoTime();
    } else if (notWatchingChecks == LOST_AFTER_CHECKS) {
      reportedLost = true;
      LOG.warn(
          "Collector pod watch in namespace {} was lost; the informer is reconnecting (the last"
              + " collector set stands meanwhile)",
          namespace);
    }
  }

  /** Called by the informer on a failed list or watch, on a fabric8 thread; true to retry. */
  boolean onInformerException(boolean isStarted, Throwable t) {
    if (delivery.isClosed()) {
      return false;
    }
    KubernetesClientException k = kubernetesCause(t);
    int code = k == null ? 0 : k.getCode();
    if (!isStarted && (code == 401 || code == 403)) {
      LOG.error(
          "Listing collector pods in namespace {} was refused ({}): the source needs get, list"
              + " and watch on pods in that namespace; giving up",
          namespace,
          code);
      return false;
    }
    LOG.warn(
        "Collector pod {} in namespace {} failed ({}); the informer retries",
        isStarted ? "watch" : "list",
        namespace,
        k != null ? "HTTP " + code + ": " + k.getMessage() : String.valueOf(t));
    return true;
  }

  /** The first KubernetesClientException in the cause chain, or null. */
  static KubernetesClientException kubernetesCause(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof KubernetesClientException k) {
        return k;
      }
    }
    return null;
  }
}
