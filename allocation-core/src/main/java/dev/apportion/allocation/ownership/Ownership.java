package dev.apportion.allocation.ownership;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.ring.HashRing;
import dev.apportion.allocation.ring.HashRings;
import dev.apportion.allocation.spi.AllocatorSpec;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;

/**
 * Decentralized ownership: one replica's view of which targets are its own, decided locally
 * from its own name and the current member list, with no central allocator. Every replica
 * discovers every target, builds an {@code Ownership} from the same member list, and scrapes the
 * targets it {@link #owns}.
 *
 * <pre>{@code
 * Ownership view = Ownership.builder(System.getenv("POD_IP"))
 *     .key(TargetKey.excludingLabels("instance"))
 *     .build(peersFromDns());
 * List<Target> mine = view.owned(discoveredTargets);
 * // later, when the member list changes:
 * OwnershipChange change = view.update(peersFromDns(), discoveredTargets);
 * view = change.after();
 * startScraping(change.gained());
 * stopScraping(change.lost());
 * }</pre>
 *
 * <h2>Design</h2>
 * Placement is rendezvous hashing ({@link HashRings#rendezvous}; Thaler and Ravishankar 1998)
 * over the key {@link TargetKey#keyOf} gives each target: a pure function of that key and the
 * member set (names and weights). Replicas that hold the same member list and the same key
 * therefore compute the same owner for every target, on any JVM and in any release, and cover
 * every target exactly once. With the default key ({@link TargetKey#identity()}) the owner is
 * the one the central allocator's {@code rendezvous} strategy picks for collectors of the same
 * names, so a deployment can move between the two modes without reshuffling. Removing a member
 * moves exactly its targets; adding one moves exactly the targets it now wins.
 *
 * <p><b>Replicas.</b> With {@link Builder#replicas replicas(k)} a target's owners are its top k
 * members by rendezvous score ({@link #ownersOf}, primary first): each target is owned by
 * {@code min(k, m)} members, and removing a member moves only the replicas it held, each to the
 * next member in that target's ranking. The modes below decide as with one replica.
 *
 * <h2>Fail-safe by default: duplicates rather than gaps</h2>
 * A replica trusts its member list only when that list is plausible. When the list is
 * <b>empty</b>, does <b>not contain the local member</b>, or contains <b>only the local
 * member</b>, the local member owns every target ({@link State#FAIL_SAFE}, {@link State#ALONE}).
 * A replica that cannot see its peers (discovery down, a network partition, a name that does not
 * match how its peers list it) then scrapes everything rather than nothing. The price is
 * duplicates: while it lasts, such a replica scrapes targets its peers scrape too, which costs
 * load and sends the same series twice; but no target goes unscraped. The opposite choice
 * silently emits nothing for the targets it should have had, which is the failure that is
 * hardest to notice.
 *
 * <p><b>Strict mode</b> ({@link Builder#strict}, off by default) makes the other trade: the
 * local member owns <em>nothing</em> until its list contains it and has at least a minimum number
 * of members ({@link State#WAITING}). It never duplicates because of a partial view, but it is
 * the mode that can emit nothing: a replica that never sees enough peers, or whose name never
 * appears in its list, scrapes no target at all, and the targets its peers leave to it go
 * unscraped.
 *
 * <h2>Cost</h2>
 * Building: O(m log m) for m members, hashing each name once. {@link #owns}: with equal weights,
 * one score per member until k members beat the local one, so O(k log m) expected and O(m) for
 * the targets it owns; with weights, one logarithm per member. {@link #ownerOf}: O(m).
 * {@link #changesTo} and {@link #update}: one pass over the targets, see there; they allocate
 * O(m) scratch and the result lists. Keys other than {@link TargetKey#identity()} cost a hash of
 * the target's labels per call (see {@link TargetKey#keyOf}).
 *
 * <p><b>Thread-safety.</b> Immutable: every method is thread-safe and never blocks; a membership
 * change builds a new instance ({@link #withMembers}), so a view can be shared and replaced
 * through a volatile field.
 *
 * @since 0.1.0
 */
public final class Ownership {

