package dev.apportion.allocation.ownership;

import com.google.common.hash.Hashing;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.identity.Encoder;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Which parts of a {@link Target} decide where it goes: a pinned function from a target to the
 * 64-bit key that {@link Ownership} places. Immutable and thread-safe; a value type
 * ({@link #equals} compares the configuration).
 *
 * <h2>Why the key is explicit</h2>
 * When every replica decides ownership on its own, the replicas agree on an owner only if they
 * agree on the key. A label whose value depends on the replica that discovered the target (a
 * host-specific {@code instance}, a per-scrape signature parameter) gives each replica a
 * different key for the same target, so the target is scraped by several replicas, or by none.
 * This is the bug class Grafana Alloy's clustering hit repeatedly (issues #3108, #1611, #6484):
 * its key was every non-{@code __meta_} label, implicitly. Here the key is chosen, named by
 * {@link #describe()}, and pinned by tests; replicas can compare {@link #describe()} (or
 * {@link Ownership#fingerprint()}) and, per target, {@link #keyOf} to check they agree.
 *
 * <h2>The three keys</h2>
 * <ul>
 *   <li>{@link #identity()}: {@link Target#hash()}, the target's identity (job, address, every
 *       non-{@code __meta_} label). The default; the same key the central allocator places, so a
 *       deployment can switch between central and local ownership without reshuffling.
 *   <li>{@link #excludingLabels}: the identity with the named labels removed, that is
 *       {@code Target.of(job, address, identityLabelsWithoutThem).hash()}; job and address always
 *       count. A target that carries none of the named labels keeps its identity key, so
 *       excluding a volatile label moves only the targets that carry it.
 *   <li>{@link #onlyLabels}: exactly the named labels and nothing else (not job, not address,
 *       unless named). Hashed with Guava's {@link Hashing#farmHashFingerprint64()} (documented
 *       by Guava as never changing) over this encoding: byte {@code 2}, then for each named label
 *       in {@link String#compareTo} order its name and its value, each written as its UTF-8
 *       length (unsigned LEB128) followed by its UTF-8 bytes: the strings encoded as
 *       {@link Target#hash()} encodes them, by the same encoder. A label the target lacks has the
 *       empty value, as in Prometheus. Names refer to {@link Target#labels()}, {@code __meta_*}
 *       included; {@code job} and {@code __address__}, when the labels do not carry them, stand
 *       for {@link Target#job()} and {@link Target#address()}, which Prometheus gives every
 *       target as those two labels.
 * </ul>
 *
 * <p><b>Stability.</b> All three are pure functions of the target's strings: the same on every
 * JVM and, as the golden values in the tests pin, in every release. Changing an encoding is a
 * breaking change.
 *
 * <p><b>Warning:</b> an {@link #onlyLabels} key that names labels few targets carry gives many
 * targets the same key, and all of them the same owner.
 *
 * @since 0.1.0
 */
public final class TargetKey {
  /** The first byte of the {@link #onlyLabels} encoding: distinct from the identity's {@code 1}. */
  private static final int ONLY_LABELS_ENCODING = 2;
  private static final String JOB = "job";
  private static final String ADDRESS = "__address__";
  private static final TargetKey IDENTITY = new TargetKey(Kind.IDENTITY, new String[0]);

  private enum Kind {
    IDENTITY("identity"),
    ONLY("onlyLabels"),
    EXCLUDING("excludingLabels");

    final String label;

    Kind(String label) {
      this.label = label;
    }
  }

  private final Kind kind;
  /** Sorted, distinct. */
  private final String[] names;
  private final List<String> nameList;
  private final String description;

  private TargetKey(Kind kind, String[] names) {
    this.kind = kind;
    this.names = names;
    this.nameList = List.of(names);
    this.description = describe(kind, names);
  }

  /**
   * The default key: {@link Target#hash()}. Does not allocate.
   *
   * @return the identity key
   */
  public static TargetKey identity() {
    return IDENTITY;
  }

  /**
   * A key over exactly the named labels (see the class documentation for the encoding and for
   * {@code job} and {@code __address__}).
   *
   * @param labelNames the labels that decide placement; at least one; duplicates collapse and
   *     order does not matter
   * @return the key
   * @throws NullPointerException if {@code labelNames} or a name is null
   * @throws IllegalArgumentException if no name is given or a name is empty
   */
  public static TargetKey onlyLabels(String... labelNames) {
    String[] sorted = sortedNames(labelNames);
    if (sorted.length == 0) {
      throw new IllegalArgumentException("onlyLabels needs at least one label name");
    }
    return new TargetKey(Kind.ONLY, sorted);
  }

  /**
   * The identity key without the named labels: for labels whose value is volatile (a per-scrape
   * signature parameter) or depends on the replica that discovered the target (a host-specific
   * {@code instance}). Job and address always count; {@code __meta_*} labels never do.
   *
   * @param labelNames the labels to leave out; duplicates collapse and order does not matter;
   *     none gives {@link #identity()}
   * @return the key
   * @throws NullPointerException if {@code labelNames} or a name is null
   * @throws IllegalArgumentException if a name is empty
   */
  public static TargetKey excludingLabels(String... labelNames) {
    String[] sorted = sortedNames(labelNames);
    return sorted.length == 0 ? IDENTITY : new TargetKey(Kind.EXCLUDING, sorted);
  }

  /**
   * The key of {@code target}. For {@link #identity()}, a field read; for the other keys, about
   * the cost of hashing the target's labels once, allocating a small buffer ({@link
   * #excludingLabels} does not allocate for a target that carries none of the named labels).
   *
   * @param target a target
   * @return its 64-bit key
   * @throws NullPointerException if {@code target} is null
   */
  public long keyOf(Target target) {
    Objects.requireNonNull(target, "target must not be null");
    return switch (kind) {
      case ONLY -> onlyLabelsKey(target);
      case EXCLUDING -> excludingKey(target);
      case IDENTITY -> target.hash();
    };
  }

  /**
   * The label names this key was built with, sorted: the labels hashed for {@link #onlyLabels},
   * the labels left out for {@link #excludingLabels}, none for {@link #identity()}.
   *
   * @return an unmodifiable list
   */
  public List<String> labelNames() {
    return nameList;
  }

  /**
   * A stable, unambiguous description of this key, for replicas to compare or to log at start:
   * {@code identity}, {@code onlyLabels["a","b"]} or {@code excludingLabels["instance"]} (names
   * sorted, {@code "} and {@code \} escaped with a backslash). Two keys with the same description
   * are {@linkplain #equals equal} and compute the same key for every target.
   *
   * @return the description; does not allocate
   */
  public String describe() {
    return description;
  }

  /** Equal when of the same kind with the same label names. */
  @Override
  public boolean equals(Object o) {
    return o instanceof TargetKey other && description.equals(other.description);
  }

  @Override
  public int hashCode() {
    return description.hashCode();
  }

  /** The same as {@link #describe()}. */
  @Override
  public String toString() {
    return description;
  }

  private long onlyLabelsKey(Target target) {
    SortedMap<String, String> labels = target.labels();
    Encoder out = new Encoder();
    out.writeByte(ONLY_LABELS_ENCODING);
    for (String name : names) {
      String value = labels.get(name);
      if (value == null) {
        if (name.equals(JOB)) {
          value = target.job();
        } else if (name.equals(ADDRESS)) {
          value = target.address();
        } else {
          value = "";
        }
      }
      out.writeString(name);
      out.writeString(value);
    }
    return Hashing.farmHashFingerprint64().hashBytes(out.bytes(), 0, out.length()).asLong();
  }

  private long excludingKey(Target target) {
    SortedMap<String, String> labels = target.labels();
    boolean carries = false;
    for (String name : names) {
      if (labels.containsKey(name) && !name.startsWith(Target.META_PREFIX)) {
        carries = true;
        break;
      }
    }
    if (!carries) {
      return target.hash();
    }
    TreeMap<String, String> kept = new TreeMap<>();
    for (Map.Entry<String, String> e : labels.entrySet()) {
      String name = e.getKey();
      if (!name.startsWith(Target.META_PREFIX) && !excluded(name)) {
        kept.put(name, e.getValue());
      }
    }
    return Target.of(target.job(), target.address(), kept).hash();
  }

  private boolean excluded(String name) {
    return Arrays.binarySearch(names, name) >= 0;
  }

  private static String[] sortedNames(String... labelNames) {
    Objects.requireNonNull(labelNames, "label names must not be null");
    TreeSet<String> sorted = new TreeSet<>();
    for (String name : labelNames) {
      Objects.requireNonNull(name, "a label name must not be null");
      if (name.isEmpty()) {
        throw new IllegalArgumentException("a label name must not be empty");
      }
      sorted.add(name);
    }
    return sorted.toArray(new String[0]);
  }

  private static String describe(Kind kind, String[] names) {
    if (kind == Kind.IDENTITY) {
      return kind.label;
    }
    StringBuilder sb = new StringBuilder(kind.label).append('[');
    for (int i = 0; i < names.length; i++) {
      if (i > 0) {
        sb.append(',');
      }
      sb.append('"');
      for (int c = 0; c < names[i].length(); c++) {
        char ch = names[i].charAt(c);
        if (ch == '"' || ch == '\\') {
          sb.append('\\');
        }
        sb.append(ch);
      }
      sb.append('"');
    }
    return sb.append(']').toString();
  }
}
