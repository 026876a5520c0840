package dev.apportion.bench.sim;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
public final class SimulationInputs {
  /** Node labels (node service discovery) that carry a node's zone, most current first. */
  private static final String[] ZONE_LABELS = {
    "__meta_kubernetes_node_label_topology_kubernetes_io_zone",
    "__meta_kubernetes_node_label_failure_domain_beta_kubernetes_io_zone",
  };

  private SimulationInputs() {}

  /**
   * Targets read from a file, and the zones of the nodes they reveal.
   *
   * @param targets the targets, in file order
   * @param zones node to zone, where a target's labels name both
   * @param keys for each target, the values of the labels asked for (see {@link
   *     #readTargets(Path, List)}), in their order; empty when none were asked for
   */
  public record Targets(List<Target> targets, Map<String, String> zones,
      Map<Target, List<String>> keys) {
    /**
     * Targets without keys.
     *
     * @param targets the targets, in file order
     * @param zones node to zone
     */
    public Targets(List<Target> targets, Map<String, String> zones) {
      this(targets, zones, Map.of());
    }
  }

  /**
   * Reads the active targets of a Prometheus {@code /api/v1/targets} JSON response. Each becomes a
   * {@link Target} with the scrape pool as its job, {@code discoveredLabels.__address__} as its
   * address, and every discovered label (the {@code __meta_kubernetes_*} ones included) as its
   * labels: what a target allocator receives from service discovery. Dropped targets are ignored.
   *
   * <p>The file is streamed (Jackson's {@link JsonParser}), never held whole: memory is dominated
   * by the targets kept. Repeated label values (jobs, namespaces, nodes) share one string. The
   * document must be one JSON object and nothing after it; a key may not repeat in an object.
   * Duplicate targets (same job and identity labels) are all returned: {@link Cluster} collapses
   * them and counts them.
   *
   * @param file the file
   * @return the targets
   * @throws InputException if the file cannot be read, is not JSON, lacks a field, or has content
   *     after its JSON document
   */
  public static Targets readTargets(Path file) throws InputException {
    return readTargets(file, List.of());
  }

  /**
   * Like {@link #readTargets(Path)}, and also keeps, for each target, the values of
   * {@code keyLabels} among the labels Prometheus gives it after relabelling (the response's
   * {@code labels} object: what its series, e.g. {@code scrape_samples_scraped}, carry). A label
   * that object lacks is the empty string, as in PromQL; a target with no such object gets its
   * discovered label of that name, and for {@code job} its job, for {@code instance} its address
   * (Prometheus's defaults).
   *
   * @param file the file
   * @param keyLabels the labels to keep, e.g. {@code job} and {@code instance}
   * @return the targets, with {@link Targets#keys()} for the last of each set of duplicates
   * @throws InputException as {@link #readTargets(Path)}
   */
  public static Targets readTargets(Path file, List<String> keyLabels) throws InputException {
    String name = file.toString();
    try (InputStream in = Files.newInputStream(file);
        JsonParser parser = JSON.createParser(in)) {
      return new TargetReader(name, parser, keyLabels).read();
    } catch (JsonProcessingException e) {
      JsonLocation at = e.getLocation();
      throw new InputException(name + where(at) + ": not valid JSON: "
          + firstLine(e.getOriginalMessage()));
    } catch (IOException e) {
      throw new InputException(name + ": cannot read: " + describe(e));
    }
  }

  private static final JsonFactory JSON = JsonFactory.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .build();

  private static String where(JsonLocation at) {
    return at == null || at.getLineNr() < 0 ? "" : ":" + at.getLineNr() + ":" + at.getColumnNr();
  }

  /** One pass over a targets document; not reusable. */
  private static final class TargetReader {
    private final String name;
    private final JsonParser p;
    private final List<Target> targets = new ArrayList<>();
    private final Map<String, String> zones = new TreeMap<>();
    /** The label map each target is built from; {@link Target#of} copies it. */
    private final TreeMap<String, String> labels = new TreeMap<>();
    /** A direct-mapped cache of label values: repeated values share one string. */
    private final String[] values = new String[1 << 13];
    private String status;
    private String error;
    private boolean activeSeen;
    /** The labels whose final values are kept, and those values for the current target. */
    private final List<String> keyLabels;
    private final String[] keyValues;
    private final Map<Target, List<String>> keys = new LinkedHashMap<>();

