package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonFactory;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.TargetInterner;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The streamed reader's values, read through a source's {@link StringCache}. */
class TargetReaderTest {
  private static final String LONG = "v".repeat(300);
  private static final String ANSWER =
      "[{\"targets\":[\" a:1 \",\"b:1\"],\"labels\":{"
          + "\"esc\":\"tab\\there \\\"q\\\" \\\\ \\u00e9\\uD83D\\uDE00\","
          + "\"utf8\":\"caf\u00e9 \u65e5\u672c\","
          + "\"empty\":\"\",\"long\":\""
          + LONG
          + "\",\"n\":5,\"b\":true,\"ready\":\"true\",\"bad-name\":\"x\"}},"
          + "{\"targets\":[\"c:1\"],\"labels\":{\"ready\":\"true\",\"pod\":\"p-1\"}}]";

  private static List<Target> read(
      String answer, JsonFactory factory, SourceLimits limits, StringCache strings)
      throws IOException {
    List<Target> out = new ArrayList<>();
    TargetReader.groups(
        new ByteArrayInputStream(answer.getBytes(StandardCharsets.UTF_8)),
        factory,
        "j",
        "__meta_url",
        "http://sd/",
        "answer",
        new LabelNames(),
        limits,
        new TargetInterner(), // a new one each time: only the cache can share instances
        strings,
        out);
    return out;
  }

  @Test
  void everyKindOfValueIsReadExactly() throws IOException {
    StringCache strings = new StringCache();
    List<Target> t =
        read(ANSWER, TargetReader.json(SourceLimits.DEFAULT), SourceLimits.DEFAULT, strings);
    assertEquals(3, t.size());
    assertEquals("a:1", t.get(0).address(), "trimmed");
    Map<String, String> l = t.get(0).labels();
    assertEquals("tab\there \"q\" \\ \u00e9\uD83D\uDE00", l.get("esc"));
    assertEquals("caf\u00e9 \u65e5\u672c", l.get("utf8"));
    assertEquals("", l.get("empty"));
    assertEquals(LONG, l.get("long"));
    assertEquals("5", l.get("n"));
    assertEquals("true", l.get("b"));
    assertEquals("true", l.get("ready"));
    assertEquals("a:1", l.get("__address__"));
    assertEquals("http://sd/", l.get("__meta_url"));
    assertEquals(null, l.get("bad-name"), "an invalid name is still dropped");
    assertEquals(Map.of("ready", "true", "pod", "p-1"), withoutReserved(t.get(2).labels()));
  }

  private static Map<String, String> withoutReserved(Map<String, String> labels) {
    Map<String, String> m = new TreeMap<>(labels);
    m.remove("__address__");
    m.remove("__meta_url");
    return m;
  }

  @Test
  void aRepeatedValueIsOneInstanceAcrossReadsAndALongOneIsNot() throws IOException {
    StringCache strings = new StringCache();
    JsonFactory json = TargetReader.json(SourceLimits.DEFAULT);
    List<Target> first = read(ANSWER, json, SourceLimits.DEFAULT, strings);
    List<Target> second = read(ANSWER, json, SourceLimits.DEFAULT, strings);
    assertSame(first.get(2).labels().get("pod"), second.get(2).labels().get("pod"));
    assertSame(first.get(0).labels().get("utf8"), second.get(0).labels().get("utf8"));
    assertSame(first.get(1).address(), second.get(1).address());
    assertNotSame(first.get(0).labels().get("long"), second.get(0).labels().get("long"));
    assertEquals(first.get(0).labels().get("long"), second.get(0).labels().get("long"));
    // Without a cache, a value is a new string every time.
    List<Target> uncached = read(ANSWER, json, SourceLimits.DEFAULT, null);
    assertNotSame(first.get(2).labels().get("pod"), uncached.get(2).labels().get("pod"));
    assertEquals(first.get(2).labels().get("pod"), uncached.get(2).labels().get("pod"));
  }

  @Test
  void theStringLengthLimitStillFailsTheReadWhateverTheValuesLength() throws IOException {
    SourceLimits limits = new SourceLimits(1 << 20, 10, 10, 8);
    JsonFactory json = TargetReader.json(limits);
    StringCache strings = new StringCache();
    String ok = "[{\"targets\":[\"a:1\"],\"labels\":{\"x\":\"12345678\"}}]";
    assertEquals("12345678", read(ok, json, limits, strings).get(0).labels().get("x"));
    for (String value : List.of("123456789", "x".repeat(100), "y".repeat(5000))) {
      String answer = "[{\"targets\":[\"a:1\"],\"labels\":{\"x\":\"" + value + "\"}}]";
      IOException e = assertThrows(IOException.class, () -> read(answer, json, limits, strings));
      assertTrue(e.getMessage().contains("exceeds the maximum allowed (8"), e.getMessage());
      String address = "[{\"targets\":[\"" + value + "\"]}]";
      e = assertThrows(IOException.class, () -> read(address, json, limits, strings));
      assertTrue(e.getMessage().contains("exceeds the maximum allowed (8"), e.getMessage());
    }
  }
}
