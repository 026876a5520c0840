package dev.apportion.bench.sim;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.server.CostQueryResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

/**
 * Target costs and collector capacities for the simulator: read from what a user's Prometheus
 * already knows, or generated (heavy-tailed costs, mixed capacities). A query response is parsed,
 * matched with targets and given its median fallback by the allocation server's {@link
 * CostQueryResponse}, so the simulator and the server's live cost feed read costs the same way.
 */
public final class CostInputs {
  /** The labels a cost sample is matched on when the user names none. */
  public static final List<String> DEFAULT_MATCH = CostQueryResponse.DEFAULT_MATCH;

  private CostInputs() {}

  /**
   * Costs read from a Prometheus instant-query response ({@code /api/v1/query}, result type
   * {@code vector}, e.g. {@code scrape_samples_scraped} or {@code scrape_series_added}), keyed by
   * the values of {@code match} in order (a label a sample lacks is the empty string, as in
   * PromQL). Samples with the same key are summed; values are rounded to whole numbers.
   *
   * @param file the response
   * @param match the labels to match on
   * @return cost by key
   * @throws InputException if the file cannot be read, is not such a response (or reports an
   *     error), or a sample's value is not a finite number &gt;= 0; the message names the file
   */
  public static Map<List<String>, Long> read(Path file, List<String> match)
      throws InputException {
    String name = "--costs " + file + ": ";
    JsonNode root;
    try (InputStream in = Files.newInputStream(file)) {
      root = new ObjectMapper().readTree(in);
    } catch (NoSuchFileException e) {
      throw new InputException(name + "no such file");
    } catch (JsonProcessingException e) {
      throw new InputException(name + "not valid JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new InputException(name + "cannot read: " + SimulationInputs.describe(e));
    }
    CostQueryResponse.Parsed parsed;
    try {
      parsed = CostQueryResponse.parse(root, match);
    } catch (IOException e) {
      throw new InputException(name + e.getMessage());
    }
    // The server skips a bad sample and keeps its target's last cost; a file has no last cost.
    if (!parsed.problems().isEmpty()) {
      throw new InputException(name + parsed.problems().get(0));
    }
    return parsed.costs();
  }

  /**
   * The key a target is matched on: for each label, the target's label of that name; for
   * {@code job}, its job; for {@code instance} when it has no such label, its address.
   */
  static List<String> key(Target t, List<String> match) {
    return CostQueryResponse.key(t, match);
  }

  /** A cluster's targets with costs attached, and how many matched. */
  public record Costed(Cluster cluster, int matched, long fallbackCost) {}

  /**
   * Attaches the read costs to the cluster's targets, each matched on {@link #key}. A target with
   * no sample gets the median of the matched costs (1 when none matched), so it is neither free
   * nor dominant.
   *
   * @param cluster the cluster
   * @param costs cost by key
   * @param match the labels of the key
   * @return the cluster with costs, and the match count
   */
  public static Costed attach(Cluster cluster, Map<List<String>, Long> costs,
      List<String> match) {
    return attach(cluster, costs, t -> key(t, match));
  }

  /**
   * Attaches the read costs to the cluster's targets, each matched on the key {@code keyOf}
   * gives it (for a targets file, the values of its relabelled labels: see {@link
   * SimulationInputs#readTargets(Path, List)}). A target whose key has an empty value (it lacks
   * one of the labels) matches nothing. A target with no sample gets the median of the matched
   * costs (1 when none matched), so it is neither free nor dominant.
   *
   * @param cluster the cluster
   * @param costs cost by key
   * @param keyOf a target's key
   * @return the cluster with costs, and the match count
   */
  public static Costed attach(Cluster cluster, Map<List<String>, Long> costs,
      Function<Target, List<String>> keyOf) {
    CostQueryResponse.Attached a = CostQueryResponse.attach(cluster.targets(), costs, keyOf);
    return new Costed(cluster.with(cluster.collectors(), a.targets()), a.matched(),
        a.fallbackCost());
  }

  /** The Pareto shape of generated costs: a few targets carry most of the cost. */
  public static final double PARETO_SHAPE = 1.2;
  /** The Pareto scale (least cost) of generated costs, in samples per scrape. */
  public static final long PARETO_SCALE = 50;
  /** The largest generated cost: 100 times the scale. */
  public static final long PARETO_MAX = 5000;

  /**
   * The cluster with heavy-tailed costs attached (Pareto, shape {@value #PARETO_SHAPE}, from
   * {@value #PARETO_SCALE} to {@value #PARETO_MAX} samples per scrape: the top 1% of targets
   * carry about a fifth of the cost), drawn from {@code seed} apart from everything else, so the
   * cluster's targets and collectors are those of the same seed without costs.
   *
   * @param cluster the cluster
   * @param seed the seed
   * @return the cluster with costs
   */
  public static Cluster pareto(Cluster cluster, long seed) {
    long[] costs = paretoCosts(cluster.targets().size(), seed);
    List<Target> out = new ArrayList<>(cluster.targets().size());
    for (int i = 0; i < costs.length; i++) {
      out.add(cluster.targets().get(i).withCost(costs[i]));
    }
    return cluster.with(cluster.collectors(), out);
  }

  /**
   * {@code n} heavy-tailed costs, the ones {@link #pareto} attaches to a cluster of {@code n}
   * targets with the same seed.
   *
   * @param n how many
   * @param seed the seed
   * @return the costs, each from {@value #PARETO_SCALE} to {@value #PARETO_MAX}
   */
  public static long[] paretoCosts(int n, long seed) {
    Random r = new Random(seed ^ 0x5DEECE66DL * 31);
    long[] out = new long[n];
    for (int i = 0; i < n; i++) {
      double u = 1.0 - r.nextDouble();
      out[i] = Math.min(PARETO_MAX,
          (long) Math.floor(PARETO_SCALE / Math.pow(u, 1 / PARETO_SHAPE)));
    }
    return out;
  }

  /**
   * The cluster with collector capacities taken from {@code pattern} in turn (collector
   * {@code i} gets {@code pattern[i % pattern.length]}, in the cluster's collector order).
   *
   * @param cluster the cluster
   * @param pattern the capacities, each finite and &gt; 0
   * @return the cluster with capacities
   */
  public static Cluster capacities(Cluster cluster, double[] pattern) {
    List<Collector> out = new ArrayList<>(cluster.collectors().size());
    for (int i = 0; i < cluster.collectors().size(); i++) {
      out.add(cluster.collectors().get(i).withCapacity(pattern[i % pattern.length]));
    }
    return cluster.with(out, cluster.targets());
  }
}