  /** How a view decides, given its member list and mode. */
  public enum State {
    /** The list contains the local member and at least one peer: it owns its rendezvous share. */
    SHARED,
    /**
     * The list is exactly the local member: it owns every target (in strict mode, only when the
     * minimum is at most 1).
     */
    ALONE,
    /**
     * Fail-safe mode, and the list is empty or does not contain the local member: it owns every
     * target, duplicating its peers' work rather than leaving a gap.
     */
    FAIL_SAFE,
    /**
     * Strict mode, and the list is empty, does not contain the local member, or has fewer members
     * than the minimum: it owns nothing.
     */
    WAITING
  }

  private final String self;
  private final TargetKey key;
  private final int minimumMembers;
  private final int replicas;
  private final SortedMap<String, Double> weights;
  private final List<String> members;
  private final boolean uniform;
  private final State state;
  /** Only when {@link State#SHARED}. */
  private final HashRing ring;
  private final long selfHash;
  /** Every member but the local one, in name order. */
  private final String[] otherNames;
  private final long[] otherHashes;
  private final long fingerprint;

  private Ownership(String self, TargetKey key, int minimumMembers, int replicas,
      NavigableMap<String, Double> weights) {
    this.self = self;
    this.key = key;
    this.minimumMembers = minimumMembers;
    this.replicas = replicas;
    this.weights = Collections.unmodifiableSortedMap(weights);
    this.members = List.copyOf(weights.keySet());
    boolean same = true;
    Double first = weights.isEmpty() ? null : weights.firstEntry().getValue();
    for (Double w : weights.values()) {
      same &= w.equals(first);
    }
    this.uniform = same;
    this.state = OwnershipViews.state(self, minimumMembers, weights);
    this.ring = state == State.SHARED ? HashRings.rendezvous(weights) : null;
    this.selfHash = HashRings.memberHash(self);
    int others = weights.size() - (weights.containsKey(self) ? 1 : 0);
    otherNames = new String[others];
    otherHashes = new long[others];
    int i = 0;
    for (String name : weights.keySet()) {
      if (!name.equals(self)) {
        otherNames[i] = name;
        otherHashes[i] = HashRings.memberHash(name);
        i++;
      }
    }
    this.fingerprint = OwnershipViews.fingerprint(key, minimumMembers, replicas, weights);
  }

  /**
   * A fail-safe view with the default key ({@link TargetKey#identity()}) over equally weighted
   * members: {@code builder(self).build(members)}.
   *
   * @param self the local member's name, exactly as it appears in its peers' member lists
   * @param members the current member list; may be empty; duplicates collapse
   * @return the view
   * @throws NullPointerException if an argument or a member name is null
   * @throws IllegalArgumentException if {@code self} or a member name is empty
   */
  public static Ownership of(String self, Collection<String> members) {
    return builder(self).build(members);
  }

  /**
   * A builder for the local member {@code self}: fail-safe, default key, until told otherwise.
   *
   * @param self the local member's name, exactly as it appears in its peers' member lists (see
   *     {@code docs/ownership.md}: a name that never matches keeps the view in
   *     {@link State#FAIL_SAFE})
   * @return a new builder; not thread-safe
   * @throws NullPointerException if {@code self} is null
   * @throws IllegalArgumentException if {@code self} is empty
   */
  public static Builder builder(String self) {
    return new Builder(HashRings.checkedName(self));
  }

  /**
   * How many members own each target when {@link State#SHARED}: 1 (the default) or the
   * {@link Builder#replicas replicas} asked for.
   *
   * @return the replica count, from 1
   */
  public int replicas() {
    return replicas;
  }

  /**
   * The local member's name.
   *
   * @return the name
   */
  public String self() {
    return self;
  }

  /**
   * The key targets are placed by.
   *
   * @return the key
   */
  public TargetKey key() {
    return key;
  }

  /**
   * The strict mode's minimum cluster size, or 0 in the default fail-safe mode.
   *
   * @return the minimum, or 0
   */
  public int minimumMembers() {
    return minimumMembers;
  }

  /**
   * The member list this view was built from, in name order. Does not allocate.
   *
   * @return an unmodifiable list; empty when the list was empty
   */
  public List<String> members() {
    return members;
  }

  /**
   * The members and their weights (1 for each when built without weights), in name order.
   * Does not allocate.
   *
   * @return an unmodifiable map
   */
  public SortedMap<String, Double> weights() {
    return weights;
  }

