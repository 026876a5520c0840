package dev.apportion.allocation.server;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Target costs from a Prometheus instant query ({@code /api/v1/query}, e.g. {@code
 * scrape_samples_scraped}): the response parsed into cost by label values, a target's key on the
 * same labels, and the attaching of costs to targets with the median for a target no sample
 * matched. Prometheus, Thanos, Mimir and VictoriaMetrics answer the same shape.
 *
 * <p>Shared by the server's cost feed and the simulator's {@code --costs} file, so that both read
 * a response and match it with targets the same way; they differ only in what a bad sample means:
 * the simulator refuses the file, the server skips the sample (its target keeps its last cost).
 *
 * <p><b>Internal:</b> public for the simulator in {@code allocation-bench}; it may change without
 * notice. Stateless and thread-safe.
 */
public final class CostQueryResponse {
  /** The labels a sample is matched on when none are configured: what a scrape gives it. */
  public static final List<String> DEFAULT_MATCH = List.of("job", "instance");

  private CostQueryResponse() {}

  /**
   * A parsed response.
   *
   * @param costs cost by key (the values of the match labels, in order), whole numbers, samples
   *     of one key summed
   * @param problems one line per sample skipped (no value, or not a finite number &gt;= 0), each
   *     naming the sample as {@code data.result[i] {labels}: ...}
   * @param samples how many samples the vector held, skipped ones included
   */
  public record Parsed(Map<List<String>, Long> costs, List<String> problems, int samples) {
    /**
     * Keeps immutable copies.
     *
     * @param costs cost by key
     * @param problems the samples skipped
     * @param samples how many samples the vector held
     */
    public Parsed {
      costs = Map.copyOf(costs);
      problems = List.copyOf(problems);
    }
  }

  /**
   * Parses an instant-query response with a vector result. Samples are keyed by the values of
   * {@code match} in order (a label a sample lacks is the empty string, as in PromQL); samples of
   * one key are summed (a query over several Prometheus servers that scrape one target twice
   * counts it twice: aggregate in the query, e.g. {@code max by (job, instance) (...)}); values
   * are rounded to whole numbers and capped at {@link Target#MAX_COST}.
   *
   * @param root the response's JSON
   * @param match the labels to match on
   * @return the costs and the samples skipped
   * @throws IOException if the response reports an error ({@code "status":"error"}, with its
   *     {@code errorType} and {@code error}) or is not a vector (a scalar, a matrix, a string, or
   *     no {@code data.result})
   */
  public static Parsed parse(JsonNode root, List<String> match) throws IOException {
    if (root == null || !root.isObject()) {
      throw new IOException("not a Prometheus query response (expected a JSON object)");
    }
    if (root.has("status") && !"success".equals(root.path("status").asText())) {
      throw new IOException("the query failed (status \"" + root.path("status").asText() + "\""
          + detail(root, "errorType") + detail(root, "error") + ")");
    }
    String type = root.path("data").path("resultType").asText("");
    JsonNode result = root.path("data").path("result");
    if (!"vector".equals(type) || !result.isArray()) {
      // A scalar has no labels to match a target with; a matrix is a range query's answer.
      throw new IOException("not a Prometheus instant-query response with a vector result ("
          + (type.isEmpty() ? "" : "resultType \"" + type + "\"; ") + "expected {\"data\":"
          + "{\"resultType\":\"vector\",\"result\":[...]}}, as /api/v1/query returns for e.g. "
          + "scrape_samples_scraped)");
    }
    Map<List<String>, Long> costs = new HashMap<>();
    List<String> problems = new ArrayList<>();
    for (int i = 0; i < result.size(); i++) {
      sample(result.get(i), i, match, costs, problems);
    }
    return new Parsed(costs, problems, result.size());
  }

  /** Adds one sample of a vector to {@code costs}, or a line to {@code problems}. */
  private static void sample(
      JsonNode sample, int i, List<String> match, Map<List<String>, Long> costs, List<String> problems) {
    JsonNode metric = sample.path("metric");
    JsonNode value = sample.path("value").path(1);
    String where = "data.result[" + i + "] " + LogSafe.text(metric.toString()) + ": ";
    if (!value.isTextual()) {
      problems.add(where + "no value (expected \"value\":[<time>,\"<number>\"])");
      return;
    }
    double v;
    try {
      v = Double.parseDouble(value.asText());
    } catch (NumberFormatException e) {
      v = Double.NaN;
    }
    if (!(v >= 0) || Double.isInfinite(v)) {
      problems.add(where + "value \"" + LogSafe.text(value.asText()) + "\" is not a finite number >= 0 (a "
          + "cost; filter the query, e.g. scrape_samples_scraped >= 0)");
      return;
    }
    List<String> key = new ArrayList<>(match.size());
    for (String label : match) {
      key.add(metric.path(label).asText(""));
    }
    long cost = v >= Target.MAX_COST ? Target.MAX_COST : Math.round(v);
    costs.merge(List.copyOf(key), cost, (a, b) -> Math.min(Target.MAX_COST, a + b));
  }

