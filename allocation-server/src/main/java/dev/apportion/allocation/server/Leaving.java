package dev.apportion.allocation.server;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.server.AllocationServer.Reply;

/**
 * A collector that goes away on purpose, and what it can wait on before it stops.
 *
 * <ul>
 *   <li>{@code DELETE /targets?collector=NAME} (poll membership only): NAME leaves the collector
 *       set at once and its targets move to the others, make-before-break: it keeps being served
 *       them until their new owners have picked them up. Its polls do not make it a member again
 *       until it has been drained for the membership's expiry window (a restart under the same
 *       name then rejoins as usual). Answers 202. With static or Kubernetes collectors the source
 *       says who leaves (a name removed from the list, a pod being deleted): 409.
 *   <li>{@code GET /drained?collector=NAME}: 200 when NAME owns no target and is held none, under
 *       any replica rank (what it scraped is scraped by others that have had their hold time to
 *       pick it up), else 503. A
 *       {@code preStop} hook or a stop script waits on it:
 *       {@code until curl -fs 'http://server/drained?collector=NAME'; do sleep 1; done}.
 * </ul>
 */
final class Leaving {
  private Leaving() {}

  static Reply leave(PollMembership polls, String collector) {
    if (collector == null || collector.isBlank()) {
      return Reply.error("leave", 400, "the query parameter collector is required");
    }
    if (polls == null) {
      return Reply.error(
          "leave",
          409,
          "collectors come from a static list or Kubernetes: remove the name from the list, or delete the pod");
    }
    if (!polls.leave(collector)) {
      return Reply.error("leave", 400, "not a collector name this server accepts");
    }
    return Reply.text(
        "leave", 202, "leaving: wait for GET /drained?collector=<name> to answer 200, then stop\n");
  }

  static Reply drained(Allocation snapshot, Handover handover, String collector) {
    if (collector == null || collector.isBlank()) {
      return Reply.error("drained", 400, "the query parameter collector is required");
    }
    boolean drained =
        handover == null
            ? snapshot.targetCount(collector) == 0
            : handover.drained(collector, snapshot);
    return drained
        ? Reply.text("drained", 200, "drained\n")
        : Reply.text("drained", 503, "still holding targets\n");
  }
}
