package dev.apportion.allocation.kubernetes;

import dev.apportion.allocation.Collector;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatus;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The rules that decide which pods are collectors. Pure functions of the pods, the current time and
 * the grace period, apart from a small memory of when a pod without a usable Ready transition time
 * was first seen not ready, and of which pods have been Ready (the Ready-first rule). Not thread-safe: {@link CoalescingDelivery} calls it from the source's
 * single delivery thread only.
 */
final class CollectorRules {

  /** The outcome of one evaluation of the pod set. */
  static final class Result {
    private final List<Collector> collectors;
    private final Instant nextDeadline;

    Result(List<Collector> collectors, Instant nextDeadline) {
      this.collectors = collectors;
      this.nextDeadline = nextDeadline;
    }

    /** The collectors, sorted by name, immutable. */
    List<Collector> collectors() {
      return collectors;
    }

    /**
     * The earliest instant at which a pod that is a collector now stops being one because its grace
     * period runs out, or null when no such instant is pending.
     */
    Instant nextDeadline() {
      return nextDeadline;
    }
  }

  private static final Comparator<Collector> BY_NAME = Comparator.comparing(Collector::name);

  private final Duration notReadyGracePeriod;
  private final boolean readyFirst;
  /** Whether a pod without the capacity annotation weighs its memory request. */
  private final boolean capacityFromMemoryRequest;
  /** Pods seen not ready whose Ready condition carries no usable transition time: first seen at. */
  private final Map<String, Instant> notReadySince = new HashMap<>();
  /**
   * Pods (by uid, else by name) seen Ready at least once: the Ready-first rule's memory. Only
   * membership is asked, never an order.
   */
  private final Set<String> everReady = new HashSet<>();

  /**
   * Rules without the Ready-first rule (every scheduled pod is a collector until its grace period
   * runs out), for the tests of the grace period alone.
   *
   * @param notReadyGracePeriod zero disables the readiness rules
   */
  CollectorRules(Duration notReadyGracePeriod) {
    this(notReadyGracePeriod, false);
  }

  /**
   * @param notReadyGracePeriod zero disables the readiness rules, Ready-first included
   * @param readyFirst whether a pod must have been Ready once before it is a collector
   */
  CollectorRules(Duration notReadyGracePeriod, boolean readyFirst) {
    this(notReadyGracePeriod, readyFirst, false);
  }

  /**
   * @param notReadyGracePeriod zero disables the readiness rules, Ready-first included
   * @param readyFirst whether a pod must have been Ready once before it is a collector
   * @param capacityFromMemoryRequest whether a pod without the capacity annotation weighs its
   *     memory request ({@link PodCapacity})
   */
  CollectorRules(Duration notReadyGracePeriod, boolean readyFirst, boolean capacityFromMemoryRequest) {
    this.notReadyGracePeriod = notReadyGracePeriod;
    this.readyFirst = readyFirst;
    this.capacityFromMemoryRequest = capacityFromMemoryRequest;
  }

