package dev.apportion.allocation;

import dev.apportion.allocation.identity.Canonical;
import dev.apportion.allocation.identity.LabelArrays;
import dev.apportion.allocation.identity.LabelShape;
import dev.apportion.allocation.identity.Mixers;
import dev.apportion.allocation.identity.PairReader;
import java.util.Arrays;
import java.util.Map;

/**
 * Builds the targets of discovery refresh after discovery refresh, handing back the very {@link
 * Target} it built last time for every label set that did not change. One per discovery loop: an
 * embedder keeps it for as long as it runs, calls {@link #intern} for every label set of a
 * refresh, and {@link #endRefresh()} when the refresh is complete.
 *
 * <pre>{@code
 * TargetInterner interner = new TargetInterner();            // kept from refresh to refresh
 * ...
 * List<Target> targets = new ArrayList<>(discovered.size());  // on every refresh
 * for (Map<String, String> labels : discovered) {
 *   targets.add(interner.intern("kubernetes-pods", labels.get("__address__"), labels));
 * }
 * interner.endRefresh();
 * allocator.setTargets(targets);
 * }</pre>
 *
 * <h2>Why</h2>
 * A collector's discovery hands over every target's labels on every refresh, decoded anew, and
 * most of them are the same as last time. {@link Target#of} must sort, encode and hash them to a
 * new object each time; an allocator given a new but equal target must then compare it with the
 * one it holds. An unchanged label set here costs one pass over the map (a hash of each value,
 * the names' hashes a {@code HashMap} has already cached, and a comparison of its names with a
 * shared array), allocates nothing, and returns the held instance, which an allocator recognises
 * by identity at once. A label set that changed, or is new, builds a new target exactly as {@link
 * Target#of} would: same identity, same {@link Target#hash()}, same labels.
 *
 * <h2>Design</h2>
 * An open-addressing table (linear probing) maps an order-independent 64-bit hash of job,
 * address and labels (the sum of a mixed hash per label, so neither the map's order nor a sort
 * matters) to the target, and keeps beside it a second, independent 64-bit hash of the same (the
 * check) and the {@linkplain LabelShape shape} of the target's labels: their names in the order
 * its map gave them, the one memo of "the same names as last time" that {@link Target#of} keeps
 * too (one shared shape for all the targets whose maps iterate alike). A hit needs the key and
 * the check to match and the names to be the shape's, compared string by string against its
 * shared, cached array; the values
 * are compared through their hashes, which take every {@code char} of every value (eight bytes
 * of state per four characters, each step a bijection), so a hit never reads the held target
 * itself: a refresh reads the maps it is given and the interner's own arrays, not the targets a
 * previous refresh left scattered over the heap. Two label sets with equal names and different
 * values are taken for one only if both 64-bit sums collide, with probability about
 * 2<sup>-64</sup> per pair of label sets that share job, address and names: the same guarantee
 * an allocator relies on when it compares {@link Target#hash()} and {@link Target#labelsHash()}
 * to tell an unchanged target. A map that iterates its names in another order than last time is
 * compared string by string with the held target.
 *
 * <p>Discovery hands its label sets over in much the same order every refresh, so the interner
 * also keeps each refresh's calls in order (key, check, shape and target per call) and first
 * compares a call with the previous refresh's call at the same position: an unchanged refresh in
 * the same order reads the maps and two sequential arrays, never the table. Only the calls that
 * missed their turn probe the table, which records the refresh and position of the last such
 * call for each target. {@link #endRefresh()} then forgets the previous refresh's targets that
 * were found neither in turn nor in the table (backward-shift deletion: no tombstones), probing
 * only for the calls that did not match in turn; a label set found twice in one refresh is
 * marked so that the next refresh finds it through the table, which tells a repeat from a move.
 * New targets share their label names with earlier targets (their shape's, one {@code String}
 * instance per distinct name) and repeated values through a small direct-mapped cache, so
 * 100,000 pods do not keep 1.3 million copies of {@code "__meta_kubernetes_pod_ready"} and
 * {@code "true"}.
 *
 * <p><b>Not thread-safe</b>: one discovery loop uses it at a time (the targets it returns are
 * immutable and may be shared freely). {@link #intern} never blocks; it allocates only when it
 * builds a new target or grows its table or its record of calls (to the size of the largest
 * refresh). Memory: the table holds 72 to 144 bytes per target (a
 * reference and four longs per slot, at most half the slots used) and the record of the last two
 * refreshes' calls about 46 bytes per call (two longs, a reference, a short and a byte, twice),
 * beside the targets themselves, which it keeps until the refresh that no longer has them ends.
 */
