package dev.apportion.allocation;

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
 * the names' hashes a {@code HashMap} has already cached) and one comparison with the target it
 * matches, allocates nothing, and returns the held instance, which an allocator recognises by
 * identity at once. A label set that changed, or is new, builds a new target exactly as {@link
 * Target#of} would: same identity, same {@link Target#hash()}, same labels.
 *
 * <h2>Design</h2>
 * An open-addressing table (linear probing) maps an order-independent 64-bit hash of job,
 * address and labels (the sum of a mixed hash per label, so neither the map's order nor a sort
 * matters) to the target. A hit is confirmed exactly: every name and value compared with the
 * target's, in the order this label set's map iterated last time (remembered per target and
 * shared between targets whose maps iterate alike), so a confirmed hit is always an equal label
 * set, never a hash collision. Targets carry a refresh number; {@link #endRefresh()} removes
 * those not interned since the previous one (backward-shift deletion: no tombstones). New
 * targets share their label names with earlier targets (one {@code String} instance per distinct
 * name) and repeated values through a small direct-mapped cache, so 100,000 pods do not keep
 * 1.3 million copies of {@code "__meta_kubernetes_pod_ready"} and {@code "true"}.
 *
 * <p><b>Not thread-safe</b>: one discovery loop uses it at a time (the targets it returns are
 * immutable and may be shared freely). {@link #intern} never blocks; it allocates only when it
 * builds a new target or grows its table. Memory: the table holds 40 to 80 bytes per target
 * beside the targets themselves, which it keeps until the refresh that no longer has them ends.
 *
 * @since 0.3.0
 */
public final class TargetInterner {
  private static final int MIN_CAPACITY = 64;
  /** Slots of the direct-mapped value cache. */
  private static final int VALUE_SLOTS = 1 << 12;
  /** Distinct orders kept at most. */
  private static final int MAX_ORDERS = 1 << 10;
  /** Order arrays store pair indices as bytes. */
  private static final int MAX_ORDERED_PAIRS = 255;

  /** The table: a slot is empty when its target is null. */
  private Target[] targets = new Target[MIN_CAPACITY];
  /**
   * Per slot {@code i}, two longs side by side, so that one cache line answers a probe: {@code
   * [2i]} the key, {@code [2i + 1]} the refresh that last interned it (high 32 bits) and the index
   * in {@link #orderList} of the order its map iterated in (low 32 bits; -1 for none).
   */
  private long[] slots = new long[MIN_CAPACITY << 1];
  /**
   * The distinct orders seen: for the i-th entry of a map, the label pair it is compared with.
   * Maps built alike iterate alike, so there are few; past {@link #MAX_ORDERS}, new targets get
   * none and are compared by search.
   */
  private final java.util.ArrayList<byte[]> orderList = new java.util.ArrayList<>();
  private int size;
  private int refresh = 1;

  /** The map's entries as read by the hashing pass: names and values interleaved. */
  private final PairReader reader = new PairReader();
  /** The index of the last order used, tried first for the next new target. */
  private int lastOrder = -1;
  private final String[] values = new String[VALUE_SLOTS];

  /** An empty interner. */
  public TargetInterner() {}

  /**
   * The target for these labels: the one this interner returned for an equal label set (same
   * job, address and labels, {@code __meta_*} included) since the previous {@link #endRefresh()}
   * or in the refresh before it, else a new one, built and validated exactly as {@link
   * Target#of(String, String, Map)} builds it. Never blocks; allocates nothing when it finds the
   * target.
   *
   * @param job the scrape job's name; not null, not blank
   * @param address the address scraped; not null, not blank
   * @param labels the target's labels; not null, no null names or values, no empty name
   * @return the target, equal to {@code Target.of(job, address, labels)} and carrying the same
   *     labels (its {@linkplain Target#cost() cost} is the default)
   * @throws NullPointerException if an argument, a label name or a label value is null
   * @throws IllegalArgumentException as {@link Target#of(String, String, Map)} does
   */
  public Target intern(String job, String address, Map<String, String> labels) {
    if (job == null || address == null || labels == null) {
      return Target.of(job, address, labels); // throws the documented exception
    }
    PairReader r = reader;
    r.hashing = true;
    r.start(labels.size());
    labels.forEach(r);
    if (r.invalid) {
      return Target.of(job, address, labels); // throws, or handles what the map's iteration did
    }
    int pairs = r.pairs;
    long key = mix(r.sum + mix(((long) job.hashCode() << 32) ^ (address.hashCode() & 0xFFFFFFFFL))
        + pairs);
    int mask = targets.length - 1;
    for (int i = (int) key & mask; ; i = (i + 1) & mask) {
      Target t = targets[i];
      if (t == null) {
        break;
      }
      long[] sl = slots;
      long info = sl[(i << 1) + 1];
      if (sl[i << 1] == key && matches(t, order((int) info), job, address, r.kv, pairs)) {
        sl[(i << 1) + 1] = ((long) refresh << 32) | (info & 0xFFFFFFFFL);
        return t;
      }
    }
    Target t = build(job, address, r.kv, pairs);
    insert(t, key, orderOf(t, r.kv, pairs));
    return t;
  }

  /**
   * Ends a refresh: forgets every target not interned since the previous call (they are no
   * longer discovered). Call it once per refresh, after its last {@link #intern}. Never blocks;
   * allocates nothing.
   *
   * @return how many targets were forgotten
   */
  public int endRefresh() {
    int removed = 0;
    int current = refresh;
    Target[] ts = targets;
    int mask = ts.length - 1;
    // Backward-shift deletion must not start inside a probe run that wraps around the table's
    // end: start at an empty slot, which no run crosses.
    int start = 0;
    while (ts[start] != null) {
      start++;
    }
    for (int n = 0, i = (start + 1) & mask; n < ts.length; n++, i = (i + 1) & mask) {
      while (ts[i] != null && (int) (slots[(i << 1) + 1] >>> 32) != current) {
        delete(i);
        removed++;
      }
    }
    size -= removed;
    refresh++;
    return removed;
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

  /** Whether {@code t} is the target of job, address and the {@code pairs} pairs of {@code kv}. */
  private static boolean matches(Target t, byte[] order, String job, String address, String[] in,
      int pairs) {
    String[] kv = t.kv;
    if (kv.length != pairs << 1 || !t.address().equals(address) || !t.job().equals(job)) {
      return false;
    }
    for (int i = 0; i < pairs; i++) {
      String name = in[i << 1];
      int j = order != null && i < order.length ? (order[i] & 0xFF) << 1 : kv.length;
      if (j >= kv.length || !name.equals(kv[j])) {
        int p = LabelMap.indexOf(kv, 0, pairs, name);
        if (p < 0) {
          return false;
        }
        j = p << 1;
      }
      if (!in[(i << 1) + 1].equals(kv[j + 1])) {
        return false;
      }
    }
    // Sizes are equal and a map's names are distinct, so every pair of kv was matched once.
    return true;
  }

  /** The order numbered {@code index}, or null for -1. */
  private byte[] order(int index) {
    return index < 0 ? null : orderList.get(index);
  }

  /**
   * The index in {@link #orderList} of where each entry of the map, in the order it was read,
   * sits in {@code t}'s labels: the last order's when it is the same (maps built alike iterate
   * alike); -1 when none is kept.
   */
  private int orderOf(Target t, String[] in, int pairs) {
    if (pairs > MAX_ORDERED_PAIRS) {
      return -1;
    }
    byte[] built = new byte[pairs];
    String[] kv = t.kv;
    for (int i = 0; i < pairs; i++) {
      int p = LabelMap.indexOf(kv, 0, pairs, in[i << 1]);
      if (p < 0) {
        return -1; // a map whose entries repeat a name: compare by search
      }
      built[i] = (byte) p;
    }
    if (lastOrder >= 0 && Arrays.equals(orderList.get(lastOrder), built)) {
      return lastOrder;
    }
    for (int k = orderList.size() - 1; k >= 0 && k >= orderList.size() - 8; k--) {
      if (Arrays.equals(orderList.get(k), built)) {
        lastOrder = k;
        return k;
      }
    }
    if (orderList.size() >= MAX_ORDERS) {
      return -1;
    }
    orderList.add(built);
    lastOrder = orderList.size() - 1;
    return lastOrder;
  }

  // ---- building ---------------------------------------------------------------------------------

  /**
   * A new target of the pairs read, built as {@link Target#of} builds it, with repeated values
   * shared with earlier targets. Writes the shared values into {@code in}.
   */
  private Target build(String job, String address, String[] in, int pairs) {
    for (int i = 1; i < pairs << 1; i += 2) {
      in[i] = value(in[i]);
    }
    Target.checkJobAndAddress(job, address);
    return Target.ofPairs(job, address, in, pairs);
  }

  /** The value cached in its slot if equal (one instance of {@code "true"}), else {@code v}. */
  private String value(String v) {
    int slot = mixInt(v.hashCode()) & (VALUE_SLOTS - 1);
    String cached = values[slot];
    if (v.equals(cached)) {
      return cached;
    }
    values[slot] = v;
    return v;
  }

  // ---- table ------------------------------------------------------------------------------------

  private void insert(Target t, long key, int order) {
    if ((size + 1) << 1 > targets.length) {
      grow();
    }
    int mask = targets.length - 1;
    int i = (int) key & mask;
    while (targets[i] != null) {
      i = (i + 1) & mask;
    }
    targets[i] = t;
    slots[i << 1] = key;
    slots[(i << 1) + 1] = ((long) refresh << 32) | (order & 0xFFFFFFFFL);
    size++;
  }

  private void grow() {
    Target[] oldTargets = targets;
    long[] oldSlots = slots;
    int capacity = oldTargets.length << 1;
    targets = new Target[capacity];
    slots = new long[capacity << 1];
    int mask = capacity - 1;
    for (int j = 0; j < oldTargets.length; j++) {
      if (oldTargets[j] != null) {
        int i = (int) oldSlots[j << 1] & mask;
        while (targets[i] != null) {
          i = (i + 1) & mask;
        }
        targets[i] = oldTargets[j];
        slots[i << 1] = oldSlots[j << 1];
        slots[(i << 1) + 1] = oldSlots[(j << 1) + 1];
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
      int home = (int) slots[i << 1] & mask;
      // The entry at i may move to the hole when its home is not in (hole, i] cyclically.
      if (((i - home) & mask) >= ((i - hole) & mask)) {
        targets[hole] = t;
        slots[hole << 1] = slots[i << 1];
        slots[(hole << 1) + 1] = slots[(i << 1) + 1];
        hole = i;
      }
    }
    targets[hole] = null;
  }

  // ---- hashing ----------------------------------------------------------------------------------

  /** A 64-bit finalizer (Stafford's variant 13 of MurmurHash3's): every bit affects every bit. */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  private static int mixInt(int h) {
    h *= 0x9E3779B9;
    return h ^ (h >>> 16);
  }

  @Override
  public String toString() {
    return "TargetInterner{" + size + " targets, refresh " + refresh + "}";
  }
}
