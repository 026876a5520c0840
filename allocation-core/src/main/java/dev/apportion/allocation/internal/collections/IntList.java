package dev.apportion.allocation.internal.collections;

import java.util.Arrays;

/**
 * A growable list of {@code int}s: the engine's currency for target slots and member ids, so
 * that no step of a write boxes an integer. Writer-thread only; reused across operations, so a
 * steady state allocates nothing.
 */
public final class IntList {
  private int[] values;
  private int size;

  /** An empty list. */
  public IntList() {
    this(8);
  }

  /**
   * An empty list with room for {@code capacity} values.
   *
   * @param capacity the initial capacity
   */
  public IntList(int capacity) {
    values = new int[Math.max(1, capacity)];
  }

  /**
   * The number of values.
   *
   * @return the size
   */
  public int size() {
    return size;
  }

  /**
   * Whether it holds no value.
   *
   * @return true when empty
   */
  public boolean isEmpty() {
    return size == 0;
  }

  /**
   * The value at {@code i}.
   *
   * @param i from 0 to {@code size() - 1}; not checked beyond the array's bounds
   * @return the value
   */
  public int get(int i) {
    return values[i];
  }

  /**
   * Replaces the value at {@code i}.
   *
   * @param i from 0 to {@code size() - 1}
   * @param value the new value
   */
  public void set(int i, int value) {
    values[i] = value;
  }

  /**
   * Appends a value.
   *
   * @param value the value
   */
  public void add(int value) {
    if (size == values.length) {
      values = Arrays.copyOf(values, size * 2);
    }
    values[size++] = value;
  }

  /** Above this capacity, {@link #reset} gives the memory back. */
  private static final int RETAINED_MAX = 1 << 14;

  /**
   * Empties the list, and drops its array when a large operation grew it past a few thousand
   * values, so that scratch lists do not hold memory proportional to the largest call ever made.
   */
  public void reset() {
    size = 0;
    if (values.length > RETAINED_MAX) {
      values = new int[8];
    }
  }

  /** Empties the list, keeping its capacity. */
  public void clear() {
    size = 0;
  }

  /**
   * Cuts the list to its first {@code n} values.
   *
   * @param n the new size, at most the current one
   */
  public void truncate(int n) {
    size = n;
  }

  /**
   * Sets the size to {@code n}, at most the capacity: values past the old size are whatever the
   * backing array holds there, for a caller that has just written them through {@link #array}.
   *
   * @param n the new size
   */
  public void setSize(int n) {
    if (n > values.length) {
      throw new IllegalArgumentException("size " + n + " beyond capacity " + values.length);
    }
    size = n;
  }

  /**
   * The backing array: values {@code 0 .. size() - 1} are the list's. Valid until the next
   * {@link #add}.
   *
   * @return the array
   */
  public int[] array() {
    return values;
  }

  /**
   * Makes room for {@code capacity} values without changing the size.
   *
   * @param capacity the capacity wanted
   */
  public void ensureCapacity(int capacity) {
    if (capacity > values.length) {
      values = Arrays.copyOf(values, Math.max(capacity, values.length * 2));
    }
  }

  /**
   * A copy of the values.
   *
   * @return a new array of {@code size()} values
   */
  public int[] toArray() {
    return Arrays.copyOf(values, size);
  }

  @Override
  public String toString() {
    return Arrays.toString(toArray());
  }
}
