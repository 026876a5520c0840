package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The query-response parsing, label mapping and median fallback shared by the server's cost feed
 * and the simulator's {@code --costs} (whose {@code CostInputsTest} runs the same cases through
 * a file, where a bad sample is an error instead of a skipped sample).
 */
class CostQueryResponseTest {
  /** One sample of an instant-query vector, as /api/v1/query returns it. */
  static String sample(String job, String instance, String value) {
    return "{\"metric\":{\"__name__\":\"scrape_samples_scraped\",\"job\":\"" + job
        + "\",\"instance\":\"" + instance + "\",\"namespace\":\"shop\"},\"value\":"
        + "[1700000000.123,\"" + value + "\"]}";
  }

  static String vector(String... samples) {
    return "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
        + String.join(",", samples) + "]}}";
  }

  static JsonNode json(String s) throws IOException {
    return TargetGroups.JSON.readTree(s);
  }

  static CostQueryResponse.Parsed parse(String s, List<String> match) throws IOException {
    return CostQueryResponse.parse(json(s), match);
  }

  @Test
  void aVectorIsKeyedByTheMatchLabelsRoundedAndDuplicatesSummed() throws Exception {
    String v = vector(
        sample("kubernetes-pods", "10.0.1.15:8080", "1234"),
        sample("kubernetes-pods", "10.0.1.16:8080", "56.6"),
        sample("kubelet", "node-a", "800"),
        sample("kubelet", "node-a", "1"));
    CostQueryResponse.Parsed p = parse(v, CostQueryResponse.DEFAULT_MATCH);
    assertEquals(Map.of(
        List.of("kubernetes-pods", "10.0.1.15:8080"), 1234L,
        List.of("kubernetes-pods", "10.0.1.16:8080"), 57L,
        List.of("kubelet", "node-a"), 801L), p.costs(), "rounded; samples of one key summed");
    assertEquals(4, p.samples());
    assertEquals(List.of(), p.problems());
    assertEquals(Map.of(List.of("shop"), 1234L + 57 + 801), parse(v, List.of("namespace")).costs());
    assertEquals(Map.of(List.of(""), 2092L), parse(v, List.of("pod")).costs(),
        "a label no sample has is the empty string, as in PromQL");
    assertEquals(Map.of(), parse(vector(), CostQueryResponse.DEFAULT_MATCH).costs(),
        "an empty vector is no error");
  }

  @Test
  void badValuesAreSkippedAndNamed() throws Exception {
    String missing = "{\"metric\":{\"job\":\"kubelet\",\"instance\":\"node-b\"}}";
    CostQueryResponse.Parsed p = parse(vector(sample("a", "b", "1"), sample("kubelet", "node-a", "NaN"),
        sample("kubelet", "node-a", "-3"), sample("kubelet", "node-a", "+Inf"),
        sample("kubelet", "node-a", "abc"), missing), CostQueryResponse.DEFAULT_MATCH);
    assertEquals(Map.of(List.of("a", "b"), 1L), p.costs(), "only the good sample");
    assertEquals(6, p.samples());
    assertEquals(5, p.problems().size(), p.problems().toString());
    for (int i = 0; i < 4; i++) {
      String problem = p.problems().get(i);
      assertTrue(problem.startsWith("data.result[" + (i + 1) + "] {"), problem);
      assertTrue(problem.contains("\"job\":\"kubelet\""), problem);
      assertTrue(problem.contains("is not a finite number >= 0"), problem);
    }
    assertTrue(p.problems().get(4).startsWith("data.result[5] {"), p.problems().get(4));
    assertTrue(p.problems().get(4).contains("no value"), p.problems().get(4));
  }

  @Test
  void errorsScalarsAndOtherShapesAreRefusedWithWhatTheySaid() {
    IOException error = assertThrows(IOException.class, () -> parse(
        "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\"}",
        CostQueryResponse.DEFAULT_MATCH));
    assertEquals("the query failed (status \"error\", errorType \"bad_data\", error \"parse error\")",
        error.getMessage());
    IOException scalar = assertThrows(IOException.class, () -> parse(
        "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1700000000,\"4\"]}}",
        CostQueryResponse.DEFAULT_MATCH));
    assertTrue(scalar.getMessage().startsWith(
        "not a Prometheus instant-query response with a vector result (resultType \"scalar\";"),
        scalar.getMessage());
    IOException matrix = assertThrows(IOException.class, () -> parse(
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}",
        CostQueryResponse.DEFAULT_MATCH));
    assertTrue(matrix.getMessage().contains("resultType \"matrix\""), matrix.getMessage());
    assertThrows(IOException.class, () -> parse("{\"status\":\"success\",\"data\":{\"activeTargets\":[]}}",
        CostQueryResponse.DEFAULT_MATCH), "a targets response");
    assertThrows(IOException.class, () -> parse("[]", CostQueryResponse.DEFAULT_MATCH));
  }

  @Test
  void hugeValuesAreCappedAtTheLargestCost() throws Exception {
    CostQueryResponse.Parsed p = parse(vector(sample("a", "b", "1e300"), sample("a", "b", "5")),
        CostQueryResponse.DEFAULT_MATCH);
    assertEquals(Target.MAX_COST, p.costs().get(List.of("a", "b")));
  }

  @Test
  void aTargetsKeyIsItsLabelElseItsJobAndAddress() {
    Target plain = Target.of("node", "10.0.0.1:9100");
    assertEquals(List.of("node", "10.0.0.1:9100"), CostQueryResponse.key(plain, CostQueryResponse.DEFAULT_MATCH));
    Target relabelled = Target.of("node", "10.0.0.1:9100", Map.of("instance", "host-1", "job", "nodes", "team", "a"));
    assertEquals(List.of("nodes", "host-1", "a", ""),
        CostQueryResponse.key(relabelled, List.of("job", "instance", "team", "pod")));
  }

  @Test
  void targetsWithoutASampleCostTheMedianOfTheMatched() {
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      targets.add(Target.of("j", "h" + i + ":1"));
    }
    Map<List<String>, Long> costs = Map.of(List.of("j", "h0:1"), 10L, List.of("j", "h1:1"), 300L,
        List.of("j", "h2:1"), 20L, List.of("j", "gone:1"), 9999L);
    CostQueryResponse.Attached a = CostQueryResponse.attach(targets, costs,
        t -> CostQueryResponse.key(t, CostQueryResponse.DEFAULT_MATCH));
    assertEquals(3, a.matched());
    assertEquals(20, a.fallbackCost(), "the median of 10, 20, 300");
    assertEquals(List.of(10L, 300L, 20L, 20L, 20L), a.targets().stream().map(Target::cost).toList());
    assertEquals(targets, a.targets(), "the same targets: a cost is not identity");

    CostQueryResponse.Attached none = CostQueryResponse.attach(targets, Map.of(),
        t -> CostQueryResponse.key(t, CostQueryResponse.DEFAULT_MATCH));
    assertEquals(0, none.matched());
    assertEquals(1, none.fallbackCost(), "nothing matched: cost 1, the count-based balance");

    // A target lacking a label of the key matches nothing, even a sample that lacks it too.
    CostQueryResponse.Attached byNamespace = CostQueryResponse.attach(targets,
        Map.of(List.of(""), 5000L, List.of("shop"), 7L), t -> CostQueryResponse.key(t, List.of("namespace")));
    assertEquals(0, byNamespace.matched());
  }
}