  /**
   * How this view decides: its rendezvous share, everything, or nothing.
   *
   * @return the state
   */
  public State state() {
    return state;
  }

  /**
   * A fingerprint of everything that decides placement: the key's {@link TargetKey#describe()
   * description}, the strict minimum, the replicas (when more than one), and the member names and
   * weights; not the local member's name. Two replicas whose views are {@link State#SHARED} and
   * have equal fingerprints compute the same {@link #ownersOf} for every target, so publishing it (a log line, a metric label)
   * lets an operator see at once whether the replicas agree. Guava's FarmHash fingerprint,
   * stable across JVMs and releases. Computed once, at construction.
   *
   * @return the fingerprint
   */
  public long fingerprint() {
    return fingerprint;
  }

  /**
   * The key of {@code target}: {@code key().keyOf(target)}. Exposed so that two replicas can be
   * checked to agree, target by target.
   *
   * @param target a target
   * @return its key
   * @throws NullPointerException if {@code target} is null
   */
  public long keyOf(Target target) {
    return key.keyOf(target);
  }

  /**
   * Whether the local member owns {@code target}: its rendezvous share when
   * {@link State#SHARED} (with replicas, whether it is among the target's top
   * {@link #replicas()} members), every target when {@link State#ALONE} or
   * {@link State#FAIL_SAFE}, none when {@link State#WAITING}. Allocation-free for the identity
   * key and equal weights; see the class documentation for the cost.
   *
   * @param target a target
   * @return true when the local member should scrape it
   * @throws NullPointerException if {@code target} is null
   */
  public boolean owns(Target target) {
    return ownsKey(key.keyOf(target));
  }

  /**
   * {@link #owns} for a key the caller computed: for work that is not a {@link Target} (a
   * Kubernetes object's UID, say), hashed by the caller with a well-mixed 64-bit hash that every
   * replica computes alike. Allocation-free.
   *
   * @param key a 64-bit key
   * @return true when the local member owns it
   */
  public boolean ownsKey(long key) {
    return switch (state) {
      case ALONE, FAIL_SAFE -> true;
      case WAITING -> false;
      case SHARED -> uniform ? beatenBy(key, replicas) < replicas
          : replicas == 1 ? ring.member(ring.ownerIndex(key)).equals(self)
          : ring.owners(key, replicas).contains(self);
    };
  }

  /**
   * The member this replica considers the owner of {@code target}: the rendezvous winner when
   * {@link State#SHARED}, the local member when {@link State#ALONE} or {@link State#FAIL_SAFE},
   * and nobody when {@link State#WAITING}. Always consistent with {@link #owns}. O(m);
   * allocates the {@code Optional}.
   *
   * @param target a target
   * @return the owner's name, or empty when waiting
   * @throws NullPointerException if {@code target} is null
   */
  public Optional<String> ownerOf(Target target) {
    return ownerOfKey(key.keyOf(target));
  }

  /**
   * Every member this replica considers an owner of {@code target}, primary ({@link #ownerOf})
   * first: the target's top {@link #replicas()} members by rendezvous when {@link State#SHARED}
   * (all of them when there are fewer), the local member alone when {@link State#ALONE} or
   * {@link State#FAIL_SAFE}, nobody when {@link State#WAITING}. With one replica, exactly
   * {@link #ownerOf} as a list. Contains the local member exactly when {@link #owns} is true.
   * O(m log m); allocates the list.
   *
   * @param target a target
   * @return an unmodifiable list of distinct names, at most {@link #replicas()} long
   * @throws NullPointerException if {@code target} is null
   */
  public List<String> ownersOf(Target target) {
    return ownersOfKey(key.keyOf(target));
  }

  /**
   * {@link #ownersOf} for a key the caller computed (see {@link #ownsKey}).
   *
   * @param key a 64-bit key
   * @return the owners' names, primary first
   */
  public List<String> ownersOfKey(long key) {
    return switch (state) {
      case ALONE, FAIL_SAFE -> List.of(self);
      case WAITING -> List.of();
      case SHARED -> List.copyOf(ring.owners(key, replicas));
    };
  }