    TargetReader(String name, JsonParser p, List<String> keyLabels) {
      this.name = name;
      this.p = p;
      this.keyLabels = List.copyOf(keyLabels);
      this.keyValues = new String[keyLabels.size()];
    }

    Targets read() throws IOException, InputException {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new InputException(name + ": expected a JSON object (a /api/v1/targets response)");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        switch (field) {
          case "status" -> status = scalarText(value, "");
          case "error" -> error = value == JsonToken.VALUE_NULL ? null : scalarText(value, "");
          case "data" -> {
            if (value == JsonToken.START_OBJECT) {
              readData();
            } else {
              p.skipChildren();
            }
          }
          default -> p.skipChildren();
        }
      }
      JsonLocation garbage;
      try {
        garbage = p.nextToken() == null ? null : p.currentTokenLocation();
      } catch (JsonParseException e) {
        garbage = e.getLocation();
      }
      if (garbage != null) {
        throw new InputException(name + where(garbage)
            + ": unexpected content after the end of the JSON document");
      }
      checkStatus();
      if (!activeSeen) {
        throw new InputException(name + ": field data.activeTargets is missing or not an array");
      }
      return new Targets(targets, zones, keys);
    }

    private void checkStatus() throws InputException {
      if (status != null && !"success".equals(status)) {
        throw new InputException(name + ": field status is '" + status + "', not 'success'"
            + (error != null ? ": " + error : ""));
      }
    }

    /** The text of a scalar value, or {@code otherwise} for an object or array (skipped). */
    private String scalarText(JsonToken value, String otherwise) throws IOException {
      if (value.isScalarValue()) {
        return p.getText();
      }
      p.skipChildren();
      return otherwise;
    }

