package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.AllocationChange;
import dev.apportion.allocation.Allocators;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Move;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.spi.AllocatorSpec;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The kit's invariants, each a named, documented {@link Invariant}, and the profiles that hold
 * each built-in strategy to the ones it promises.
 *
 * <table>
 *   <caption>Which profile checks what</caption>
 *   <tr><th>invariant</th><th>consistent-hashing</th><th>rendezvous</th><th>least-weighted</th>
 *       <th>per-node</th><th>any strategy ({@link #common()})</th></tr>
 *   <tr><td>{@link #completeness()}, {@link #latestLabels()}, {@link #idempotence()},
 *       {@link #reportedMoves()}</td><td>yes</td><td>yes</td><td>yes</td><td>yes</td>
 *       <td>yes</td></tr>
 *   <tr><td>{@link #allAssigned()}</td><td>yes</td><td>yes</td><td>yes</td><td>yes</td>
 *       <td></td></tr>
 *   <tr><td>{@link #determinism()}</td><td>yes</td><td>yes</td><td>exempt</td><td>yes</td>
 *       <td></td></tr>
 *   <tr><td>movement</td><td>{@link #boundedMovement}</td><td>{@link #minimalMovement()}</td>
 *       <td>{@link #onlyOrphansMove()}</td><td></td><td></td></tr>
 *   <tr><td>{@link #boundedLoad}</td><td>yes</td><td></td><td></td><td></td><td></td></tr>
 *   <tr><td>{@link #nodeLocality()}</td><td></td><td></td><td></td><td>yes</td><td></td></tr>
 * </table>
 *
 * <p>Snapshot consistency under concurrent writes is checked separately, by
 * {@link PropertyRunner#checkConcurrentSnapshots()}, because it needs a writer thread.
 *
 * <p>Every invariant here is stateless and thread-safe. A check allocates (it builds lookup
 * maps over the targets) and never blocks; {@link #determinism()} also builds fresh allocators.
 *
 * @since 0.1.0
 */
public final class Invariants {
  /**
   * The factor of the movement bound {@link #forStrategy} holds {@code consistent-hashing} to
   * (see {@link #boundedMovement}).
   */
  public static final double CH_MOVEMENT_FACTOR = 2.0;

  /**
   * The additive slack of that bound. Measured with the default generator over 100,000
   * scenarios (297,608 steps that add or remove one collector): the excess over
   * {@code 2 x baseline} never passed 8, and its frequency falls about threefold per unit.
   */
  public static final int CH_MOVEMENT_SLACK = 10;

  /**
   * The factor of the replica movement bound every profile holds a strategy to (see
   * {@link #replicaMovement}): the primaries move as the strategy moves them and the further
   * replicas as a consistent-hash ring under bounded loads moves them, so the bound is
   * {@code consistent-hashing}'s, {@value #CH_MOVEMENT_FACTOR}, per rank.
   */
  public static final double REPLICA_MOVEMENT_FACTOR = CH_MOVEMENT_FACTOR;

  /**
   * The additive slack of that bound, per replica: {@value #CH_MOVEMENT_SLACK}, as for one
   * replica, since each rank can move what one replica's placement would beyond what had to.
   */
  public static final int REPLICA_MOVEMENT_SLACK = CH_MOVEMENT_SLACK;

  /** Up to this many targets, {@link #determinism()} tries every history at every step. */
  public static final int ALL_HISTORIES_UP_TO = 64;

  /** Problems listed in one failure description at most; the rest are counted. */
  private static final int MAX_LISTED = 5;

  /** Stable on every JVM: the identity hash is, and ties (never seen) fall to the text. */
  private static final Comparator<Target> ORDER =
      Comparator.comparingLong(Target::hash).thenComparing(Target::toString);

  private Invariants() {}

  /**
   * The invariants a strategy of this name promises (see the class table). Unknown names, such
   * as your own strategy's, get {@link #common()}: add the others your strategy promises.
   *
   * @param strategy a strategy's name
   * @return a new list
   * @throws NullPointerException if {@code strategy} is null
   */
  public static List<Invariant> forStrategy(String strategy) {
    Objects.requireNonNull(strategy, "strategy must not be null");
    List<Invariant> out = new ArrayList<>(common());
    out.addAll(switch (strategy) {
      case Allocators.CONSISTENT_HASHING -> List.of(allAssigned(), determinism(),
          boundedLoad(AllocatorSpec.DEFAULT_LOAD_FACTOR),
          boundedMovement(CH_MOVEMENT_FACTOR, CH_MOVEMENT_SLACK), replicaSpread(),
          replicaMovement(REPLICA_MOVEMENT_FACTOR, REPLICA_MOVEMENT_SLACK));
      case Allocators.RENDEZVOUS -> List.of(allAssigned(), determinism(), minimalMovement(),
          replicaSpread(), replicaMovement(REPLICA_MOVEMENT_FACTOR, REPLICA_MOVEMENT_SLACK));
      case Allocators.LEAST_WEIGHTED -> List.of(allAssigned(), onlyOrphansMove(),
          replicaSpread(), replicaMovement(REPLICA_MOVEMENT_FACTOR, REPLICA_MOVEMENT_SLACK));
      case Allocators.PER_NODE -> List.of(allAssigned(), determinism(), nodeLocality(),
          replicaLocality(), replicaMovement(REPLICA_MOVEMENT_FACTOR, REPLICA_MOVEMENT_SLACK));
      default -> List.of();
    });
    return out;
  }

  /**
   * What every allocator owes by the {@link dev.apportion.allocation.Allocator} contract:
   * {@link #completeness()}, {@link #latestLabels()}, {@link #idempotence()} and
   * {@link #reportedMoves()}.
   *
   * @return a new list
   */
  public static List<Invariant> common() {
    return new ArrayList<>(List.of(completeness(), latestLabels(), idempotence(),
        reportedMoves()));
  }

  /**
   * <b>completeness</b>: after every step, every known target is assigned to exactly one live
   * collector or is in {@code unassigned()}; never both, never lost. With k replicas: every known
   * target has at most k distinct live owners ({@link Allocation#ownersOf}, no collector twice,
   * its {@code collectorOf} first when it has one), each listing it in {@code targetsFor}, and is
   * in {@code unassigned()} exactly when it has fewer than k; each collector's lists hold exactly
   * the targets that name it among their owners. In detail, for the snapshot after the step's
   * call:
   * <ul>
   *   <li>{@code collectors()} is the effective collector set (names and nodes; during an empty
   *       set blip, the last non-empty one);
   *   <li>{@code targets()} is exactly the model's targets, by identity;
   *   <li>each target has a {@code collectorOf} naming a live collector and is listed in that
   *       collector's {@code targetsFor} its job, or is in {@code unassigned()}, not both;
   *   <li>the per-collector views agree: {@code jobsFor} lists no empty job, every listed target
   *       names that collector in {@code collectorOf}, {@code targetCount} is the listed count,
   *       and the listed targets plus {@code unassigned()} add up to {@code targets()}.
   * </ul>
   *
   * @return the invariant
   */
  public static Invariant completeness() {
    return new Named("completeness", "Invariants.completeness()") {
      @Override
      public String check(Transition t) {
        Problems p = new Problems();
        Set<Collector> want = new HashSet<>(t.inputsAfter().collectors());
        Set<Collector> have = new HashSet<>(t.after().collectors());
        if (!want.equals(have)) {
          p.add("collectors() is " + new TreeSet<>(have) + " but the effective set is "
              + new TreeSet<>(want));
        }
        structure(t.after(), t.inputsAfter().targets(), names(want), p);
        return p.describe();
      }
    };
  }

  /**
   * <b>latest-labels</b>: every known target, as {@code targets()} and {@code targetsFor} return
   * it, carries the labels of the last copy given ({@code __meta_*} included): a meta-only change
   * or a duplicate in one call never leaves stale labels behind.
   *
   * @return the invariant
   */
  public static Invariant latestLabels() {
    return new Named("latest-labels", "Invariants.latestLabels()") {
      @Override
      public String check(Transition t) {
        Problems p = new Problems();
        Allocation a = t.after();
        Map<Target, Target> held = new HashMap<>();
        for (Target x : a.targets()) {
          held.put(x, x);
        }
        for (Target want : sorted(t.inputsAfter().targets())) {
          Target have = held.get(want);
          if (have != null && !have.sameLabels(want)) {
            p.add(want + " is held with labels " + have.labels() + ", not its latest "
                + want.labels());
            continue;
          }
          for (String c : a.ownersOf(want)) {
            for (Target listed : a.targetsFor(c, want.job())) {
              if (listed.equals(want) && !listed.sameLabels(want)) {
                p.add(want + " is listed for " + c + " with labels " + listed.labels()
                    + ", not its latest " + want.labels());
              }
            }
          }
        }
        return p.describe();
      }
    };
  }

  /**
   * <b>idempotence</b>: re-applying the same input moves nothing. Two cases:
   * <ul>
   *   <li>the runner repeats every call with the same arguments: the snapshot after the repeat
   *       assigns every target as the one before it did;
   *   <li>a call that leaves the effective inputs unchanged (the same targets by identity and the
   *       same effective collectors: an empty collector set blip, a set sent again, a meta-only
   *       relabel, duplicates in one call) moves no target.
   * </ul>
   *
   * @return the invariant
   */
  public static Invariant idempotence() {
    return new Named("idempotence", "Invariants.idempotence()") {
      @Override
      public String check(Transition t) {
        Problems p = new Problems();
        List<Target> targets = t.inputsAfter().targets();
        for (Target x : sorted(targets)) {
          String once = ownerText(t.after(), x);
          String twice = ownerText(t.repeated(), x);
          if (!once.equals(twice)) {
            p.add("repeating the call moved " + x + ": " + once + " -> " + twice);
          }
        }
        if (p.isEmpty() && t.inputsBefore().sameEffective(t.inputsAfter())) {
          for (Target x : sorted(targets)) {
            String was = ownerText(t.before(), x);
            String now = ownerText(t.after(), x);
            if (!was.equals(now)) {
              p.add("a call that changed no effective input moved " + x + ": " + was
                  + " -> " + now);
            }
          }
        }
        return p.describe();
      }
    };
  }

  /**
   * <b>reported-moves</b>: the allocator's listener hears of exactly one change per call, and
   * it tells the truth: its {@code cause} is the call made, its {@code moves()} are exactly the
   * targets whose collector differs between the snapshots before and after (new targets placed,
   * removed targets, reassignments, targets left unassigned), its {@code reassigned()} counts the
   * known targets that left a collector, its {@code after()} assigns as the published snapshot
   * does, and the repeat of a call reports no move. Holds vacuously when the runner cannot observe
   * the listener ({@link PropertyRunner#forAllocator}).
   *
   * @return the invariant
   */
  public static Invariant reportedMoves() {
    return new Named("reported-moves", "Invariants.reportedMoves()") {
      @Override
      public String check(Transition t) {
        if (t.changes().isEmpty()) {
          return null;
        }
        Problems p = new Problems();
        List<AllocationChange> changes = t.changes().get();
        List<AllocationChange> repeats = t.repeatChanges().orElse(List.of());
        if (changes.size() != 1 || repeats.size() != 1) {
          p.add("the listener heard " + changes.size() + " change(s) for the call and "
              + repeats.size() + " for its repeat; one each expected");
          return p.describe();
        }
        AllocationChange c = changes.get(0);
        AllocationChange.Cause cause = t.isCollectorCall()
            ? AllocationChange.Cause.SET_COLLECTORS : AllocationChange.Cause.SET_TARGETS;
        if (c.cause() != cause) {
          p.add("cause " + c.cause() + " reported for a " + cause + " call");
        }
        Set<Target> universe = new HashSet<>(t.inputsBefore().targets());
        universe.addAll(t.inputsAfter().targets());
        Set<Target> known = new HashSet<>(t.inputsAfter().targets());
        int k = t.after().replicas();
        Map<Target, List<Move>> reported = new HashMap<>();
        for (Move m : c.moves()) {
          reported.computeIfAbsent(m.target(), x -> new ArrayList<>()).add(m);
        }
        int reassigned = 0;
        for (Target x : sorted(union(universe, reported.keySet()))) {
          List<Move> ms = reported.getOrDefault(x, List.of());
          reassigned += Replicas.checkMoves(x, t.before().ownersOf(x), t.after().ownersOf(x), k,
              ms, known.contains(x), p);
        }
        if (c.reassigned() != reassigned) {
          p.add("reassigned() is " + c.reassigned() + ", " + reassigned
              + (k == 1 ? " targets were" : " replicas were"));
        }
        for (Target x : sorted(t.inputsAfter().targets())) {
          if (!ownerText(c.after(), x).equals(ownerText(t.after(), x))) {
            p.add("the change's after() places " + x + " on " + ownerText(c.after(), x)
                + ", the published snapshot on " + ownerText(t.after(), x));
          }
        }
        if (!repeats.get(0).moves().isEmpty()) {
          p.add("the repeat of the call reported moves " + repeats.get(0).moves());
        }
        return p.describe();
      }
    };
  }

  /**
   * <b>all-assigned</b>: once a non-empty collector set has been given, no target is unassigned;
   * with k replicas, every target has {@code min(k, c)} owners on {@code c} effective collectors
   * (k distinct owners whenever at least k collectors exist).
   * Holds for every built-in strategy except {@code per-node} without a fallback.
   *
   * @return the invariant
   */
  public static Invariant allAssigned() {
    return new Named("all-assigned", "Invariants.allAssigned()") {
      @Override
      public String check(Transition t) {
        if (t.inputsAfter().collectors().isEmpty()) {
          return null;
        }
        Problems p = new Problems();
        int want = Math.min(t.after().replicas(), t.inputsAfter().collectors().size());
        for (Target x : sorted(t.inputsAfter().targets())) {
          List<String> owners = t.after().ownersOf(x);
          if (t.after().collectorOf(x).isEmpty()) {
            p.add(x + " is unassigned although collectors " + Transition.names(
                t.inputsAfter().collectors()) + " are live");
          } else if (owners.size() < want) {
            p.add(x + " has " + owners.size() + " owners " + owners + ", not " + want
                + ", although collectors " + Transition.names(t.inputsAfter().collectors())
                + " are live");
          }
        }
        return p.describe();
      }
    };
  }

  /**
   * <b>determinism</b>: the assignment is a function of the two sets: after every step, a fresh
   * allocator fed the same targets and collectors in other orders and through other histories
   * ({@link Transition#rebuilt(int)}) assigns every target to the same collector, or leaves it
   * unassigned, as the allocator under test does. With at most {@value #ALL_HISTORIES_UP_TO}
   * targets every history is tried at every step (small scenarios, which is where shrinking
   * ends, are cheap); above that one history per step, in rotation. {@code least-weighted} is
   * history-dependent by design and exempt.
   *
   * @return the invariant
   */
  public static Invariant determinism() {
    return new Named("determinism", "Invariants.determinism()") {
      @Override
      public String check(Transition t) {
        List<Target> targets = sorted(t.inputsAfter().targets());
        boolean all = targets.size() <= ALL_HISTORIES_UP_TO;
        for (int k = 0; k < (all ? Transition.HISTORIES : 1); k++) {
          int h = all ? k : t.index() % Transition.HISTORIES;
          Allocation other = t.rebuilt(h);
          Problems p = new Problems();
          for (Target x : targets) {
            String here = ownerText(t.after(), x);
            String there = ownerText(other, x);
            if (!here.equals(there)) {
              p.add(x + " is on " + here + " here but on " + there);
            }
          }
          if (!p.isEmpty()) {
            return "a fresh allocator fed the same sets (" + Transition.describeHistory(h)
                + ") disagrees: " + p.describe();
          }
        }
        return null;
      }
    };
  }

  /**
   * <b>minimal-movement</b> ({@code rendezvous}): a target moves only when it must. A target
   * known before and after the step that changes collector was on a collector that left, or
   * moves to a collector that joined (by name). So: when collectors are only removed, exactly
   * their targets move; when collectors are only added, every moved target moves to an added
   * one; a target step or a node-only change moves nothing.
   *
   * @return the invariant
   */
  public static Invariant minimalMovement() {
    return new Named("minimal-movement", "Invariants.minimalMovement()") {
      @Override
      public String check(Transition t) {
        Set<String> removed = removedNames(t);
        Set<String> added = addedNames(t);
        Problems p = new Problems();
        for (Target x : survivors(t)) {
          String from = owner(t.before(), x);
          String to = owner(t.after(), x);
          if (from != null && !from.equals(to) && !removed.contains(from)
              && (to == null || !added.contains(to))) {
            p.add(x + " moved " + from + " -> " + show(to) + ", but " + from
                + " is still live and " + show(to) + " is not new");
          }
        }
        return p.describe();
      }
    };
  }

  /**
   * <b>only-orphans-move</b> ({@code least-weighted}): the targets of surviving collectors never
   * move. A target known before and after the step that changes collector was on a collector
   * that left.
   *
   * @return the invariant
   */
  public static Invariant onlyOrphansMove() {
    return new Named("only-orphans-move", "Invariants.onlyOrphansMove()") {
      @Override
      public String check(Transition t) {
        Set<String> removed = removedNames(t);
        Problems p = new Problems();
        for (Target x : survivors(t)) {
          String from = owner(t.before(), x);
          String to = owner(t.after(), x);
          if (from != null && !from.equals(to) && !removed.contains(from)) {
            p.add(x + " moved " + from + " -> " + show(to) + " although " + from
                + " is still live");
          }
        }
        return p.describe();
      }
    };
  }

  /**
   * <b>bounded-movement</b> ({@code consistent-hashing}): for a step that keeps the targets and
   * adds or removes exactly one collector (by name), the number of targets that change collector
   * is at most {@code factor * baseline + slack}. The baseline is the larger of what had to move
   * (what the removed collector held before, or what the added one holds after) and one
   * collector's even share, {@code ceil(n / c)} with {@code c} the larger of the two collector
   * counts: a bounded-load strategy that re-balances to the new cap moves about a share even when
   * the collector that came or went held little. A step that keeps the targets and the collector
   * names moves nothing. Other steps (several collectors at once, target changes, which shift the
   * cap) are not bounded by this invariant: bounded-load hashing makes no tight promise for them.
   *
   * <p>What {@code consistent-hashing} does, measured over 100,000 generated scenarios: moved /
   * baseline has median 1.0, 90th percentile 1.5, 99th percentile 2.5; with 100 targets or more
   * at most 2.5; the worst cases are tiny clusters whose cap changes (9 moves for a baseline of 1
   * with 13 targets on 15 collectors). The profile uses {@value #CH_MOVEMENT_FACTOR} and
   * {@value #CH_MOVEMENT_SLACK}.
   *
   * @param factor the multiplicative bound, at least 1
   * @param slack the additive slack, at least 0
   * @return the invariant
   * @throws IllegalArgumentException if an argument is out of range
   */
  public static Invariant boundedMovement(double factor, int slack) {
    if (!(factor >= 1.0) || slack < 0) {
      throw new IllegalArgumentException("factor must be >= 1 and slack >= 0");
    }
    return new Named("bounded-movement", "Invariants.boundedMovement(" + factor + ", " + slack
        + ")") {
      @Override
      public String check(Transition t) {
        if (!sameTargets(t)) {
          return null;
        }
        Set<String> removed = removedNames(t);
        Set<String> added = addedNames(t);
        int moved = moved(t);
        if (removed.isEmpty() && added.isEmpty()) {
          return moved == 0 ? null
              : moved + " targets moved though the targets and collector names did not change";
        }
        if (removed.size() + added.size() != 1 || t.inputsBefore().collectors().isEmpty()) {
          return null;
        }
        int required = removed.isEmpty()
            ? t.after().targetCount(added.iterator().next())
            : t.before().targetCount(removed.iterator().next());
        int n = t.inputsAfter().targetCount();
        int c = Math.max(t.inputsBefore().collectors().size(),
            t.inputsAfter().collectors().size());
        int baseline = Math.max(required, (n + c - 1) / c);
        double bound = factor * baseline + slack;
        return moved <= bound ? null
            : moved + " targets moved when " + (removed.isEmpty() ? "adding " + added
                : "removing " + removed) + " (" + required + " had to, an even share is "
                + (n + c - 1) / c + "); the bound is " + factor + " x " + baseline + " + "
                + slack;
      }
    };
  }

  /**
   * <b>bounded-load</b> ({@code consistent-hashing}): no collector holds more than
   * {@code cap = max(ceil(n / c), ceil(loadFactor * n / c))} targets, for {@code n} known
   * targets on {@code c} effective collectors (the ceiling computed with a 1e-9 tolerance, so
   * that {@code 1.1 * 100000 / 1000} is 110): the strategies' own cap,
   * {@link AllocatorSpec#boundedLoadCap}. With the default factor 1.2 this is "never more than
   * {@code ceil(1.2 * n / c)}"; each collector's own cap may be lower
   * ({@code consistent-hashing} rounds each collector's cap up or down by its name).
   *
   * <p>With k replicas, every replica counts and the cap is {@code min(k, c)} times the above
   * (each rank of replicas is balanced to the cap on its own), checked when no two collectors
   * share a node or a zone: otherwise spreading replicas over nodes and zones comes first, and a
   * lone node's collector may hold a replica of every target.
   *
   * @param loadFactor the strategy's load factor, &gt; 1
   * @return the invariant
   * @throws IllegalArgumentException if {@code loadFactor} is not a finite number &gt; 1
   */
  public static Invariant boundedLoad(double loadFactor) {
    if (!(loadFactor > 1.0) || Double.isInfinite(loadFactor)) {
      throw new IllegalArgumentException("load factor must be a finite number > 1");
    }
    return new Named("bounded-load", "Invariants.boundedLoad(" + loadFactor + ")") {
      @Override
      public String check(Transition t) {
        List<Collector> live = t.inputsAfter().collectors();
        int c = live.size();
        int n = t.inputsAfter().targetCount();
        if (c == 0 || n == 0) {
          return null;
        }
        int k = Math.min(t.after().replicas(), c);
        if (k > 1 && !Replicas.everyCollectorApart(live)) {
          return null; // spreading replicas over nodes and zones comes before balance
        }
        int cap = k * AllocatorSpec.boundedLoadCap(loadFactor, n, c);
        Problems p = new Problems();
        for (Collector x : live) {
          int count = t.after().targetCount(x.name());
          if (count > cap) {
            p.add(x.name() + " holds " + count + " targets, above the cap " + cap + " for " + n
                + " targets" + (k > 1 ? " x " + k + " replicas" : "") + " on " + c
                + " collectors");
          }
        }
        return p.describe();
      }
    };
  }

  /**
   * <b>node-locality</b> ({@code per-node}): a target whose node has a collector is on that
   * node's collector; when two collectors share the node (a surge rollout), on the one with the
   * smaller name. The node is the one the target's latest labels name. Targets with no node, or
   * whose node has no collector, are not constrained here (the fallback places them; see
   * {@link #allAssigned()}).
   *
   * @return the invariant
   */
  public static Invariant nodeLocality() {
    return locality(false);
  }

  /**
   * <b>node-locality-no-fallback</b> ({@code per-node} with {@code noFallback()}):
   * {@link #nodeLocality()}, and every other target (no node, or no collector on its node) is
   * unassigned.
   *
   * @return the invariant
   */
  public static Invariant nodeLocalityWithoutFallback() {
    return locality(true);
  }

  private static Invariant locality(boolean strict) {
    String name = strict ? "node-locality-no-fallback" : "node-locality";
    String java = strict ? "Invariants.nodeLocalityWithoutFallback()"
        : "Invariants.nodeLocality()";
    return new Named(name, java) {
      @Override
      public String check(Transition t) {
        Inputs in = t.inputsAfter();
        Problems p = new Problems();
        for (Target x : sorted(in.targets())) {
          Optional<String> winner = x.node().flatMap(in::winner);
          String have = owner(t.after(), x);
          if (winner.isPresent() && !winner.get().equals(have)) {
            p.add(x + " on node " + x.node().get() + " is on " + show(have) + ", not on "
                + winner.get() + ", the node's " + (collectorsOn(in, x.node().get()) > 1
                    ? "smaller-name collector" : "collector"));
          } else if (strict && winner.isEmpty() && have != null) {
            p.add(x + (x.node().isPresent() ? " on node " + x.node().get()
                + ", which has no collector," : " with no node") + " is on " + have
                + " although there is no fallback");
          }
        }
        return p.describe();
      }
    };
  }

  /**
   * <b>replica-spread</b> (every strategy but {@code per-node}, with replicas): a target's
   * owners are on distinct nodes whenever enough nodes have collectors, and in distinct zones
   * whenever enough zones do. Precisely, with a collector's node slot its node (or the collector
   * itself when it has none) and its zone slot its zone (or else its node slot): the owners take
   * {@code min(owners, node slots)} distinct node slots, and, when every node's collectors agree
   * on their zone, {@code min(owners, zone slots)} distinct zone slots. Holds without
   * per-collector limits (a full collector may force a replica elsewhere). Vacuous with one
   * replica.
   *
   * @return the invariant
   */
  public static Invariant replicaSpread() {
    return new Named("replica-spread", "Invariants.replicaSpread()") {
      @Override
      public String check(Transition t) {
        return Replicas.spread(t);
      }
    };
  }

  /**
   * <b>replica-locality</b> ({@code per-node} with replicas): the owners take as many distinct
   * node slots as there are (see {@link #replicaSpread()}), and the further replicas stay in the
   * target's zone: those in it, on node slots other than the primary's, number at least
   * {@code min(further replicas, node slots of the zone besides the primary's)}. The target's
   * zone is its own, else that of the first collector (by name) on its node that has one. The
   * primary's place is {@link #nodeLocality()}'s. Vacuous with one replica.
   *
   * @return the invariant
   */
  public static Invariant replicaLocality() {
    return new Named("replica-locality", "Invariants.replicaLocality()") {
      @Override
      public String check(Transition t) {
        return Replicas.locality(t);
      }
    };
  }

  /**
   * <b>replica-movement</b>: for a step that keeps the targets and adds or removes exactly one
   * collector (by name), the replicas that leave a collector (over every target, the owners
   * before that are not owners after) number at most {@code factor * baseline + slack * k}. The
   * baseline is the larger of what had to move (the replicas the removed collector held, or
   * those the added one holds after) and one collector's even share of the replicas,
   * {@code ceil(n * min(k, c) / c)} for {@code c} the larger collector count. With one replica
   * this is {@link #boundedMovement}'s measure. The primary's own movement is held by the
   * strategy's movement invariant, at any replica count.
   *
   * @param factor the multiplicative bound, at least 1
   * @param slack the additive slack per replica, at least 0
   * @return the invariant
   * @throws IllegalArgumentException if an argument is out of range
   */
  public static Invariant replicaMovement(double factor, int slack) {
    if (!(factor >= 1.0) || slack < 0) {
      throw new IllegalArgumentException("factor must be >= 1 and slack >= 0");
    }
    return new Named("replica-movement", "Invariants.replicaMovement(" + factor + ", " + slack
        + ")") {
      @Override
      public String check(Transition t) {
        Set<String> removed = removedNames(t);
        Set<String> added = addedNames(t);
        if (!sameTargets(t) || removed.size() + added.size() != 1
            || t.inputsBefore().collectors().isEmpty()) {
          return null;
        }
        int required = removed.isEmpty()
            ? t.after().targetCount(added.iterator().next())
            : t.before().targetCount(removed.iterator().next());
        int c = Math.max(t.inputsBefore().collectors().size(),
            t.inputsAfter().collectors().size());
        long replicas = (long) t.inputsAfter().targetCount()
            * Math.min(t.after().replicas(), c);
        int share = (int) ((replicas + c - 1) / c);
        int baseline = Math.max(required, share);
        int moved = Replicas.movedReplicas(t);
        int slackAll = slack * t.after().replicas();
        return moved <= factor * baseline + slackAll ? null
            : moved + " replicas left a collector when " + (removed.isEmpty() ? "adding "
                + added : "removing " + removed) + " (" + required + " had to, an even share "
                + "is " + share + "); the bound is " + factor + " x " + baseline + " + " + slackAll;
      }
    };
  }

  private static int collectorsOn(Inputs in, String node) {
    int n = 0;
    for (Collector c : in.collectors()) {
      if (c.node().isPresent() && c.node().get().equals(node)) {
        n++;
      }
    }
    return n;
  }

  /**
   * The structural half of completeness, shared with the concurrent snapshot check: every target
   * of {@code expected} is in exactly one of a live collector's lists or unassigned, and the views
   * agree.
   */
  static void structure(Allocation a, Collection<Target> expected, Set<String> live,
      Problems p) {
    Set<Target> want = new HashSet<>(expected);
    Set<Target> have = new HashSet<>(a.targets());
    if (have.size() != a.targets().size()) {
      p.add("targets() holds duplicates");
    }
    for (Target x : sorted(want)) {
      if (!have.contains(x)) {
        p.add(x + " is missing from targets()");
      }
    }
    for (Target x : sorted(have)) {
      if (!want.contains(x)) {
        p.add(x + " is in targets() but was never given or was removed");
      }
    }
    int k = a.replicas();
    int held = 0;
    int fewer = 0;
    for (Target x : sorted(want)) {
      Optional<String> c = a.collectorOf(x);
      List<String> owners = a.ownersOf(x);
      boolean unassigned = a.unassigned().contains(x);
      held += owners.size();
      if (owners.size() > k) {
        p.add(x + " has " + owners.size() + " owners " + owners + ", more than its " + k
            + " replicas");
      }
      if (new HashSet<>(owners).size() != owners.size()) {
        p.add(x + " is held twice by one collector: owners " + owners);
      }
      if (c.isPresent() && (owners.isEmpty() || !owners.get(0).equals(c.get()))) {
        p.add(x + " has primary " + c.get() + " but owners " + owners
            + " do not list it first");
      }
      if (owners.size() < k) {
        fewer++;
        if (!unassigned) {
          p.add(owners.isEmpty() ? x + " is neither assigned nor unassigned: lost"
              : x + " has " + owners.size() + " of its " + k + " owners " + owners
                  + " but is not in unassigned()");
        }
      } else if (unassigned) {
        p.add(x + " is both on " + String.join(", ", owners) + " and unassigned");
      }
      for (String o : owners) {
        if (!live.contains(o)) {
          p.add(x + " is on " + o + ", which is not a live collector");
        } else if (!a.targetsFor(o, x.job()).contains(x)) {
          p.add(x + " is on " + o + " by " + (owners.get(0).equals(o) && c.isPresent()
              ? "collectorOf" : "ownersOf") + " but missing from its targetsFor");
        }
      }
    }
    for (Target x : sorted(a.unassigned())) {
      if (!want.contains(x)) {
        p.add(x + " is unassigned but not a known target");
      }
    }
    int listed = 0;
    for (String c : new TreeSet<>(live)) {
      int count = 0;
      for (String job : a.jobsFor(c)) {
        List<Target> l = a.targetsFor(c, job);
        if (l.isEmpty()) {
          p.add("jobsFor(" + c + ") lists job " + job + " with no target");
        }
        for (Target x : l) {
          if (!x.job().equals(job)) {
            p.add(x + " is listed under job " + job + " of " + c);
          }
          if (!a.ownersOf(x).contains(c)) {
            p.add(x + " is listed for " + c + " but " + (k == 1 ? "collectorOf says "
                + show(a.collectorOf(x).orElse(null)) : "its owners are " + a.ownersOf(x)));
          }
        }
        count += l.size();
      }
      if (count != a.targetCount(c)) {
        p.add("targetCount(" + c + ") is " + a.targetCount(c) + " but " + count
            + " targets are listed");
      }
      listed += count;
    }
    if (listed != held) {
      p.add(listed + " targets are listed by collector but " + held + " are "
          + (k == 1 ? "assigned" : "held (replicas counted)"));
    }
    if (fewer != a.unassigned().size()) {
      p.add("unassigned() holds " + a.unassigned().size() + " targets, " + fewer
          + (k == 1 ? " are not assigned" : " have fewer than " + k + " owners"));
    }
  }

  /** A target's owners as a report prints them: one name, a list, or "(unassigned)". */
  static String ownerText(Allocation a, Target x) {
    List<String> owners = a.ownersOf(x);
    if (owners.isEmpty()) {
      return show(null);
    }
    return owners.size() == 1 && a.replicas() == 1 ? owners.get(0) : owners.toString();
  }

  static String owner(Allocation a, Target x) {
    return a.collectorOf(x).orElse(null);
  }

  private static String show(String collector) {
    return collector == null ? "(unassigned)" : collector;
  }

  private static Set<String> names(Collection<Collector> collectors) {
    Set<String> out = new HashSet<>();
    for (Collector c : collectors) {
      out.add(c.name());
    }
    return out;
  }

  private static Set<String> removedNames(Transition t) {
    Set<String> out = new TreeSet<>(names(t.inputsBefore().collectors()));
    out.removeAll(names(t.inputsAfter().collectors()));
    return out;
  }

  private static Set<String> addedNames(Transition t) {
    Set<String> out = new TreeSet<>(names(t.inputsAfter().collectors()));
    out.removeAll(names(t.inputsBefore().collectors()));
    return out;
  }

  private static boolean sameTargets(Transition t) {
    return new HashSet<>(t.inputsBefore().targets())
        .equals(new HashSet<>(t.inputsAfter().targets()));
  }

  /** Targets known before and after the step, in a stable order. */
  private static List<Target> survivors(Transition t) {
    Set<Target> before = new HashSet<>(t.inputsBefore().targets());
    List<Target> out = new ArrayList<>();
    for (Target x : t.inputsAfter().targets()) {
      if (before.contains(x)) {
        out.add(x);
      }
    }
    out.sort(ORDER);
    return out;
  }

  /** Known targets, before and after, that were assigned before and are elsewhere after. */
  static int moved(Transition t) {
    int n = 0;
    for (Target x : survivors(t)) {
      String from = owner(t.before(), x);
      if (from != null && !from.equals(owner(t.after(), x))) {
        n++;
      }
    }
    return n;
  }

  private static Set<Target> union(Set<Target> a, Set<Target> b) {
    Set<Target> out = new HashSet<>(a);
    out.addAll(b);
    return out;
  }

  static List<Target> sorted(Collection<Target> targets) {
    List<Target> out = new ArrayList<>(targets);
    out.sort(ORDER);
    return out;
  }

  /** Collects violations and describes the first few. */
  static final class Problems {
    private final List<String> items = new ArrayList<>();

    void add(String problem) {
      items.add(problem);
    }

    boolean isEmpty() {
      return items.isEmpty();
    }

    String describe() {
      if (items.isEmpty()) {
        return null;
      }
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < Math.min(MAX_LISTED, items.size()); i++) {
        if (i > 0) {
          sb.append("; ");
        }
        sb.append(items.get(i));
      }
      if (items.size() > MAX_LISTED) {
        sb.append("; and ").append(items.size() - MAX_LISTED).append(" more");
      }
      return sb.toString();
    }
  }

  /** An invariant with a name and the Java expression that makes it. */
  private abstract static class Named implements Invariant {
    private final String name;
    private final String java;

    Named(String name, String java) {
      this.name = name;
      this.java = java;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public String toString() {
      return java;
    }
  }
}
