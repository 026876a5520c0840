package dev.apportion.allocation.identity;

import java.util.Arrays;
import java.util.Map;

/**
 * Label arrays: a target's labels as one array of names and values interleaved ({@code name0,
 * value0, name1, value1, ...}), strictly ascending by name, no nulls, never written once built.
 * Here are the searches over such arrays, the sort that makes one, and the validating copy of a
 * map into one. All static; nothing here keeps state.
 */
public final class LabelArrays {
  /** Labels whose name starts with this prefix are metadata, not identity. */
  public static final String META_PREFIX = "__meta_";
  /**
   * The least string above every string that starts with {@link #META_PREFIX} ({@code '_' + 1} is
   * {@code '`'}): the {@code __meta_*} labels are exactly those in {@code [META_PREFIX, META_END)}.
   */
  static final String META_END = "__meta`";
  /** The label Prometheus gives every target for its address. */
  static final String ADDRESS = "__address__";
  /** The label array of no labels. */
  public static final String[] NO_LABELS = {};
  /** Up to this many labels, insertion sort; above, a merge sort. */
  private static final int INSERTION_SORT_MAX = 16;

  private LabelArrays() {}

  /**
   * The first pair in {@code [from, to)} whose name is not below {@code key}; {@code to} if none.
   *
   * @param kv a label array
   * @param from the first pair searched
   * @param to past the last pair searched
   * @param key a name
   * @return the pair index
   */
  public static int lowerBound(String[] kv, int from, int to, String key) {
    int lo = from;
    int hi = to;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (kv[mid << 1].compareTo(key) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /**
   * The pair named {@code key} in {@code [from, to)}, or -1.
   *
   * @param kv a label array
   * @param from the first pair searched
   * @param to past the last pair searched
   * @param key a name
   * @return the pair index, or -1
   */
  public static int indexOf(String[] kv, int from, int to, String key) {
    int i = lowerBound(kv, from, to, key);
    return i < to && kv[i << 1].equals(key) ? i : -1;
  }

  /**
   * The labels of {@code labels} as a label array, validated: for a map the one-pass reader
   * found invalid or inconsistent (its {@code forEach} and its size disagreed). Reads the entry
   * set; a name the entry set repeats keeps its last value, as {@code Map.put} would.
   *
   * @throws NullPointerException if a name or a value is null
   * @throws IllegalArgumentException if a name is empty
   */
  static String[] copy(Map<String, String> labels) {
    if (labels.isEmpty()) {
      return NO_LABELS;
    }
    // size() is a hint only: a concurrent map may change while it is iterated.
    String[] kv = new String[Math.max(labels.size(), 1) << 1];
    int n = 0;
    for (Map.Entry<String, String> e : labels.entrySet()) {
      String name = e.getKey();
      if (name == null) {
        throw new NullPointerException("target label name must not be null");
      }
      String value = e.getValue();
      if (value == null) {
        throw new NullPointerException("target label '" + name + "' must not have a null value");
      }
      if (name.isEmpty()) {
        // Prometheus label names match [a-zA-Z_][a-zA-Z0-9_]*: an empty one is a caller's bug.
        throw new IllegalArgumentException("target label name must not be empty (its value is '"
            + value + "')");
      }
      if (n << 1 == kv.length) {
        kv = Arrays.copyOf(kv, kv.length << 1);
      }
      kv[n << 1] = name;
      kv[(n << 1) + 1] = value;
      n++;
    }
    n = sortedDistinct(kv, n);
    if (n == 0) {
      return NO_LABELS;
    }
    return n << 1 == kv.length ? kv : Arrays.copyOf(kv, n << 1);
  }

  /**
   * Puts the first {@code pairs} pairs in name order, keeping the last of each run of equal
   * names; returns the pairs kept. Does nothing to pairs already strictly ascending.
   */
  static int sortedDistinct(String[] kv, int pairs) {
    if (strictlyAscending(kv, pairs)) {
      return pairs;
    }
    sort(kv, pairs);
    return dropDuplicates(kv, pairs);
  }

  private static boolean strictlyAscending(String[] kv, int pairs) {
    for (int i = 1; i < pairs; i++) {
      if (kv[(i - 1) << 1].compareTo(kv[i << 1]) >= 0) {
        return false;
      }
    }
    return true;
  }

  /** Sorts the first {@code pairs} pairs by name; stable, so equal names keep their order. */
  private static void sort(String[] kv, int pairs) {
    if (pairs <= INSERTION_SORT_MAX) {
      insertionSort(kv, 0, pairs);
    } else {
      mergeSort(kv, new String[pairs << 1], 0, pairs);
    }
  }

  /**
   * Binary insertion sort: label names often share long prefixes ({@code __meta_kubernetes_...}),
   * so comparisons cost more than moves, and this makes about {@code n log n} of them.
   */
  private static void insertionSort(String[] kv, int from, int to) {
    for (int i = from + 1; i < to; i++) {
      String name = kv[i << 1];
      // The first pair in [from, i) whose name is above `name`: after any equal ones (stable).
      int lo = from;
      int hi = i;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (kv[mid << 1].compareTo(name) <= 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      if (lo == i) {
        continue;
      }
      String value = kv[(i << 1) + 1];
      System.arraycopy(kv, lo << 1, kv, (lo + 1) << 1, (i - lo) << 1);
      kv[lo << 1] = name;
      kv[(lo << 1) + 1] = value;
    }
  }

  private static void mergeSort(String[] kv, String[] tmp, int from, int to) {
    if (to - from <= INSERTION_SORT_MAX) {
      insertionSort(kv, from, to);
      return;
    }
    int mid = (from + to) >>> 1;
    mergeSort(kv, tmp, from, mid);
    mergeSort(kv, tmp, mid, to);
    if (kv[(mid - 1) << 1].compareTo(kv[mid << 1]) <= 0) {
      return;
    }
    // Merge the left half (moved to tmp) with the right half (in place) into kv[from, to).
    System.arraycopy(kv, from << 1, tmp, from << 1, (mid - from) << 1);
    int i = from;
    int j = mid;
    int k = from;
    while (i < mid && j < to) {
      if (kv[j << 1].compareTo(tmp[i << 1]) < 0) {
        kv[k << 1] = kv[j << 1];
        kv[(k << 1) + 1] = kv[(j << 1) + 1];
        j++;
      } else {
        kv[k << 1] = tmp[i << 1];
        kv[(k << 1) + 1] = tmp[(i << 1) + 1];
        i++;
      }
      k++;
    }
    System.arraycopy(tmp, i << 1, kv, k << 1, (mid - i) << 1);
  }

  /**
   * Keeps the last of each run of equal names (as {@code Map.put} would), for maps whose entry
   * set repeats a name (a broken or concurrently modified map). Returns the pairs kept.
   */
  private static int dropDuplicates(String[] kv, int pairs) {
    int w = 0;
    for (int r = 0; r < pairs; r++) {
      if (w > 0 && kv[(w - 1) << 1].equals(kv[r << 1])) {
        w--;
      }
      kv[w << 1] = kv[r << 1];
      kv[(w << 1) + 1] = kv[(r << 1) + 1];
      w++;
    }
    return w;
  }
}
