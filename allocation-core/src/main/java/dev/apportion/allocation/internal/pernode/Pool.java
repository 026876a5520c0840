package dev.apportion.allocation.internal.pernode;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.internal.collections.IntList;
import dev.apportion.allocation.internal.engine.Assignment;
import dev.apportion.allocation.internal.engine.Member;
import dev.apportion.allocation.internal.engine.SlotOrder;
import dev.apportion.allocation.internal.engine.Slots;
import java.util.Arrays;
import java.util.function.ToIntFunction;

/**
 * {@code per-node}'s pool: the targets with no node, or whose node has no collector, and the
 * fallback's view of them. Which slots are in the pool, and the id space the fallback knows them
 * by. Writer-thread only.
 *
 * <p><b>Pool ids.</b> The fallback knows each pool target by a <em>pool id</em>, not by its slot:
 * ids are dense (a slot takes one when it joins the pool, and gives it back when it leaves, for
 * reuse from the next engine operation on: a departure's slot stays readable until the operation
 * ends), so whatever the fallback keeps by target is sized by the pool, not by every slot (100
 * pool targets among 100k: arrays of 100-odd entries, where slots would make them 100k each, 3.6
 * MB allocated on the first collector removal).
 *
 * <p><b>The view.</b> Only the pool's targets, in the engine's order, each known by its pool id.
 * Its list of slots is rebuilt when the pool changed and the fallback reads it: from the last
 * list, less the slots that left, merged with the slots that joined since (sorted), when those
 * are few; else by a pass over the engine's order. A slot that joined is taken out of its old
 * place and put in again, so a slot freed and taken by another target is placed by its new
 * target. An id given back in this operation still reads its slot (a departure's hash).
 */
final class Pool implements Assignment {
  /** The engine's view, which the pool's targets are placed in; set at each call. */
  Assignment parent;
  /** What a member holds outside the pool: its node-local targets. */
  private final ToIntFunction<Member> heldOutside;

  /** By slot: whether in the pool. */
  private boolean[] inPool = new boolean[16];
  /** By slot: its pool id while in the pool; empty until a first slot joins the pool. */
  private int[] poolIdOf = new int[0];
  /** By pool id: the slot that holds it, or held it last. */
  private int[] slotOfId = new int[16];
  /** By pool id: the collector change that last marked it an orphan of the pool. */
  private int[] markOfId = new int[16];
  private int markStamp;
  /** Pool ids handed out so far: those below it are taken or free. */
  private int idsIssued;
  /** Ids given back before this operation: taken before new ones are issued. */
  private final IntList freeIds = new IntList();
  /**
   * Ids given back in this engine operation (a {@code setTargets}, which may call {@code
   * targetsChanged} then {@code nodesChanged}, or a {@code setCollectors}): the fallback may
   * still read their slots (a departure's hash) until the operation ends, so they are reused
   * from the next one on.
   */
  private final IntList releasedIds = new IntList();
  private int count;

  private IntList sorted = new IntList();
  private IntList spare = new IntList();
  private boolean valid;
  /** Whether {@link #sorted} and {@link #joinedSince} together tell the pool. */
  private boolean based;
  /** The slots that joined the pool since {@link #sorted} was built (repeats possible). */
  private final IntList joinedSince = new IntList();
  private int[] joinMark = new int[16];
  private int joinStamp;

  Pool(ToIntFunction<Member> heldOutside) {
    this.heldOutside = heldOutside;
  }

  /** Room for slots below {@code n}. */
  void grow(int n) {
    inPool = Arrays.copyOf(inPool, n);
    if (poolIdOf.length > 0) {
      poolIdOf = Arrays.copyOf(poolIdOf, n);
    }
  }

  /** Whether {@code slot} is in the pool. */
  boolean contains(int slot) {
    return slot < inPool.length && inPool[slot];
  }

  /** How many targets are in the pool. */
  int count() {
    return count;
  }

  /**
   * Makes the ids given back in the last operation free for reuse: called as each operation
   * begins, not by a call that follows in the same operation.
   */
  void recycleIds() {
    for (int i = 0; i < releasedIds.size(); i++) {
      freeIds.add(releasedIds.get(i));
    }
    releasedIds.clear();
  }

  /** Empties the pool and forgets every id and the view's list. */
  void clear() {
    Arrays.fill(inPool, false);
    count = 0;
    idsIssued = 0;
    freeIds.clear();
    releasedIds.clear();
    valid = false;
    based = false;
    joinedSince.clear();
  }

  /** Puts {@code slot} in the pool (nothing when it is). */
  void join(int slot) {
    if (!inPool[slot]) {
      inPool[slot] = true;
      count++;
      int id;
      if (!freeIds.isEmpty()) {
        id = freeIds.get(freeIds.size() - 1);
        freeIds.truncate(freeIds.size() - 1);
      } else {
        id = idsIssued++;
        if (id == slotOfId.length) {
          slotOfId = Arrays.copyOf(slotOfId, id * 2);
          markOfId = Arrays.copyOf(markOfId, id * 2);
        }
      }
      if (poolIdOf.length == 0) {
        poolIdOf = new int[inPool.length];
      }
      poolIdOf[slot] = id;
      slotOfId[id] = slot;
      joined(slot);
    }
  }

