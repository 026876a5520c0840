package dev.apportion.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SimulationInputsTest {
  @TempDir
  Path dir;

  static Path sample() throws URISyntaxException {
    return Path.of(SimulationInputsTest.class.getResource("/sim/prometheus-targets.json").toURI());
  }

  @Test
  void readsTheCommittedPrometheusSample() throws Exception {
    SimulationInputs.Targets read = SimulationInputs.readTargets(sample());
    List<Target> targets = read.targets();
    assertEquals(9, targets.size(), "active targets only, the dropped one ignored");

    Target cart = targets.get(0);
    assertEquals("kubernetes-pods", cart.job());
    assertEquals("10.0.1.15:8080", cart.address());
    assertEquals(Optional.of("ip-10-0-1-10.ec2.internal"), cart.node());
    assertEquals("cart-7d9f8-abcde", cart.labels().get("__meta_kubernetes_pod_name"));

    List<String> jobs = new ArrayList<>();
    List<Optional<String>> nodes = new ArrayList<>();
    for (Target t : targets) {
      jobs.add(t.job());
      nodes.add(t.node());
    }
    assertEquals(List.of("kubernetes-pods", "kubernetes-pods", "kubernetes-pods",
        "kubernetes-pods", "kubelet", "kubelet", "kubelet", "node-exporter", "blackbox"), jobs);
    assertEquals(Optional.of("ip-10-0-2-20.ec2.internal"), nodes.get(7),
        "an endpointslice address of kind Node names its node");
    assertEquals(Optional.empty(), nodes.get(8), "the probe names no node");
    assertEquals("https://shop.example.com/healthz", targets.get(8).address());
    assertEquals(Map.of(
        "ip-10-0-1-10.ec2.internal", "us-east-1a",
        "ip-10-0-2-20.ec2.internal", "us-east-1b",
        "ip-10-0-3-30.ec2.internal", "us-east-1c"), read.zones(),
        "zones from the node labels, the deprecated failure-domain one included");
  }

  private Path write(String name, String content) throws IOException {
    Path p = dir.resolve(name);
    Files.writeString(p, content);
    return p;
  }

  @Test
  void invalidJsonNamesTheFileAndTheLine() throws Exception {
    Path p = write("t.json", "{\"status\": \"success\",\n \"data\": {\"activeTargets\": [ { ] }}");
    InputException e = assertThrows(InputException.class, () -> SimulationInputs.readTargets(p));
    assertTrue(e.getMessage().startsWith(p + ":2:"), e.getMessage());
    assertTrue(e.getMessage().contains("not valid JSON"), e.getMessage());
    assertEquals(-1, e.getMessage().indexOf('\n'), "one line");
  }

  @Test
  void aMissingFieldIsNamed() throws Exception {
    Path p = write("t.json", "{\"status\":\"success\",\"data\":{\"activeTargets\":["
        + "{\"discoveredLabels\":{\"__address__\":\"a:1\",\"job\":\"j\"}},"
        + "{\"discoveredLabels\":{\"job\":\"j\"}}]}}");
    InputException e = assertThrows(InputException.class, () -> SimulationInputs.readTargets(p));
    assertEquals(p + ": field data.activeTargets[1].discoveredLabels.__address__ is missing or "
        + "empty", e.getMessage());

    Path noData = write("n.json", "{\"status\":\"success\"}");
    e = assertThrows(InputException.class, () -> SimulationInputs.readTargets(noData));
    assertEquals(noData + ": field data.activeTargets is missing or not an array", e.getMessage());

    Path noJob = write("j.json", "{\"data\":{\"activeTargets\":["
        + "{\"discoveredLabels\":{\"__address__\":\"a:1\"}}]}}");
    e = assertThrows(InputException.class, () -> SimulationInputs.readTargets(noJob));
    assertTrue(e.getMessage().contains("data.activeTargets[0] has no job"), e.getMessage());

    Path number = write("v.json", "{\"data\":{\"activeTargets\":[{\"scrapePool\":\"j\","
        + "\"discoveredLabels\":{\"__address__\":\"a:1\",\"port\":8080}}]}}");
    e = assertThrows(InputException.class, () -> SimulationInputs.readTargets(number));
    assertTrue(e.getMessage().contains("data.activeTargets[0].discoveredLabels.port is not a "
        + "string"), e.getMessage());
  }

  @Test
  void anErrorResponseIsReported() throws Exception {
    Path p = write("e.json", "{\"status\":\"error\",\"error\":\"unauthorized\"}");
    InputException e = assertThrows(InputException.class, () -> SimulationInputs.readTargets(p));
    assertEquals(p + ": field status is 'error', not 'success': unauthorized", e.getMessage());
  }

  @Test
  void aMissingFileIsReportedNotThrown() {
    Path p = dir.resolve("absent.json");
    InputException e = assertThrows(InputException.class, () -> SimulationInputs.readTargets(p));
    assertTrue(e.getMessage().startsWith(p + ": cannot read: "), e.getMessage());
  }

  @Test
  void readsACollectorList() throws Exception {
    Path p = write("c.txt", """
        # name node zone

        agent-a node-1 zone-a
          agent-b   node-2
        agent-c -\s
        """);
    SimulationInputs.Collectors read = SimulationInputs.readCollectors(p);
    assertEquals(List.of(Collector.of("agent-a", "node-1"), Collector.of("agent-b", "node-2"),
        Collector.of("agent-c")), read.collectors());
    assertEquals(Map.of("node-1", "zone-a"), read.zones());
  }

  @Test
  void aBadCollectorLineIsNamedByNumber() throws Exception {
    Path p = write("c.txt", "agent-a node-1\n# comment\nagent-b node-2 zone-b extra\n");
    InputException e = assertThrows(InputException.class, () -> SimulationInputs.readCollectors(p));
    assertEquals(p + ":3: expected 'name node [zone]', found 4 fields: "
        + "'agent-b node-2 zone-b extra'", e.getMessage());

    Path dup = write("d.txt", "agent-a node-1\nagent-a node-2\n");
    e = assertThrows(InputException.class, () -> SimulationInputs.readCollectors(dup));
    assertEquals(dup + ":2: collector 'agent-a' is already on line 1", e.getMessage());

    Path zones = write("z.txt", "a n1 z1\nb n1 z2\n");
    e = assertThrows(InputException.class, () -> SimulationInputs.readCollectors(zones));
    assertEquals(zones + ":2: node 'n1' is in zone 'z1' on an earlier line, 'z2' here",
        e.getMessage());

    Path empty = write("e.txt", "# nothing\n");
    e = assertThrows(InputException.class, () -> SimulationInputs.readCollectors(empty));
    assertTrue(e.getMessage().startsWith(empty + ": no collectors"), e.getMessage());
  }

  private static void assertSameTargets(SimulationInputs.Targets want,
      SimulationInputs.Targets got) {
    assertEquals(want.targets().size(), got.targets().size());
    for (int i = 0; i < want.targets().size(); i++) {
      Target w = want.targets().get(i);
      Target g = got.targets().get(i);
      assertEquals(w.job(), g.job(), "job of #" + i);
      assertEquals(w.address(), g.address(), "address of #" + i);
      assertEquals(w.labels(), g.labels(), "labels of #" + i);
    }
    assertEquals(want.zones(), got.zones());
  }

  @Test
  void theStreamingReaderReadsWhatTheWholeTreeHolds() throws Exception {
    assertSameTargets(PrometheusFiles.readWhole(sample()), SimulationInputs.readTargets(sample()));

    Path generated = PrometheusFiles.write(dir.resolve("big.json"), 5000);
    SimulationInputs.Targets read = SimulationInputs.readTargets(generated);
    assertEquals(5000, read.targets().size());
    assertSameTargets(PrometheusFiles.readWhole(generated), read);
    assertEquals("caf\u00e9 \"1\"", read.targets().get(1).labels()
        .get("__meta_kubernetes_pod_annotation_note"), "escapes and non-ASCII decoded");
    assertEquals(Map.of("node-0", "us-east-1a", "node-1", "us-east-1b", "node-2", "us-east-1c",
        "node-3", "us-east-1a", "node-4", "us-east-1b", "node-5", "us-east-1c",
        "node-6", "us-east-1a"), read.zones());
    assertSame(read.targets().get(0).labels().get("__meta_kubernetes_namespace"),
        read.targets().get(1).labels().get("__meta_kubernetes_namespace"),
        "a repeated value is kept once");
  }

  @Test
  void contentAfterTheDocumentIsRejected() throws Exception {
    String sample = Files.readString(sample());
    for (String tail : List.of("xyz", "{}", "]", "\"status\"", "0")) {
      Path p = write("t.json", sample + tail);
      InputException e =
          assertThrows(InputException.class, () -> SimulationInputs.readTargets(p), tail);
      assertTrue(e.getMessage().startsWith(p + ":"), e.getMessage());
      assertTrue(e.getMessage().endsWith(": unexpected content after the end of the JSON "
          + "document"), e.getMessage());
    }
    Path spaces = write("s.json", sample + "\n\n  \t\n");
    assertEquals(9, SimulationInputs.readTargets(spaces).targets().size(), "white space is fine");
  }

  @Test
  void aRepeatedKeyIsRejected() throws Exception {
    Path p = write("t.json", "{\"data\":{\"activeTargets\":[{\"scrapePool\":\"j\","
        + "\"discoveredLabels\":{\"__address__\":\"a:1\",\"__address__\":\"b:1\"}}]}}");
    InputException e = assertThrows(InputException.class, () -> SimulationInputs.readTargets(p));
    assertTrue(e.getMessage().startsWith(p + ":1:"), e.getMessage());
    assertTrue(e.getMessage().contains("not valid JSON: Duplicate field '__address__'"),
        e.getMessage());
  }

  @Test
  void noActiveTargetsIsAnEmptyList() throws Exception {
    Path p = write("t.json", "{\"status\":\"success\",\"data\":{\"activeTargets\":[],"
        + "\"droppedTargets\":[{\"discoveredLabels\":{}}]}}");
    assertEquals(List.of(), SimulationInputs.readTargets(p).targets());
  }

  @Test
  void aCollectorsFileThatIsNotUtf8NamesTheLine() throws Exception {
    Path p = dir.resolve("c.txt");
    Files.write(p, new byte[] {'a', ' ', 'n', '1', '\n', 'b', (byte) 0xFF, ' ', 'n', '2', '\n'});
    InputException e = assertThrows(InputException.class, () -> SimulationInputs.readCollectors(p));
    assertEquals(p + ":2: not UTF-8 text (byte 2 of the line is 0xFF)", e.getMessage());

    Path latin1 = dir.resolve("l.txt");
    Files.write(latin1, "# caf\u00e9\r\nagent-a node-1\r\n\r\nagent-\u00e9 node-2\n"
        .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
    e = assertThrows(InputException.class, () -> SimulationInputs.readCollectors(latin1));
    assertEquals(latin1 + ":1: not UTF-8 text (byte 6 of the line is 0xE9)", e.getMessage());
  }

  @Test
  void aCollectorsFileWithAByteOrderMarkAndCrLfLinesReads() throws Exception {
    Path p = dir.resolve("c.txt");
    Files.writeString(p, "\uFEFFagent-a node-1 zone-a\r\nagent-\u00e9 node-2\r\rx -\r\n");
    assertEquals(List.of(Collector.of("agent-a", "node-1"), Collector.of("agent-\u00e9", "node-2"),
        Collector.of("x")), SimulationInputs.readCollectors(p).collectors());
    Path bad = write("b.txt", "a n1\r\nb\r\n");
    InputException e =
        assertThrows(InputException.class, () -> SimulationInputs.readCollectors(bad));
    assertTrue(e.getMessage().startsWith(bad + ":2: "), e.getMessage());
  }
}