public final class TargetInterner {
  private static final int MIN_CAPACITY = 64;
  /** Slots of the direct-mapped value cache. */
  private static final int VALUE_SLOTS = 1 << 12;
  /** Distinct shapes kept at most; past it, a hit compares the held target's names. */
  private static final int MAX_SHAPES = 1 << 10;
  /** Longs per slot in {@link #slots}. */
  private static final int STRIDE = 4;
  /** A call's flag: it found the target the previous refresh's call at its position found. */
  private static final byte IN_TURN = 1;
  /** A call's flag: its target was found more than once in its refresh. */
  private static final byte REPEATED = 2;
  /**
   * A previous call's flag: a call of the current refresh found its target out of turn, so a
   * later call at that position must not take it in turn (it may be a repeat, see {@link
   * #intern}).
   */
  private static final byte NOT_IN_TURN = 4;
  /** Calls of a refresh recorded in order at least, before the cap of {@link #recordCap()}. */
  private static final int MIN_RECORDED = 1 << 10;

  /** The table: a slot is empty when its target is null. */
  private Target[] targets = new Target[MIN_CAPACITY];
  /**
   * Per slot {@code i}, four longs side by side, so that one cache line answers a probe: {@code
   * [4i]} the key, {@code [4i + 1]} the check (a second, independent 64-bit hash of the same
   * label set), {@code [4i + 2]} the refresh that last found it out of turn or built it (high 32
   * bits) and the index in {@link #shapes} of its shape (low 32 bits; -1 for none), {@code
   * [4i + 3]} the position of that call in its refresh (-1 when not
   * recorded).
   */
  private long[] slots = new long[MIN_CAPACITY * STRIDE];
  private int size;
  private int refresh = 1;

  /** The previous refresh's calls, in order (see {@link Calls}). */
  private Calls previous = new Calls();
  /** The current refresh's calls so far. */
  private Calls current = new Calls();
  /** Reads a map: its pairs, and the sums behind the key and the check. */
  private final PairReader reader = new PairReader();
  /**
   * The distinct shapes of the targets built, the first {@link #shapeCount}: maps built alike
   * iterate alike, so there are few, and they stay in the cache.
   */
  private LabelShape[] shapes = new LabelShape[8];
  private int shapeCount;
  /** The index of the last shape used, tried first for the next new target. */
  private int lastShape = -1;
  private final String[] values = new String[VALUE_SLOTS];

  /** An empty interner. */
  public TargetInterner() {}