    private void readData() throws IOException, InputException {
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        if (field.equals("activeTargets") && value == JsonToken.START_ARRAY) {
          activeSeen = true;
          if (status != null && !"success".equals(status)) {
            p.skipChildren();
          } else {
            readActive();
          }
        } else {
          p.skipChildren();
        }
      }
    }

    private void readActive() throws IOException, InputException {
      int i = 0;
      for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken(), i++) {
        String field = "data.activeTargets[" + i + "]";
        if (t != JsonToken.START_OBJECT) {
          throw new InputException(name + ": field " + field + " is not an object");
        }
        readTarget(field);
      }
    }

    private void readTarget(String field) throws IOException, InputException {
      boolean discovered = false;
      String scrapePool = null;
      String labelsJob = null;
      boolean relabelled = false;
      Arrays.fill(keyValues, null);
      labels.clear();
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String key = p.currentName();
        JsonToken value = p.nextToken();
        switch (key) {
          case "discoveredLabels" -> {
            if (value != JsonToken.START_OBJECT) {
              throw new InputException(name + ": field " + field
                  + ".discoveredLabels is missing or not an object");
            }
            discovered = true;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
              String label = p.currentName();
              if (p.nextToken() != JsonToken.VALUE_STRING) {
                throw new InputException(name + ": field " + field + ".discoveredLabels." + label
                    + " is not a string");
              }
              labels.put(label, shared(p.getText()));
            }
          }
          case "scrapePool" -> scrapePool = text(value);
          case "labels" -> {
            if (value == JsonToken.START_OBJECT) {
              relabelled = true;
              while (p.nextToken() == JsonToken.FIELD_NAME) {
                String label = p.currentName();
                JsonToken v = p.nextToken();
                int k = keyLabels.indexOf(label);
                if (label.equals("job")) {
                  labelsJob = text(v);
                  if (k >= 0) {
                    keyValues[k] = labelsJob;
                  }
                } else if (k >= 0) {
                  keyValues[k] = text(v);
                } else {
                  p.skipChildren();
                }
              }
            } else {
              p.skipChildren();
            }
          }
          default -> p.skipChildren();
        }
      }
      if (!discovered) {
        throw new InputException(name + ": field " + field
            + ".discoveredLabels is missing or not an object");
      }
      String address = labels.get("__address__");
      if (address == null || address.isBlank()) {
        throw new InputException(name + ": field " + field
            + ".discoveredLabels.__address__ is missing or empty");
      }
      String job = firstText(scrapePool, labelsJob, labels.get("job"));
      if (job == null) {
        throw new InputException(name + ": field " + field
            + " has no job (scrapePool, labels.job or discoveredLabels.job)");
      }
      Target target = Target.of(shared(job), address, labels);
      targets.add(target);
      if (!keyLabels.isEmpty()) {
        List<String> key;
        if (relabelled) {
          key = new ArrayList<>(keyValues.length);
          for (String v : keyValues) {
            key.add(v == null ? "" : shared(v));
          }
        } else {
          key = CostInputs.key(target, keyLabels);
        }
        keys.put(target, List.copyOf(key));
      }
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

    /** A string value's text; null for any other value (skipped). */
    private String text(JsonToken value) throws IOException {
      if (value == JsonToken.VALUE_STRING) {
        return p.getText();
      }
      p.skipChildren();
      return null;
    }

    /** {@code s}, or an equal string seen recently: repeated values are kept once. */
    private String shared(String s) {
      if (s.length() > 64) {
        return s;
      }
      int slot = (s.hashCode() * 0x9E3779B9) >>> (32 - 13);
      String cached = values[slot];
      if (s.equals(cached)) {
        return cached;
      }
      values[slot] = s;
      return s;
    }
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
    List<String> lines = readUtf8Lines(file, name);
    List<Collector> collectors = new ArrayList<>();
    Map<String, Integer> seen = new HashMap<>();
    Map<String, String> zones = new TreeMap<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      int lineNo = i + 1;
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      // The line is stripped: no empty field at either end, whatever the limit.
      String[] f = line.split("\\s+", -1);
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

  /**
   * The lines of a UTF-8 text file (ended by {@code \n}, {@code \r\n} or {@code \r}; a leading
   * byte order mark is skipped). Bytes that are not UTF-8 are an error naming the line.
   */
  private static List<String> readUtf8Lines(Path file, String name) throws InputException {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (IOException e) {
      throw new InputException(name + ": cannot read: " + describe(e));
    }
    CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    List<String> lines = new ArrayList<>();
    int start = bytes.length >= 3 && (bytes[0] & 0xFF) == 0xEF && (bytes[1] & 0xFF) == 0xBB
        && (bytes[2] & 0xFF) == 0xBF ? 3 : 0;
    while (start < bytes.length) {
      int end = start;
      while (end < bytes.length && bytes[end] != '\n' && bytes[end] != '\r') {
        end++;
      }
      ByteBuffer line = ByteBuffer.wrap(bytes, start, end - start);
      try {
        lines.add(decoder.decode(line).toString());
      } catch (CharacterCodingException e) {
        throw new InputException(name + ":" + (lines.size() + 1) + ": not UTF-8 text (byte "
            + (line.position() - start + 1) + " of the line is 0x"
            + String.format("%02X", bytes[line.position()] & 0xFF) + ")");
      }
      start = end + (end + 1 < bytes.length && bytes[end] == '\r' && bytes[end + 1] == '\n'
          ? 2 : 1);
    }
    return lines;
  }

  private static String firstText(String... texts) {
    for (String t : texts) {
      if (t != null && !t.isBlank()) {
        return t;
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

  /**
   * What went wrong, in words, on one line: the operating system's reason, not the exception's
   * class (a user should not be shown something that reads like a stack trace).
   */
  static String describe(Exception e) {
    if (e instanceof NoSuchFileException) {
      return "no such file or directory";
    }
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof NotDirectoryException) {
      return "not a directory";
    }
    if (e instanceof FileAlreadyExistsException) {
      return "a file is in the way";
    }
    if (e instanceof FileSystemException f && f.getReason() != null) {
      return firstLine(f.getReason());
    }
    String m = e.getMessage();
    return m == null || m.isBlank() ? "an I/O error" : firstLine(m);
  }
}
