package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

/**
 * The streamed reader's values, exactly as sent, and its string limit: regression tests kept from
 * a per-source string cache that read values as the parser's characters (measured and dropped:
 * it allocated less but cost more CPU than it saved).
 */
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

  private static List<Target> read(String answer, JsonFactory factory, SourceLimits limits)
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
        new TargetInterner(),
        out);
    return out;
  }

  @Test
  void everyKindOfValueIsReadExactly() throws IOException {
    List<Target> t = read(ANSWER, TargetReader.json(SourceLimits.DEFAULT), SourceLimits.DEFAULT);
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
  void theStringLengthLimitFailsTheReadWhateverTheValuesLength() throws IOException {
    SourceLimits limits = new SourceLimits(1 << 20, 10, 10, 8);
    JsonFactory json = TargetReader.json(limits);
    String ok = "[{\"targets\":[\"a:1\"],\"labels\":{\"x\":\"12345678\"}}]";
    assertEquals("12345678", read(ok, json, limits).get(0).labels().get("x"));
    for (String value : List.of("123456789", "x".repeat(100), "y".repeat(5000))) {
      String answer = "[{\"targets\":[\"a:1\"],\"labels\":{\"x\":\"" + value + "\"}}]";
      IOException e = assertThrows(IOException.class, () -> read(answer, json, limits));
      assertTrue(e.getMessage().contains("exceeds the maximum allowed (8"), e.getMessage());
      String address = "[{\"targets\":[\"" + value + "\"]}]";
      e = assertThrows(IOException.class, () -> read(address, json, limits));
      assertTrue(e.getMessage().contains("exceeds the maximum allowed (8"), e.getMessage());
    }
  }

  @Test
  void aNameInstanceFoundValidIsTakenAsValidAndAnInvalidOneNever() {
    LabelNames names = new LabelNames();
    String pod = "pod";
    assertTrue(names.isValid(pod));
    assertTrue(names.isValid(pod), "the same instance, found by reference");
    assertTrue(names.isValid(new String("pod")), "an equal instance, checked");
    for (String bad : List.of("bad-name", "", "1x", "caf\u00e9", "a.b")) {
      assertFalse(names.isValid(bad), bad);
      assertFalse(names.isValid(bad), "not remembered: " + bad);
      assertEquals(LabelNames.valid(bad), names.isValid(bad));
    }
    for (int i = 0; i < 1000; i++) {
      String name = "n" + i;
      assertTrue(names.isValid(name));
      assertFalse(names.isValid(name + "-"), "slots taken by valid names do not make others valid");
    }
  }

  @Test
  void droppedNamesAreCountedPerRead() throws IOException {
    LabelNames names = new LabelNames();
    names.begin();
    List<Target> out = new ArrayList<>();
    String answer =
        "[{\"targets\":[\"a:1\"],\"labels\":{\"ok\":\"1\",\"bad-1\":\"x\"}},"
            + "{\"targets\":[\"b:1\"],\"labels\":{\"bad-1\":\"x\",\"bad.2\":\"y\"}}]";
    TargetReader.groups(
        new ByteArrayInputStream(answer.getBytes(StandardCharsets.UTF_8)),
        TargetReader.json(SourceLimits.DEFAULT),
        "j",
        null,
        null,
        "answer",
        names,
        SourceLimits.DEFAULT,
        new TargetInterner(),
        out);
    assertEquals(3, names.lastDropped());
    assertEquals(Map.of("ok", "1", "__address__", "a:1"), out.get(0).labels());
    assertEquals(Map.of("__address__", "b:1"), out.get(1).labels());
  }
}
