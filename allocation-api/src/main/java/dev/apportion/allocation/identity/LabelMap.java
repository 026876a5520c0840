package dev.apportion.allocation.identity;

import java.util.AbstractCollection;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * An immutable {@link SortedMap} in natural {@code String} order over pairs {@code [from, to)} of
 * an array of names and values interleaved ({@code name0, value0, name1, value1, ...}), strictly
 * ascending by name, no nulls (a {@linkplain LabelArrays label array}). This is what {@code
 * Target.labels()} returns: the target's own label array, not a copy, viewed without any per-label
 * object.
 *
 * <p>Design: the array is never written after the target that owns it validated and sorted it, so
 * views share it freely, and {@code Target.of} can reuse it when handed another target's labels
 * ({@link #array()}). Lookups are binary searches ({@code O(log n)}); iteration walks the array;
 * sub-maps are index ranges over the same array. It behaves like {@code
 * Collections.unmodifiableSortedMap(new TreeMap<>(labels))}: every mutator, on the map and on its
 * views, throws {@link UnsupportedOperationException}; a null key is a {@link
 * NullPointerException} and a key that is not a {@code String} a {@link ClassCastException}; a
 * sub-map remembers the key bounds it was created with and rejects keys outside them with an
 * {@link IllegalArgumentException}, as {@link SortedMap} specifies.
 *
 * <p>All fields are final, so a view is safely published however it is shared.
 */
// JdkObsolete: Target.labels() returns a SortedMap (public API); this implements it.
@SuppressWarnings("JdkObsolete")
public final class LabelMap extends AbstractMap<String, String> implements SortedMap<String, String> {
  /** Names and values interleaved; strictly ascending by name; never written. */
  private final String[] kv;
  /** The first pair (inclusive) and the last pair (exclusive) in this view. */
  private final int from;
  private final int to;
  /** Key bounds of a sub-map, lower inclusive and upper exclusive; null when unbounded. */
  private final String lo;
  private final String hi;

  /**
   * A view of the whole of {@code kv}. Allocates the view only.
   *
   * @param kv a label array, which must be valid (see the class documentation) and is never
   *     written again
   */
  public LabelMap(String[] kv) {
    this(kv, 0, kv.length >> 1, null, null);
  }

  private LabelMap(String[] kv, int from, int to, String lo, String hi) {
    this.kv = kv;
    this.from = from;
    this.to = to;
    this.lo = lo;
    this.hi = hi;
  }

  /**
   * This view's pairs as a label array: its array itself when the view covers all of it (a
   * target's labels), else a copy of its range (a sub-map).
   *
   * @return a valid label array, never to be written
   */
  public String[] array() {
    return from == 0 && to == kv.length >> 1 ? kv : Arrays.copyOfRange(kv, from << 1, to << 1);
  }

  private int indexOf(Object key) {
    return LabelArrays.indexOf(kv, from, to, (String) Objects.requireNonNull(key));
  }

  // ---- queries --------------------------------------------------------------------------------

  @Override
  public int size() {
    return to - from;
  }

  @Override
  public boolean isEmpty() {
    return to == from;
  }

  @Override
  public String get(Object key) {
    int i = indexOf(key);
    return i < 0 ? null : kv[(i << 1) + 1];
  }

  @Override
  public String getOrDefault(Object key, String defaultValue) {
    int i = indexOf(key);
    return i < 0 ? defaultValue : kv[(i << 1) + 1];
  }

  @Override
  public boolean containsKey(Object key) {
    return indexOf(key) >= 0;
  }

  @Override
  public boolean containsValue(Object value) {
    for (int i = from; i < to; i++) {
      if (kv[(i << 1) + 1].equals(value)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void forEach(BiConsumer<? super String, ? super String> action) {
    Objects.requireNonNull(action);
    for (int i = from; i < to; i++) {
      action.accept(kv[i << 1], kv[(i << 1) + 1]);
    }
  }

  /** Always null: the order is the natural order of {@code String}. */
  @Override
  public Comparator<? super String> comparator() {
    return null;
  }

  @Override
  public String firstKey() {
    if (from == to) {
      throw new NoSuchElementException();
    }
    return kv[from << 1];
  }

  @Override
  public String lastKey() {
    if (from == to) {
      throw new NoSuchElementException();
    }
    return kv[(to - 1) << 1];
  }

  // ---- sub-maps ---------------------------------------------------------------------------------

  @Override
  public SortedMap<String, String> subMap(String fromKey, String toKey) {
    checkInRange(fromKey, false, "fromKey");
    checkInRange(toKey, true, "toKey");
    if (fromKey.compareTo(toKey) > 0) {
      throw new IllegalArgumentException("fromKey > toKey");
    }
    return view(fromKey, toKey);
  }

  @Override
  public SortedMap<String, String> headMap(String toKey) {
    checkInRange(toKey, true, "toKey");
    return view(lo, toKey);
  }

  @Override
  public SortedMap<String, String> tailMap(String fromKey) {
    checkInRange(fromKey, false, "fromKey");
    return view(fromKey, hi);
  }

  /**
   * Rejects a key outside this view's bounds, as {@code TreeMap}'s views do: a lower bound must
   * lie in {@code [lo, hi)}, an upper bound in {@code [lo, hi]}.
   */
  private void checkInRange(String key, boolean upper, String what) {
    Objects.requireNonNull(key, what);
    if ((lo != null && key.compareTo(lo) < 0)
        || (hi != null && (upper ? key.compareTo(hi) > 0 : key.compareTo(hi) >= 0))) {
      throw new IllegalArgumentException(what + " out of range");
    }
  }

  private LabelMap view(String newLo, String newHi) {
    int f = newLo == null ? from : LabelArrays.lowerBound(kv, from, to, newLo);
    int t = newHi == null ? to : LabelArrays.lowerBound(kv, f, to, newHi);
    return new LabelMap(kv, f, t, newLo, newHi);
  }

  // ---- views ------------------------------------------------------------------------------------

  @Override
  public Set<Map.Entry<String, String>> entrySet() {
    return new ReadOnlySet<>() {
      @Override
      public Iterator<Map.Entry<String, String>> iterator() {
        return new Walk<>() {
          @Override
          Map.Entry<String, String> at(int i) {
            return Map.entry(kv[i << 1], kv[(i << 1) + 1]);
          }
        };
      }

      @Override
      public int size() {
        return to - from;
      }

      @Override
      public boolean contains(Object o) {
        if (!(o instanceof Map.Entry)) {
          return false;
        }
        Map.Entry<?, ?> e = (Map.Entry<?, ?>) o;
        if (!(e.getKey() instanceof String)) {
          return false;
        }
        int i = LabelArrays.indexOf(kv, from, to, (String) e.getKey());
        return i >= 0 && kv[(i << 1) + 1].equals(e.getValue());
      }
    };
  }

  @Override
  public Set<String> keySet() {
    return new ReadOnlySet<>() {
      @Override
      public Iterator<String> iterator() {
        return new Walk<>() {
          @Override
          String at(int i) {
            return kv[i << 1];
          }
        };
      }

      @Override
      public int size() {
        return to - from;
      }

      @Override
      public boolean contains(Object o) {
        return containsKey(o);
      }
    };
  }

  @Override
  public Collection<String> values() {
    return new AbstractCollection<>() {
      @Override
      public Iterator<String> iterator() {
        return new Walk<>() {
          @Override
          String at(int i) {
            return kv[(i << 1) + 1];
          }
        };
      }

      @Override
      public int size() {
        return to - from;
      }

      @Override
      public boolean contains(Object o) {
        return containsValue(o);
      }

      @Override
      public boolean add(String e) {
        throw uoe();
      }

      @Override
      public boolean addAll(Collection<? extends String> c) {
        throw uoe();
      }

      @Override
      public boolean remove(Object o) {
        throw uoe();
      }

      @Override
      public boolean removeAll(Collection<?> c) {
        throw uoe();
      }

      @Override
      public boolean retainAll(Collection<?> c) {
        throw uoe();
      }

      @Override
      public boolean removeIf(Predicate<? super String> filter) {
        throw uoe();
      }

      @Override
      public void clear() {
        throw uoe();
      }
    };
  }

  /** An iterator over the pairs of this view; {@code remove} is unsupported. */
  private abstract class Walk<E> implements Iterator<E> {
    private int next = from;

    abstract E at(int pair);

    @Override
    public boolean hasNext() {
      return next < to;
    }

    @Override
    public E next() {
      if (next >= to) {
        throw new NoSuchElementException();
      }
      return at(next++);
    }
  }

  /** A set whose every mutator throws, whether or not it would change anything. */
  private abstract static class ReadOnlySet<E> extends AbstractSet<E> {
    @Override
    public boolean add(E e) {
      throw uoe();
    }

    @Override
    public boolean addAll(Collection<? extends E> c) {
      throw uoe();
    }

    @Override
    public boolean remove(Object o) {
      throw uoe();
    }

    @Override
    public boolean removeAll(Collection<?> c) {
      throw uoe();
    }

    @Override
    public boolean retainAll(Collection<?> c) {
      throw uoe();
    }

    @Override
    public boolean removeIf(Predicate<? super E> filter) {
      throw uoe();
    }

    @Override
    public void clear() {
      throw uoe();
    }
  }

  // ---- equality ---------------------------------------------------------------------------------

  /** Per the {@link Map} contract: equal to any map with the same entries. */
  @Override
  public boolean equals(Object o) {
    if (o == this) {
      return true;
    }
    if (o instanceof LabelMap m) {
      return Arrays.equals(kv, from << 1, to << 1, m.kv, m.from << 1, m.to << 1);
    }
    if (!(o instanceof Map)) {
      return false;
    }
    Map<?, ?> m = (Map<?, ?>) o;
    if (m.size() != size()) {
      return false;
    }
    try {
      for (int i = from; i < to; i++) {
        if (!kv[(i << 1) + 1].equals(m.get(kv[i << 1]))) {
          return false;
        }
      }
    } catch (ClassCastException | NullPointerException unused) {
      return false;
    }
    return true;
  }

  /** Per the {@link Map} contract: the sum of {@code name.hashCode() ^ value.hashCode()}. */
  @Override
  public int hashCode() {
    int h = 0;
    for (int i = from; i < to; i++) {
      h += kv[i << 1].hashCode() ^ kv[(i << 1) + 1].hashCode();
    }
    return h;
  }

  // ---- mutators: all unsupported ----------------------------------------------------------------

  private static UnsupportedOperationException uoe() {
    return new UnsupportedOperationException("target labels are immutable");
  }

  @Override
  public String put(String key, String value) {
    throw uoe();
  }

  @Override
  public String remove(Object key) {
    throw uoe();
  }

  @Override
  public void putAll(Map<? extends String, ? extends String> m) {
    throw uoe();
  }

  @Override
  public void clear() {
    throw uoe();
  }

  @Override
  public void replaceAll(BiFunction<? super String, ? super String, ? extends String> function) {
    throw uoe();
  }

  @Override
  public String putIfAbsent(String key, String value) {
    throw uoe();
  }

  @Override
  public boolean remove(Object key, Object value) {
    throw uoe();
  }

  @Override
  public boolean replace(String key, String oldValue, String newValue) {
    throw uoe();
  }

  @Override
  public String replace(String key, String value) {
    throw uoe();
  }

  @Override
  public String computeIfAbsent(String key, Function<? super String, ? extends String> f) {
    throw uoe();
  }

  @Override
  public String computeIfPresent(
      String key, BiFunction<? super String, ? super String, ? extends String> f) {
    throw uoe();
  }

  @Override
  public String compute(
      String key, BiFunction<? super String, ? super String, ? extends String> f) {
    throw uoe();
  }

  @Override
  public String merge(
      String key, String value, BiFunction<? super String, ? super String, ? extends String> f) {
    throw uoe();
  }
}