  /**
   * The target for these labels: the one this interner returned for an equal label set (same
   * job, address and labels, {@code __meta_*} included) since the previous {@link #endRefresh()}
   * or in the refresh before it, else a new one, built and validated exactly as {@link
   * Target#of(String, String, Map)} builds it. Never blocks; allocates nothing when it finds the
   * target (but to grow the record of calls, once, past the largest refresh so far).
   *
   * @param job the scrape job's name; not null, not blank
   * @param address the address scraped; not null, not blank
   * @param labels the target's labels; not null, no null names or values, no empty name
   * @return the target, equal to {@code Target.of(job, address, labels)} and carrying the same
   *     labels (its {@linkplain Target#cost() cost} is the default), except with probability about
   *     2<sup>-64</sup> (see the class documentation)
   * @throws NullPointerException if an argument, a label name or a label value is null
   * @throws IllegalArgumentException as {@link Target#of(String, String, Map)} does
   */
  public Target intern(String job, String address, Map<String, String> labels) {
    if (job == null || address == null || labels == null) {
      return Target.of(job, address, labels); // throws the documented exception
    }
    PairReader r = reader;
    r.hashing(true);
    r.start(labels.size());
    int position = current.count;
    Calls prev = previous;
    // The shape of the previous refresh's call at this position, which the common case (the
    // same map at the same place) gives again: the map is then only hashed and its names
    // compared on the way, nothing stored. Anything else reads it again, storing its pairs.
    int expectedShape = position < prev.count ? prev.shapes[position] : -1;
    if (expectedShape >= 0) {
      r.verify(shapes[expectedShape]);
    }
    labels.forEach(r);
    if (r.invalid()) {
      return Target.of(job, address, labels); // throws, or handles what the map's iteration did
    }
    int pairs = r.pairs();
    long jobHash = Mixers.charsHash(job);
    long addressHash = Mixers.charsHash(address);
    long key = Mixers.mix(r.sum() + Mixers.mix(jobHash * 0x9E3779B97F4A7C15L ^ addressHash)
        + pairs);
    long check = Mixers.mix2(r.check() + Mixers.mix2(addressHash * 0xC2B2AE3D27D4EB4FL + jobHash)
        + pairs);
    boolean sameNames = r.namesSameAsVerified();
    if (position < prev.count && prev.keys[position << 1] == key
        && prev.keys[(position << 1) + 1] == check
        && (prev.flags[position] & (REPEATED | NOT_IN_TURN)) == 0) {
      // The common case: the map at this position in the previous refresh was this one. No
      // table probe, no write to the table.
      if (sameNames) {
        Target t = prev.targets[position];
        current.add(key, check, t, expectedShape, IN_TURN);
        return t;
      }
    }
    if (expectedShape >= 0) {
      // Verified only: read again, storing the pairs the table's comparison and a build need.
      r.start(labels.size());
      r.hashing(false);
      labels.forEach(r);
      if (r.invalid() || r.pairs() != pairs) {
        return Target.of(job, address, labels); // throws, or handles what the iteration did
      }
    }
    String[] in = r.pairArray();
    int mask = targets.length - 1;
    long[] sl = slots;
    for (int i = (int) key & mask; ; i = (i + 1) & mask) {
      Target t = targets[i];
      if (t == null) {
        break;
      }
      int at = i * STRIDE;
      if (sl[at] == key && sl[at + 1] == check) {
        long info = sl[at + 2];
        int shape = (int) info;
        // The names in the order last seen (shared, cached shapes); a map that iterates in
        // another order is compared string by string.
        if ((shape >= 0 && shapes[shape].matches(in, pairs))
            || matches(t, job, address, in, pairs)) {
          byte flags = outOfTurn(t, (int) (info >>> 32), (int) sl[at + 3], position);
          sl[at + 2] = ((long) refresh << 32) | (info & 0xFFFFFFFFL);
          sl[at + 3] = record(key, check, t, shape, flags);
          return t;
        }
      }
    }
    Canonical c = Canonical.get();
    Target t = build(job, address, in, pairs, c);
    int shape = shapeIndex(c.shape());
    insert(t, key, check, shape, record(key, check, t, shape, (byte) 0));
    return t;
  }

  /**
   * The flags of a call that found {@code t} in the table, out of turn, at {@code position}; the
   * table's entry says the refresh and the position of the last call that found it there. A
   * target found twice in a refresh is marked {@link #REPEATED} at both calls, so that the next
   * refresh takes neither in turn: {@link #endRefresh()} may then forget a target of the previous
   * refresh not found in turn at its position unless the table says it was found out of turn.
   * Every target not repeated was found at one position, the one its entry holds: found again at
   * another, it is a repeat if the call at that position found it in turn already, and that call,
   * if still to come, must look it up in the table (which tells it is a repeat).
   */
  @SuppressWarnings("ReferenceEquality") // the very instance the call at that position found
  private byte outOfTurn(Target t, int lastRefresh, int lastPosition, int position) {
    Calls cur = current;
    if (lastRefresh == refresh) {
      if (lastPosition >= 0) {
        cur.flags[lastPosition] |= REPEATED;
      }
      return REPEATED;
    }
    if (lastPosition < 0 || lastPosition == position) {
      return 0;
    }
    if (lastPosition < position) {
      if (lastPosition < cur.count && (cur.flags[lastPosition] & IN_TURN) != 0
          && cur.targets[lastPosition] == t) {
        cur.flags[lastPosition] |= REPEATED;
        return REPEATED;
      }
    } else if (lastPosition < previous.count) {
      previous.flags[lastPosition] |= NOT_IN_TURN;
    }
    return 0;
  }

  /**
   * Records the current call; returns its position, or -1 when the refresh has more calls than
   * are recorded (then the next refresh takes none in turn past them).
   */
  private int record(long key, long check, Target t, int shape, byte flags) {
    Calls cur = current;
    if (cur.count >= recordCap()) {
      cur.complete = false;
      return -1;
    }
    int position = cur.count;
    cur.add(key, check, t, shape, flags);
    return position;
  }

  /**
   * Calls recorded per refresh: a loop that never ends a refresh (or interns one label set over
   * and over) must not grow the record past what the table holds.
   */
  private int recordCap() {
    return Math.max(MIN_RECORDED, Math.max(previous.count, size) << 1);
  }

  /**
   * Ends a refresh: forgets every target not interned since the previous call (they are no
   * longer discovered). Call it once per refresh, after its last {@link #intern}. Never blocks;
   * allocates nothing.
   *
   * @return how many targets were forgotten
   */
  public int endRefresh() {
    int removed;
    if (previous.complete) {
      removed = forgetPrevious();
    } else {
      removed = forgetUnstamped();
    }
    size -= removed;
    Calls done = previous;
    previous = current;
    current = done;
    current.clear();
    refresh++;
    return removed;
  }