  /**
   * {@link #ownerOf} for a key the caller computed (see {@link #ownsKey}).
   *
   * @param key a 64-bit key
   * @return the owner's name, or empty when waiting
   */
  public Optional<String> ownerOfKey(long key) {
    return switch (state) {
      case ALONE, FAIL_SAFE -> Optional.of(self);
      case WAITING -> Optional.empty();
      case SHARED -> Optional.of(ring.owner(key));
    };
  }

  /**
   * The targets among {@code targets} that the local member owns, in their iteration order.
   * One {@link #owns} per target; allocates the result.
   *
   * @param targets the targets every replica discovered
   * @return a new list
   * @throws NullPointerException if {@code targets} or an element is null
   */
  public List<Target> owned(Collection<Target> targets) {
    List<Target> out = new ArrayList<>();
    for (Target t : targets) {
      if (owns(t)) {
        out.add(t);
      }
    }
    return out;
  }

  /**
   * The same local member, key and mode over another, equally weighted member list. Costs a new
   * build (see the class documentation); this view is unchanged.
   *
   * @param members the new member list; may be empty; duplicates collapse
   * @return the new view
   * @throws NullPointerException if {@code members} or a name is null
   * @throws IllegalArgumentException if a name is empty
   */
  public Ownership withMembers(Collection<String> members) {
    return new Ownership(self, key, minimumMembers, replicas,
        HashRings.checkedMembers(members));
  }

  /**
   * The same local member, key and mode over another, weighted member list: member {@code i}
   * owns a share {@code w_i / sum(w)} of the targets in expectation.
   *
   * @param weights the new members and their weights (finite, &gt; 0); may be empty
   * @return the new view
   * @throws NullPointerException if {@code weights}, a name or a weight is null
   * @throws IllegalArgumentException if a name is empty or a weight is out of range
   */
  public Ownership withMembers(Map<String, Double> weights) {
    return new Ownership(self, key, minimumMembers, replicas, HashRings.checkedWeights(weights));
  }

  /**
   * Moves to a new, equally weighted member list: {@code changesTo(withMembers(members),
   * targets)}. The new view is {@link OwnershipChange#after()}.
   *
   * @param members the new member list; may be empty
   * @param targets the targets every replica discovered
   * @return the targets the local member gained and lost, and the new view
   * @throws NullPointerException if an argument, a name or a target is null
   * @throws IllegalArgumentException if a name is empty
   */
  public OwnershipChange update(Collection<String> members, Collection<Target> targets) {
    return changesTo(withMembers(members), targets);
  }

  /**
   * Moves to a new, weighted member list: {@code changesTo(withMembers(weights), targets)}.
   *
   * @param weights the new members and their weights (finite, &gt; 0); may be empty
   * @param targets the targets every replica discovered
   * @return the targets the local member gained and lost, and the new view
   * @throws NullPointerException if an argument, a name, a weight or a target is null
   * @throws IllegalArgumentException if a name is empty or a weight is out of range
   */
  public OwnershipChange update(Map<String, Double> weights, Collection<Target> targets) {
    return changesTo(withMembers(weights), targets);
  }

  /**
   * Which of {@code targets} the local member gains and loses in moving from this view to
   * {@code next}: gained are those {@code next} owns and this one does not, lost the reverse.
   * Each element of {@code targets} is examined once, in iteration order (pass a set to avoid
   * duplicates in the result).
   *
   * <p>Both views ranking by raw scores ({@link State#SHARED} or {@link State#ALONE}, equal
   * weights), keyed alike and with the same replicas: O(k log m) scores per target in expectation
   * plus one per member added or removed. Otherwise both views are asked: O(m) per target.
   *
   * @param next the view to move to; same local member
   * @param targets the targets every replica discovered
   * @return the gained and lost targets
   * @throws NullPointerException if an argument or a target is null
   * @throws IllegalArgumentException if {@code next} is for another local member
   */
  public OwnershipChange changesTo(Ownership next, Collection<Target> targets) {
    Objects.requireNonNull(next, "next must not be null");
    Objects.requireNonNull(targets, "targets must not be null");
    if (!next.self.equals(self)) {
      throw new IllegalArgumentException(
          "next view is for '" + next.self + "', not for '" + self + "'");
    }
    return OwnershipChanges.between(this, next, targets);
  }