  /** Takes {@code slot} out of the pool; returns its pool id, or -1 when it was not in it. */
  int leave(int slot) {
    if (inPool[slot]) {
      inPool[slot] = false;
      count--;
      int id = poolIdOf[slot];
      releasedIds.add(id);
      return id;
    }
    return -1;
  }

  /** The pool id of {@code slot}, which is in the pool. */
  int idOf(int slot) {
    return poolIdOf[slot];
  }

  /** Starts marking the pool's orphans of one collector change. */
  void newMarks() {
    markStamp++;
  }

  /** Marks {@code slot}, in the pool, an orphan of this collector change. */
  void mark(int slot) {
    markOfId[poolIdOf[slot]] = markStamp;
  }

  /** The ids of the marked slots, in the view's order. */
  IntList markedIds() {
    IntList out = new IntList();
    IntList pool = sorted();
    for (int i = 0; i < pool.size(); i++) {
      int id = poolIdOf[pool.get(i)];
      if (markOfId[id] == markStamp) {
        out.add(id);
      }
    }
    return out;
  }

  /** The pool changed: the view's list is rebuilt when next read. */
  void invalidate() {
    valid = false;
  }

  private void joined(int slot) {
    if (based) {
      joinedSince.add(slot);
      if (joinedSince.size() > (parent == null ? 0 : parent.size() >> 4) + 64) {
        // Many joined: a pass over the order is cheaper than sorting them.
        valid = false;
        based = false;
        joinedSince.clear();
      }
    }
  }

  /** The pool's slots (not ids), in the engine's order. */
  private IntList sorted() {
    if (!valid) {
      if (based && parent instanceof Slots slots) {
        merge(slots);
      } else {
        sorted.clear();
        int n = parent.size();
        for (int i = 0; i < n; i++) {
          int s = parent.slotAt(i);
          if (inPool[s]) {
            sorted.add(s);
          }
        }
      }
      joinedSince.clear();
      valid = true;
      based = true;
    }
    return sorted;
  }

  /** Rebuilds {@link #sorted} from itself and {@link #joinedSince}. */
  private void merge(Slots slots) {
    IntList joined = joinedSince;
    // Marked by pool id: a slot in the pool holds the id it joined with last.
    if (idsIssued > joinMark.length) {
      joinMark = Arrays.copyOf(joinMark, Math.max(idsIssued, joinMark.length * 2));
    }
    joinStamp += 2;
    int stamp = joinStamp;
    int[] marks = joinMark;
    for (int i = 0; i < joined.size(); i++) {
      int s = joined.get(i);
      if (inPool[s]) {
        marks[poolIdOf[s]] = stamp;
      }
    }
    // The joined slots still in the pool, once each, in order.
    IntList add = new IntList(joined.size());
    for (int i = 0; i < joined.size(); i++) {
      int s = joined.get(i);
      if (inPool[s] && marks[poolIdOf[s]] == stamp) {
        add.add(s);
        marks[poolIdOf[s]] = stamp + 1;
      }
    }
    long[] hashes = slots.hashes();
    Target[] targets = slots.targets();
    slots.sorter().sort(add.array(), add.size(), hashes, targets);
    IntList out = spare;
    out.clear();
    out.ensureCapacity(sorted.size() + add.size());
    int a = 0;
    for (int i = 0; i < sorted.size(); i++) {
      int s = sorted.get(i);
      // Left, or joined again (its place is taken anew, from its current target).
      if (!inPool[s] || marks[poolIdOf[s]] >= stamp) {
        continue;
      }
      while (a < add.size() && SlotOrder.compare(add.get(a), s, hashes, targets) < 0) {
        out.add(add.get(a++));
      }
      out.add(s);
    }
    while (a < add.size()) {
      out.add(add.get(a++));
    }
    spare = sorted;
    sorted = out;
  }

  /** Whether pool id {@code id} is held by a slot in the pool now. */
  private boolean held(int id, int slot) {
    return inPool[slot] && poolIdOf[slot] == id;
  }

  @Override
  public Member ownerOf(int id) {
    int slot = slotOfId[id];
    return held(id, slot) ? parent.ownerOf(slot) : null;
  }

  @Override
  public void place(int id, Member member) {
    int slot = slotOfId[id];
    if (!held(id, slot)) {
      throw new IllegalStateException("fallback placing a target not in the pool: "
          + parent.target(slot));
    }
    parent.place(slot, member);
  }

  @Override
  public Target target(int id) {
    return parent.target(slotOfId[id]);
  }

  @Override
  public long hash(int id) {
    return parent.hash(slotOfId[id]);
  }

  @Override
  public int job(int id) {
    return parent.job(slotOfId[id]);
  }

  @Override
  public long cost(int id) {
    return parent.cost(slotOfId[id]);
  }

  @Override
  public int size() {
    return sorted().size();
  }

  @Override
  public long hashAt(int i) {
    return parent.hash(sorted().get(i));
  }

  /** The member's node-local targets: those of its node when it is the node's winner. */
  @Override
  public int heldOutside(Member member) {
    return heldOutside.applyAsInt(member);
  }

  /** The pool id of the {@code i}th pool target. */
  @Override
  public int slotAt(int i) {
    return poolIdOf[sorted().get(i)];
  }
}