  /**
   * Forgets the targets of the previous refresh not found in this one: those of its calls whose
   * position was not found in turn, unless the table says they were found out of turn. Only the
   * previous refresh's calls are read; the table is probed for those not found in turn.
   */
  private int forgetPrevious() {
    Calls prev = previous;
    Calls cur = current;
    int removed = 0;
    for (int j = 0; j < prev.count; j++) {
      if (j < cur.count && (cur.flags[j] & IN_TURN) != 0) {
        continue;
      }
      int slot = slotOf(prev.targets[j], prev.keys[j << 1]);
      if (slot >= 0 && (int) (slots[slot * STRIDE + 2] >>> 32) != refresh) {
        delete(slot);
        removed++;
      }
    }
    return removed;
  }

  /**
   * Forgets every target not found in this refresh, by one pass over the table, after stamping
   * those found in turn: for a previous refresh whose calls were not all recorded.
   */
  private int forgetUnstamped() {
    Calls cur = current;
    for (int j = 0; j < cur.count; j++) {
      if ((cur.flags[j] & IN_TURN) != 0) {
        int slot = slotOf(cur.targets[j], cur.keys[j << 1]);
        if (slot < 0) {
          continue; // not expected: a target found in turn is one the table holds
        }
        int at = slot * STRIDE;
        slots[at + 2] = ((long) refresh << 32) | (slots[at + 2] & 0xFFFFFFFFL);
        slots[at + 3] = j;
      }
    }
    int removed = 0;
    int stamp = refresh;
    Target[] ts = targets;
    int mask = ts.length - 1;
    // Backward-shift deletion must not start inside a probe run that wraps around the table's
    // end: start at an empty slot, which no run crosses.
    int start = 0;
    while (ts[start] != null) {
      start++;
    }
    for (int n = 0, i = (start + 1) & mask; n < ts.length; n++, i = (i + 1) & mask) {
      while (ts[i] != null && (int) (slots[i * STRIDE + 2] >>> 32) != stamp) {
        delete(i);
        removed++;
      }
    }
    return removed;
  }

  /** The slot holding {@code t}, whose key is {@code key}, or -1. */
  @SuppressWarnings("ReferenceEquality") // the very instance the table holds
  private int slotOf(Target t, long key) {
    int mask = targets.length - 1;
    for (int i = (int) key & mask; ; i = (i + 1) & mask) {
      Target held = targets[i];
      if (held == null) {
        return -1;
      }
      if (held == t) {
        return i;
      }
    }
  }

  /**
   * How many targets this interner holds: those interned in the current refresh and those of the
   * previous one not interned again yet. Constant time.
   *
   * @return the count
   */
  public int size() {
    return size;
  }

  // ---- lookup -----------------------------------------------------------------------------------

  /**
   * Whether {@code t} is the target of job, address and the {@code pairs} pairs of {@code kv},
   * compared string by string: for a target whose name sequence is not kept.
   */
  private static boolean matches(Target t, String job, String address, String[] in, int pairs) {
    String[] kv = t.kv;
    if (kv.length != pairs << 1 || !t.address().equals(address) || !t.job().equals(job)) {
      return false;
    }
    for (int i = 0; i < pairs; i++) {
      int p = LabelArrays.indexOf(kv, 0, pairs, in[i << 1]);
      if (p < 0 || !in[(i << 1) + 1].equals(kv[(p << 1) + 1])) {
        return false;
      }
    }
    // Sizes are equal and a map's names are distinct, so every pair of kv was matched once.
    return true;
  }

  /**
   * The index in {@link #shapes} of {@code shape}, or of one with the same names, added if new;
   * -1 for none (a target built without a shape) or when no more are kept.
   */
  // ReferenceEquality: the thread's cache gives the same shape instance for the same names.
  @SuppressWarnings("ReferenceEquality")
  private int shapeIndex(LabelShape shape) {
    if (shape == null) {
      return -1;
    }
    if (lastShape >= 0 && shapes[lastShape] == shape) {
      return lastShape;
    }
    for (int k = shapeCount - 1; k >= 0 && k >= shapeCount - 8; k--) {
      if (shapes[k] == shape || shapes[k].sameNames(shape)) {
        lastShape = k;
        return k;
      }
    }
    if (shapeCount >= MAX_SHAPES) {
      return -1;
    }
    if (shapeCount == shapes.length) {
      shapes = Arrays.copyOf(shapes, shapeCount << 1);
    }
    shapes[shapeCount] = shape;
    lastShape = shapeCount++;
    return lastShape;
  }