  /** Whether ownership is the local member's rank among raw rendezvous scores. */
  boolean scored() {
    return uniform && (state == State.SHARED || state == State.ALONE);
  }

  long selfHash() {
    return selfHash;
  }

  String[] otherNames() {
    return otherNames;
  }

  long[] otherHashes() {
    return otherHashes;
  }

  /** How many other members beat the local one for {@code key}, counting up to {@code limit}. */
  private int beatenBy(long key, int limit) {
    return OwnershipChanges.beaten(selfHash, self, otherNames, otherHashes, otherHashes.length,
        key, limit);
  }

  /**
   * A short description: local member, state, member count, key, mode and fingerprint.
   *
   * @return the description
   */
  @Override
  public String toString() {
    return "Ownership{self=" + self + ", state=" + state + ", members=" + members.size()
        + ", key=" + key.describe()
        + (minimumMembers > 0 ? ", strict=" + minimumMembers : ", failSafe")
        + (replicas > 1 ? ", replicas=" + replicas : "")
        + ", fingerprint=" + Long.toHexString(fingerprint) + "}";
  }

  /**
   * Configures a view: the key and the mode. Not thread-safe; the views it builds are.
   *
   * @since 0.1.0
   */
  public static final class Builder {
    private final String self;
    private TargetKey key = TargetKey.identity();
    private int minimumMembers;
    private int replicas = 1;

    private Builder(String self) {
      this.self = self;
    }

    /**
     * The key targets are placed by; {@link TargetKey#identity()} when not called. Every replica
     * must use the same key.
     *
     * @param key the key
     * @return this builder
     * @throws NullPointerException if {@code key} is null
     */
    public Builder key(TargetKey key) {
      this.key = Objects.requireNonNull(key, "key must not be null");
      return this;
    }

    /**
     * Strict mode: the local member owns nothing until its member list contains it and has at
     * least {@code minimumMembers} members ({@link State#WAITING}). Off by default.
     *
     * <p><b>Warning:</b> this is the mode that can emit nothing. A replica that never sees that
     * many peers, or that never finds its own name in the list, scrapes no target, and the
     * targets its peers leave to it are scraped by nobody. The default fail-safe mode scrapes
     * everything instead, at the cost of duplicates.
     *
     * @param minimumMembers the smallest member list to trust, at least 1
     * @return this builder
     * @throws IllegalArgumentException if {@code minimumMembers} is below 1
     */
    public Builder strict(int minimumMembers) {
      if (minimumMembers < 1) {
        throw new IllegalArgumentException("minimum members must be at least 1: "
            + minimumMembers);
      }
      this.minimumMembers = minimumMembers;
      return this;
    }

    /**
     * How many members own each target: its top {@code k} by rendezvous score (1, the default:
     * the rendezvous winner alone). Every replica must use the same count.
     *
     * @param k from 1 to {@value AllocatorSpec#MAX_REPLICAS}
     * @return this builder
     * @throws IllegalArgumentException if {@code k} is out of range
     */
    public Builder replicas(int k) {
      if (k < 1 || k > AllocatorSpec.MAX_REPLICAS) {
        throw new IllegalArgumentException(
            "replicas must be between 1 and " + AllocatorSpec.MAX_REPLICAS + ": " + k);
      }
      this.replicas = k;
      return this;
    }

    /**
     * A view over equally weighted members.
     *
     * @param members the current member list; may be empty; duplicates collapse
     * @return the view
     * @throws NullPointerException if {@code members} or a name is null
     * @throws IllegalArgumentException if a name is empty
     */
    public Ownership build(Collection<String> members) {
      return new Ownership(self, key, minimumMembers, replicas,
          HashRings.checkedMembers(members));
    }

    /**
     * A view over weighted members: member {@code i} owns a share {@code w_i / sum(w)} of the
     * targets in expectation; equal weights place as {@link #build(Collection)} does.
     *
     * @param weights the members and their weights (finite, &gt; 0); may be empty
     * @return the view
     * @throws NullPointerException if {@code weights}, a name or a weight is null
     * @throws IllegalArgumentException if a name is empty or a weight is out of range
     */
    public Ownership build(Map<String, Double> weights) {
      return new Ownership(self, key, minimumMembers, replicas,
          HashRings.checkedWeights(weights));
    }
  }
}
