package dev.apportion.bench.sim;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads real input for the simulator: a Prometheus {@code /api/v1/targets} response and a list of
 * collectors. Every error is an {@link InputException} whose message names the file and the line
 * or field.
 */
public final class Inputs {
  /** Node labels (node service discovery) that carry a node's zone, most current first. */
  private static final String[] ZONE_LABELS = {
    "__meta_kubernetes_node_label_topology_kubernetes_io_zone",
    "__meta_kubernetes_node_label_failure_domain_beta_kubernetes_io_zone",
  };

  private Inputs() {}

  /**
   * Targets read from a file, and the zones of the nodes they reveal.
   *
   * @param targets the targets, in file order
   * @param zones node to zone, where a target's labels name both
   */
  public record Targets(List<Target> targets, Map<String, String> zones) {}

  /**
   * Reads the active targets of a Prometheus {@code /api/v1/targets} JSON response. Each becomes a
   * {@link Target} with the scrape pool as its job, {@code discoveredLabels.__address__} as its
   * address, and every discovered label (the {@code __meta_kubernetes_*} ones included) as its
   * labels: what a target allocator receives from service discovery. Dropped targets are ignored.
   *
   * @param file the file
   * @return the targets
   * @throws InputException if the file cannot be read, is not JSON, or lacks a field
   */
  public static Targets readTargets(Path file) throws InputException {
    String name = file.toString();
    JsonNode root;
    try {
      root = new ObjectMapper().readTree(file.toFile());
    } catch (JsonProcessingException e) {
      JsonLocation at = e.getLocation();
      String where = at == null ? "" : ":" + at.getLineNr() + ":" + at.getColumnNr();
      throw new InputException(name + where + ": not valid JSON: " + firstLine(e.getOriginalMessage()));
    } catch (IOException e) {
      throw new InputException(name + ": cannot read: " + describe(e));
    }
    if (root == null || !root.isObject()) {
      throw new InputException(name + ": expected a JSON object (a /api/v1/targets response)");
    }
    JsonNode status = root.get("status");
    if (status != null && !"success".equals(status.asText())) {
      throw new InputException(name + ": field status is '" + status.asText()
          + "', not 'success'" + (root.hasNonNull("error") ? ": " + root.get("error").asText() : ""));
    }
    JsonNode active = root.path("data").get("activeTargets");
    if (active == null || !active.isArray()) {
      throw new InputException(name + ": field data.activeTargets is missing or not an array");
    }
    List<Target> targets = new ArrayList<>(active.size());
    Map<String, String> zones = new TreeMap<>();
    for (int i = 0; i < active.size(); i++) {
      String field = "data.activeTargets[" + i + "]";
      JsonNode item = active.get(i);
      if (!item.isObject()) {
        throw new InputException(name + ": field " + field + " is not an object");
      }
      JsonNode discovered = item.get("discoveredLabels");
      if (discovered == null || !discovered.isObject()) {
        throw new InputException(name + ": field " + field
            + ".discoveredLabels is missing or not an object");
      }
      Map<String, String> labels = new LinkedHashMap<>();
      for (Map.Entry<String, JsonNode> e : discovered.properties()) {
        if (!e.getValue().isTextual()) {
          throw new InputException(name + ": field " + field + ".discoveredLabels." + e.getKey()
              + " is not a string");
        }
        labels.put(e.getKey(), e.getValue().asText());
      }
      String address = labels.get("__address__");
      if (address == null || address.isBlank()) {
        throw new InputException(name + ": field " + field
            + ".discoveredLabels.__address__ is missing or empty");
      }
      String job = firstText(item.get("scrapePool"), item.path("labels").get("job"),
          discovered.get("job"));
      if (job == null) {
        throw new InputException(name + ": field " + field
            + " has no job (scrapePool, labels.job or discoveredLabels.job)");
      }
      Target target = Target.of(job, address, labels);
      targets.add(target);
      target.node().ifPresent(node -> {
        for (String z : ZONE_LABELS) {
          String zone = labels.get(z);
          if (zone != null && !zone.isEmpty()) {
            zones.putIfAbsent(node, zone);
            break;
          }
        }
      });
    }
    return new Targets(targets, zones);
  }

  /**
   * Collectors read from a file, and the zones of their nodes.
   *
   * @param collectors the collectors, in file order
   * @param zones node to zone, where a line gives one
   */
  public record Collectors(List<Collector> collectors, Map<String, String> zones) {}

  /**
   * Reads a collector list: one collector a line, {@code name node [zone]}, separated by blanks.
   * Blank lines and lines starting with {@code #} are skipped. A node of {@code -} means none.
   *
   * @param file the file
   * @return the collectors
   * @throws InputException if the file cannot be read, a line is malformed, a name repeats, or a
   *     node is given two zones
   */
  public static Collectors readCollectors(Path file) throws InputException {
    String name = file.toString();
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new InputException(name + ": cannot read: " + describe(e));
    }
    List<Collector> collectors = new ArrayList<>();
    Map<String, Integer> seen = new HashMap<>();
    Map<String, String> zones = new TreeMap<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      int lineNo = i + 1;
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\\s+");
      if (f.length < 2 || f.length > 3) {
        throw new InputException(name + ":" + lineNo + ": expected 'name node [zone]', found "
            + f.length + " field" + (f.length == 1 ? "" : "s") + ": '" + line + "'");
      }
      Integer previous = seen.putIfAbsent(f[0], lineNo);
      if (previous != null) {
        throw new InputException(name + ":" + lineNo + ": collector '" + f[0]
            + "' is already on line " + previous);
      }
      String node = f[1].equals("-") ? null : f[1];
      collectors.add(Collector.of(f[0], node));
      if (f.length == 3 && node != null) {
        String before = zones.putIfAbsent(node, f[2]);
        if (before != null && !before.equals(f[2])) {
          throw new InputException(name + ":" + lineNo + ": node '" + node + "' is in zone '"
              + before + "' on an earlier line, '" + f[2] + "' here");
        }
      }
    }
    if (collectors.isEmpty()) {
      throw new InputException(name + ": no collectors (expected lines of 'name node [zone]')");
    }
    return new Collectors(collectors, zones);
  }

  private static String firstText(JsonNode... nodes) {
    for (JsonNode n : nodes) {
      if (n != null && n.isTextual() && !n.asText().isBlank()) {
        return n.asText();
      }
    }
    return null;
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  private static String describe(IOException e) {
    String m = e.getMessage();
    return e.getClass().getSimpleName() + (m == null ? "" : " (" + firstLine(m) + ")");
  }
}