  // ---- building ---------------------------------------------------------------------------------

  /**
   * A new target of the pairs read, built as {@link Target#of} builds it, with repeated values
   * shared with earlier targets; {@code c}'s shape is then its shape. Writes the shared values
   * into {@code in}.
   */
  private Target build(String job, String address, String[] in, int pairs, Canonical c) {
    for (int i = 1; i < pairs << 1; i += 2) {
      in[i] = value(in[i]);
    }
    Target.checkJobAndAddress(job, address);
    return Target.ofPairs(job, address, in, pairs, c);
  }

  /** The value cached in its slot if equal (one instance of {@code "true"}), else {@code v}. */
  private String value(String v) {
    int slot = Mixers.mixInt(v.hashCode()) & (VALUE_SLOTS - 1);
    String cached = values[slot];
    if (v.equals(cached)) {
      return cached;
    }
    values[slot] = v;
    return v;
  }

  // ---- table ------------------------------------------------------------------------------------

  private void insert(Target t, long key, long check, int shape, int position) {
    if ((size + 1) << 1 > targets.length) {
      grow();
    }
    int mask = targets.length - 1;
    int i = (int) key & mask;
    while (targets[i] != null) {
      i = (i + 1) & mask;
    }
    targets[i] = t;
    slots[i * STRIDE] = key;
    slots[i * STRIDE + 1] = check;
    slots[i * STRIDE + 2] = ((long) refresh << 32) | (shape & 0xFFFFFFFFL);
    slots[i * STRIDE + 3] = position;
    size++;
  }

  private void grow() {
    Target[] oldTargets = targets;
    long[] oldSlots = slots;
    int capacity = oldTargets.length << 1;
    targets = new Target[capacity];
    slots = new long[capacity * STRIDE];
    int mask = capacity - 1;
    for (int j = 0; j < oldTargets.length; j++) {
      if (oldTargets[j] != null) {
        int i = (int) oldSlots[j * STRIDE] & mask;
        while (targets[i] != null) {
          i = (i + 1) & mask;
        }
        targets[i] = oldTargets[j];
        System.arraycopy(oldSlots, j * STRIDE, slots, i * STRIDE, STRIDE);
      }
    }
  }

  /** Empties slot {@code hole}, shifting back the entries of its probe run that may fill it. */
  private void delete(int hole) {
    int mask = targets.length - 1;
    int i = hole;
    while (true) {
      i = (i + 1) & mask;
      Target t = targets[i];
      if (t == null) {
        break;
      }
      int home = (int) slots[i * STRIDE] & mask;
      // The entry at i may move to the hole when its home is not in (hole, i] cyclically.
      if (((i - home) & mask) >= ((i - hole) & mask)) {
        targets[hole] = t;
        System.arraycopy(slots, i * STRIDE, slots, hole * STRIDE, STRIDE);
        hole = i;
      }
    }
    targets[hole] = null;
  }

  /**
   * One refresh's calls in order: per call the key and the check of its label set (side by side),
   * the target returned, the index of its shape in {@link #shapes} and flags ({@link #IN_TURN},
   * {@link #REPEATED}, {@link #NOT_IN_TURN}). Kept for two refreshes, reused in turn.
   */
  private static final class Calls {
    long[] keys = new long[0];
    Target[] targets = new Target[0];
    short[] shapes = new short[0];
    byte[] flags = new byte[0];
    int count;
    /** Whether every call of the refresh is recorded. */
    boolean complete = true;

    void add(long key, long check, Target t, int shape, byte flag) {
      int i = count;
      if (i == targets.length) {
        int n = Math.max(64, i + (i >> 1));
        keys = Arrays.copyOf(keys, n << 1);
        targets = Arrays.copyOf(targets, n);
        shapes = Arrays.copyOf(shapes, n);
        flags = Arrays.copyOf(flags, n);
      }
      keys[i << 1] = key;
      keys[(i << 1) + 1] = check;
      targets[i] = t;
      shapes[i] = (short) shape;
      flags[i] = flag;
      count = i + 1;
    }

    /** Empties the record for the next refresh, dropping its references to targets. */
    void clear() {
      Arrays.fill(targets, 0, count, null);
      count = 0;
      complete = true;
    }
  }

  @Override
  public String toString() {
    return "TargetInterner{" + size + " targets, refresh " + refresh + "}";
  }
}
