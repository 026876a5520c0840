package dev.apportion.allocation.server;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * The labels of the target being parsed: a map reused from target to target, whose names and
 * values sit in two arrays, so that filling it allocates nothing once it has grown (a {@code
 * HashMap} allocates a node per label per target) and {@link #forEach} is a plain array walk.
 * {@link #put} replaces an existing name's value, found by a linear scan (Jackson hands over one
 * instance per field name, so the scan mostly compares references); the number of labels is
 * bounded by {@link SourceLimits#maxLabelsPerTarget()}. Not thread-safe; one parse uses it.
 */
final class LabelBuffer extends AbstractMap<String, String> {
  private String[] names = new String[16];
  private String[] values = new String[16];
  private int size;

  @Override
  public String put(String name, String value) {
    for (int i = 0; i < size; i++) {
      if (names[i].equals(name)) {
        String old = values[i];
        values[i] = value;
        return old;
      }
    }
    if (size == names.length) {
      names = Arrays.copyOf(names, size << 1);
      values = Arrays.copyOf(values, size << 1);
    }
    names[size] = name;
    values[size] = value;
    size++;
    return null;
  }

  @Override
  public String get(Object name) {
    for (int i = 0; i < size; i++) {
      if (names[i].equals(name)) {
        return values[i];
      }
    }
    return null;
  }

  @Override
  public boolean containsKey(Object name) {
    return get(name) != null;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public void clear() {
    Arrays.fill(names, 0, size, null);
    Arrays.fill(values, 0, size, null);
    size = 0;
  }

  @Override
  public void forEach(BiConsumer<? super String, ? super String> action) {
    for (int i = 0; i < size; i++) {
      action.accept(names[i], values[i]);
    }
  }

  @Override
  public Set<Map.Entry<String, String>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public Iterator<Map.Entry<String, String>> iterator() {
        return new Iterator<>() {
          private int next;

          @Override
          public boolean hasNext() {
            return next < size;
          }

          @Override
          public Map.Entry<String, String> next() {
            if (next >= size) {
              throw new NoSuchElementException();
            }
            int i = next++;
            return new SimpleImmutableEntry<>(names[i], values[i]);
          }
        };
      }

      @Override
      public int size() {
        return size;
      }
    };
  }
}