  /**
   * Evaluates every pod.
   *
   * @param pods the pods the informer currently holds
   * @param now the current time
   * @return the collectors and the next instant at which the result changes without an event
   */
  Result evaluate(Collection<Pod> pods, Instant now) {
    List<Collector> collectors = new ArrayList<>(pods.size());
    Instant nextDeadline = null;
    for (Pod pod : pods) {
      ObjectMeta meta = pod.getMetadata();
      if (meta == null || meta.getName() == null || meta.getName().isBlank()) {
        continue;
      }
      String name = meta.getName();
      // Rule: a pod marked for deletion is terminating and gives up its node at once.
      if (meta.getDeletionTimestamp() != null) {
        continue;
      }
      // Rule: a pod not yet scheduled has no node and is not a collector yet.
      String node = nodeName(pod);
      if (node == null) {
        continue;
      }
      // Rule: a pod that finished will never run again.
      String phase = phase(pod);
      if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
        continue;
      }
      if (!notReadyGracePeriod.isZero() && readyFirst) {
        // Rule: a pod becomes a collector only once it has been Ready. A surge pod that is
        // scheduled but not running yet must not take its node's targets (its smaller name would
        // win the node) before it can scrape them; the old pod, or the fallback, keeps them.
        String id = identity(meta);
        if (hasBeenReady(pod, phase)) {
          everReady.add(id);
        } else if (!everReady.contains(id)) {
          continue;
        }
      }
      if (!notReadyGracePeriod.isZero()) {
        Instant deadline = graceDeadline(pod, name, phase, now);
        if (deadline != null) {
          if (!now.isBefore(deadline)) {
            continue; // Rule: not ready for longer than the grace period.
          }
          if (nextDeadline == null || deadline.isBefore(nextDeadline)) {
            nextDeadline = deadline;
          }
        }
      }
      Collector collector = Collector.of(name, node);
      double capacity = PodCapacity.of(pod, capacityFromMemoryRequest);
      collectors.add(capacity == 1.0 ? collector : collector.withCapacity(capacity));
    }
    if (!notReadySince.isEmpty()) {
      Set<String> present =
          pods.stream()
              .map(Pod::getMetadata)
              .filter(m -> m != null && m.getName() != null)
              .map(ObjectMeta::getName)
              .collect(Collectors.toSet());
      notReadySince.keySet().retainAll(present);
    }
    if (!everReady.isEmpty()) {
      Set<String> present =
          pods.stream()
              .map(Pod::getMetadata)
              .filter(m -> m != null && m.getName() != null)
              .map(CollectorRules::identity)
              .collect(Collectors.toSet());
      everReady.retainAll(present);
    }
    collectors.sort(BY_NAME);
    return new Result(List.copyOf(collectors), nextDeadline);
  }

  /**
   * The instant at which the pod's grace period runs out, or null when the pod is healthy (Ready,
   * or without a Ready condition and running or not yet started). Follows upstream's
   * {@code collector_not_ready_grace_period}: a Ready condition that is not {@code True} counts
   * from its last transition; a phase other than {@code Running} counts from the pod's start time.
   */
  private Instant graceDeadline(Pod pod, String name, String phase, Instant now) {
    Instant since = null;
    PodStatus status = pod.getStatus();
    if (status != null && status.getConditions() != null) {
      for (PodCondition condition : status.getConditions()) {
        if ("Ready".equals(condition.getType()) && !"True".equals(condition.getStatus())) {
          Instant transition = parse(condition.getLastTransitionTime());
          if (transition == null) {
            transition = notReadySince.computeIfAbsent(name, n -> now);
          }
          since = transition;
          break;
        }
      }
    }
    if (since == null) {
      notReadySince.remove(name);
    }
    if (!"Running".equals(phase) && status != null) {
      Instant started = parse(status.getStartTime());
      if (started != null && (since == null || started.isBefore(since))) {
        since = started;
      }
    }
    return since == null ? null : since.plus(notReadyGracePeriod);
  }

  /** The uid, which a pod re-created under the same name does not share; else the name. */
  private static String identity(ObjectMeta meta) {
    String uid = meta.getUid();
    return uid == null || uid.isEmpty() ? "name:" + meta.getName() : uid;
  }

  /**
   * Whether the pod is Ready now: its Ready condition is {@code True}; or, for a pod that reports
   * no Ready condition (judged by its phase alone, as by the grace rule), its phase is not
   * {@code Pending}.
   */
  private static boolean hasBeenReady(Pod pod, String phase) {
    PodStatus status = pod.getStatus();
    if (status != null && status.getConditions() != null) {
      for (PodCondition condition : status.getConditions()) {
        if ("Ready".equals(condition.getType())) {
          return "True".equals(condition.getStatus());
        }
      }
    }
    return !"Pending".equals(phase);
  }

  private static String nodeName(Pod pod) {
    PodSpec spec = pod.getSpec();
    if (spec == null || spec.getNodeName() == null || spec.getNodeName().isEmpty()) {
      return null;
    }
    return spec.getNodeName();
  }

  private static String phase(Pod pod) {
    return pod.getStatus() == null ? null : pod.getStatus().getPhase();
  }

  private static Instant parse(String timestamp) {
    if (timestamp == null || timestamp.isEmpty()) {
      return null;
    }
    try {
      return OffsetDateTime.parse(timestamp).toInstant();
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}