  /**
   * Reads an instant-query answer as it arrives, as {@link #parse} reads its tree, holding one
   * sample at a time beside the costs kept: the memory a read takes is bounded by {@code
   * maxSeries} keys, not by the answer's size. An error answer's {@code error} text is cut to a
   * log line's length.
   *
   * @param in the body, already limited in size and time
   * @param factory a factory whose parsers limit strings and nesting
   * @param match the labels to match on
   * @param maxSeries the most samples read; more is an error (aggregate in the query)
   * @return the costs and the samples skipped
   * @throws IOException as {@link #parse}, or for more than {@code maxSeries} samples
   */
  static Parsed read(InputStream in, JsonFactory factory, List<String> match, int maxSeries)
      throws IOException {
    Map<List<String>, Long> costs = new HashMap<>();
    List<String> problems = new ArrayList<>();
    String status = null;
    String errorType = null;
    String error = null;
    String type = "";
    int samples = -1;
    try (JsonParser p = factory.createParser(in)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new IOException("not a Prometheus query response (expected a JSON object)");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken t = p.nextToken();
        switch (field) {
          case "status" -> status = t.isScalarValue() ? p.getText() : "?";
          case "errorType" -> errorType = t == JsonToken.VALUE_STRING ? p.getText() : null;
          case "error" -> error = t == JsonToken.VALUE_STRING ? p.getText() : null;
          case "data" -> {
            if (t != JsonToken.START_OBJECT) {
              p.skipChildren();
              continue;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
              String dataField = p.currentName();
              JsonToken d = p.nextToken();
              if ("resultType".equals(dataField) && d == JsonToken.VALUE_STRING) {
                type = p.getText();
              } else if ("result".equals(dataField) && d == JsonToken.START_ARRAY) {
                samples = 0;
                while (p.nextToken() != JsonToken.END_ARRAY) {
                  if (samples == maxSeries) {
                    throw new IOException("more than " + maxSeries + " series in the answer (aggregate"
                        + " in the query, e.g. sum by (job, instance) (...))");
                  }
                  JsonNode sample = TargetGroups.JSON.readTree(p);
                  sample(sample, samples++, match, costs, problems);
                }
              } else {
                p.skipChildren();
              }
            }
          }
          default -> p.skipChildren();
        }
      }
    }
    if (status != null && !"success".equals(status)) {
      throw new IOException("the query failed (status \"" + LogSafe.text(status) + "\""
          + (errorType == null ? "" : ", errorType \"" + LogSafe.text(errorType) + "\"")
          + (error == null ? "" : ", error \"" + LogSafe.text(error) + "\"") + ")");
    }
    if (!"vector".equals(type) || samples < 0) {
      throw new IOException("not a Prometheus instant-query response with a vector result ("
          + (type.isEmpty() ? "" : "resultType \"" + LogSafe.text(type) + "\"; ") + "expected {\"data\":"
          + "{\"resultType\":\"vector\",\"result\":[...]}}, as /api/v1/query returns for e.g. "
          + "scrape_samples_scraped)");
    }
    return new Parsed(costs, problems, samples);
  }

  private static String detail(JsonNode root, String field) {
    JsonNode v = root.path(field);
    return v.isTextual() ? ", " + field + " \"" + LogSafe.text(v.asText()) + "\"" : "";
  }

  /**
   * The key a target is matched on: for each label, the target's label of that name; for {@code
   * job}, its job; for {@code instance} when it has no such label, its address (what Prometheus
   * gives a target that sets no {@code instance}). A label the target lacks is the empty string.
   *
   * @param t the target
   * @param match the labels
   * @return the key, one value per label
   */
  public static List<String> key(Target t, List<String> match) {
    List<String> key = new ArrayList<>(match.size());
    for (String label : match) {
      String v = t.labels().get(label);
      if (v == null && label.equals("job")) {
        v = t.job();
      }
      if (v == null && label.equals("instance")) {
        v = t.address();
      }
      key.add(v == null ? "" : v);
    }
    return key;
  }

  /**
   * Targets with costs attached, and how many matched a sample.
   *
   * @param targets the targets, in the order given, each with its cost
   * @param matched how many matched a sample
   * @param fallbackCost the cost given to the others: the median of the matched costs, 1 when
   *     none matched
   */
  public record Attached(List<Target> targets, int matched, long fallbackCost) {}

  /**
   * Attaches costs to targets, each matched on the key {@code keyOf} gives it. A target whose key
   * has an empty value (it lacks one of the labels) matches nothing. A target with no sample gets
   * the median of the matched targets' costs (1 when none matched, which is the count-based
   * balance), so it is neither free nor dominant.
   *
   * @param targets the targets
   * @param costs cost by key
   * @param keyOf a target's key
   * @return the targets with costs, in the same order
   */
  public static Attached attach(List<Target> targets, Map<List<String>, Long> costs,
      Function<Target, List<String>> keyOf) {
    long[] byTarget = new long[targets.size()];
    long[] found = new long[targets.size()];
    int matched = 0;
    for (int i = 0; i < byTarget.length; i++) {
      List<String> key = keyOf.apply(targets.get(i));
      Long c = key.contains("") ? null : costs.get(key);
      byTarget[i] = c == null ? -1 : Math.min(c, Target.MAX_COST);
      if (c != null) {
        found[matched++] = byTarget[i];
      }
    }
    long median = 1;
    if (matched > 0) {
      long[] sorted = Arrays.copyOf(found, matched);
      Arrays.sort(sorted);
      median = sorted[sorted.length / 2];
    }
    List<Target> out = new ArrayList<>(byTarget.length);
    for (int i = 0; i < byTarget.length; i++) {
      out.add(targets.get(i).withCost(byTarget[i] < 0 ? median : byTarget[i]));
    }
    return new Attached(out, matched, median);
  }
}
