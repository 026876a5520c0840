package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StringCacheTest {
  /** {@code s}'s characters inside a larger buffer, as a parser hands them over. */
  private static String get(StringCache cache, String s) {
    char[] buf = ("<<" + s + ">>").toCharArray();
    return cache.get(buf, 2, s.length());
  }

  private static String get(StringCache cache, String name, String s) {
    char[] buf = ("<<" + s + ">>").toCharArray();
    return cache.get(name, buf, 2, s.length());
  }

  @Test
  void aNameWhoseValuesAreSeldomFoundPassesThemByForAWhile() {
    StringCache cache = new StringCache();
    for (int i = 0; i < StringCache.PROBE; i++) {
      assertEquals("pod-" + i, get(cache, "pod", "pod-" + i));
      assertEquals("true", get(cache, "ready", "true"));
    }
    String x = get(cache, "pod", "pod-x");
    assertEquals("pod-x", x);
    assertNotSame(x, get(cache, "pod", "pod-x"), "passed by: not kept");
    String t = get(cache, "ready", "true");
    assertSame(t, get(cache, "ready", "true"), "a name whose values are found keeps them");
    assertEquals("", get(cache, "pod", ""));
    for (int i = 0; i < StringCache.SKIP - 3; i++) {
      get(cache, "pod", "q-" + i);
    }
    String y = get(cache, "pod", "pod-y");
    assertSame(y, get(cache, "pod", "pod-y"), "probed again after SKIP values");
  }

  @Test
  void anyTextComesBackEqualAndARepeatedValueAsTheSameInstance() {
    StringCache cache = new StringCache();
    List<String> texts =
        List.of(
            "",
            "true",
            "ns-1",
            "caf\u00e9",
            "\u65e5\u672c",
            "\uD83D\uDE00 smile",
            "\"quoted\"\t\\",
            "a\u0000b",
            "x".repeat(StringCache.MAX_LENGTH),
            "y".repeat(StringCache.MAX_LENGTH + 1));
    List<String> first = new ArrayList<>();
    for (String t : texts) {
      String got = get(cache, t);
      assertEquals(t, got);
      first.add(got);
    }
    for (int i = 0; i < texts.size(); i++) {
      String again = get(cache, texts.get(i));
      assertEquals(texts.get(i), again);
      if (texts.get(i).length() <= StringCache.MAX_LENGTH) {
        assertSame(first.get(i), again, "kept: " + texts.get(i));
      } else {
        assertNotSame(first.get(i), again, "too long to keep");
      }
    }
  }

  @Test
  void equalHashesWithOtherCharactersAreNotTakenForOneAnother() {
    // Same length and the same polynomial hash: only the characters tell them apart.
    char[] a = "Aa".toCharArray();
    char[] b = "BB".toCharArray();
    assertEquals(StringCache.hash(a, 0, 2), StringCache.hash(b, 0, 2));
    StringCache cache = new StringCache();
    assertEquals("Aa", cache.get(a, 0, 2));
    assertEquals("BB", cache.get(b, 0, 2));
    assertEquals("Aa", cache.get(a, 0, 2));
    assertEquals("Aa", cache.get("xAay".toCharArray(), 1, 2));
    assertEquals("A", cache.get(a, 0, 1), "a prefix is another string");
  }

  @Test
  void aValueFoundSinceItWasPutThereSurvivesOneIntruder() {
    String a = "value-0";
    String b = null;
    int slot = StringCache.hash(a.toCharArray(), 0, a.length()) & (StringCache.SLOTS - 1);
    for (int i = 1; b == null; i++) {
      String c = "value-" + i;
      if ((StringCache.hash(c.toCharArray(), 0, c.length()) & (StringCache.SLOTS - 1)) == slot) {
        b = c;
      }
    }
    StringCache cache = new StringCache();
    String held = get(cache, a);
    assertSame(held, get(cache, a), "found, and marked");
    assertEquals(b, get(cache, b));
    assertSame(held, get(cache, a), "kept once: its mark was taken instead");
    get(cache, b); // takes the mark again
    String intruder = get(cache, b); // replaces it
    assertEquals(b, intruder);
    assertSame(intruder, get(cache, b), "the intruder is held now");
    String again = get(cache, a);
    assertEquals(a, again);
    assertNotSame(held, again, "pushed out after two misses in a row");
  }

  @Test
  void itHoldsAtMostItsSlotsWhateverIsRead() {
    StringCache cache = new StringCache();
    char[] buf = new char[32];
    for (int i = 0; i < 200_000; i++) {
      String s = "10.0." + i + ":8080";
      s.getChars(0, s.length(), buf, 0);
      assertEquals(s, cache.get(buf, 0, s.length()));
    }
    assertTrue(cache.size() <= StringCache.SLOTS, cache.toString());
    assertTrue(cache.size() > StringCache.SLOTS / 2, "most slots in use: " + cache);
  }
}
