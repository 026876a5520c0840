package dev.apportion.allocation.server;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.TargetInterner;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.LoaderOptions;

/**
 * Streamed parsing of what target sources send, straight into {@link Target}s: Prometheus target
 * groups ({@code [{"targets": [...], "labels": {...}}]}, JSON or YAML) and a Prometheus server's
 * {@code /api/v1/targets} answer. No tree of the whole answer is built: a read holds the targets
 * made so far and one group's labels and addresses, each bounded by {@link SourceLimits}, so the
 * memory a read takes is bounded by what is kept, not by what is sent.
 *
 * <p>Every target is made by the source's {@link TargetInterner}: a target whose labels are those
 * of the source's previous read comes back as the same instance, which the allocator recognises
 * at once, and only new or changed ones are built (the label map is reused within a group; the
 * interner copies what it keeps). Where a target sits in the answer is put into words only for an
 * error or a dropped label, and a label name instance the parser hands over again is not checked
 * again ({@link LabelNames#isValid}).
 */
final class TargetReader {
  /**
   * Labels that carry the discovering Prometheus's own scrape settings, not anything discovered:
   * Prometheus adds them to {@code discoveredLabels} from its scrape config, and a collector lets
   * target labels override its own scrape config, so served on they would impose the discovering
   * server's interval, timeout, path and scheme on every collector. {@code __param_*} (the scrape
   * config's {@code params}) is dropped by prefix.
   */
  static final Set<String> SCRAPE_SETTING_LABELS =
      Set.of("__scrape_interval__", "__scrape_timeout__", "__metrics_path__", "__scheme__");

  static final String PARAM_PREFIX = "__param_";

  private TargetReader() {}

  /** A JSON factory whose parsers refuse strings and nesting beyond {@code limits}. */
  static JsonFactory json(SourceLimits limits) {
    return JsonFactory.builder().streamReadConstraints(constraints(limits)).build();
  }

  /** A YAML factory with the same constraints; SnakeYAML's own size cap raised to the byte cap. */
  static YAMLFactory yaml(SourceLimits limits) {
    LoaderOptions options = new LoaderOptions();
    options.setCodePointLimit((int) Math.min(Integer.MAX_VALUE, limits.maxBytes()));
    options.setMaxAliasesForCollections(50);
    return YAMLFactory.builder()
        .loaderOptions(options)
        .streamReadConstraints(constraints(limits))
        .build();
  }

  private static StreamReadConstraints constraints(SourceLimits limits) {
    return StreamReadConstraints.builder()
        .maxStringLength(limits.maxStringLength())
        .maxNameLength(limits.maxStringLength())
        .maxNestingDepth(32)
        .maxNumberLength(64)
        .build();
  }

  /**
   * Reads one answer of target groups, adding its targets to {@code out}; each target gets the
   * group's labels, {@code __address__} and {@code metaName=metaValue} (when {@code metaName} is
   * not null). An answer with nothing in it (no bytes, or only a YAML null) is an error: an empty
   * answer keeps the last good targets, {@code []} says there are none.
   *
   * @param in the bytes, already limited in size and time
   * @param factory {@link #json} or {@link #yaml}
   * @throws IOException if malformed or over a limit, naming {@code where}
   */
  static void groups(
      InputStream in,
      JsonFactory factory,
      String job,
      String metaName,
      String metaValue,
      String where,
      LabelNames names,
      SourceLimits limits,
      TargetInterner interner,
      List<Target> out)
      throws IOException {
    try (JsonParser p = factory.createParser(in)) {
      JsonToken t = p.nextToken();
      if (t == null || t == JsonToken.VALUE_NULL) {
        throw new IOException(where + ": empty (no target groups; write [] for none)");
      }
      if (t != JsonToken.START_ARRAY) {
        throw new IOException(where + ": expected a list of target groups");
      }
      Map<String, String> labels = new LabelBuffer();
      List<String> addresses = new ArrayList<>();
      for (int i = 0; (t = p.nextToken()) != JsonToken.END_ARRAY; i++) {
        if (t != JsonToken.START_OBJECT) {
          throw new IOException(group(where, i) + " is not an object");
        }
        labels.clear();
        addresses.clear();
        boolean sawTargets = false;
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
          String field = p.currentName();
          t = p.nextToken();
          if ("labels".equals(field)) {
            labels(p, t, where, i, names, limits, labels);
          } else if ("targets".equals(field)) {
            sawTargets = true;
            if (t != JsonToken.START_ARRAY) {
              throw new IOException(group(where, i) + ": targets is missing or not a list");
            }
            while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
              String address = t == JsonToken.VALUE_STRING ? p.getText().trim() : "";
              if (address.isEmpty()) {
                throw new IOException(group(where, i) + ": a target is not a non-empty string");
              }
              if (out.size() + addresses.size() >= limits.maxTargets()) {
                throw new IOException(where + ": more than " + limits.maxTargets() + " targets");
              }
              addresses.add(address);
            }
          } else {
            p.skipChildren();
          }
        }
        if (!sawTargets) {
          throw new IOException(group(where, i) + ": targets is missing or not a list");
        }
        if (metaName != null) {
          labels.put(metaName, metaValue);
        }
        if (labels.size() + 1 > limits.maxLabelsPerTarget()) {
          throw new IOException(
              group(where, i) + ": more than " + limits.maxLabelsPerTarget() + " labels");
        }
        for (String address : addresses) {
          labels.put("__address__", address);
          out.add(interner.intern(job, address, labels));
        }
      }
      if (p.nextToken() != null) {
        throw new IOException(where + ": more after the list of target groups");
      }
    }
  }

  /** Where group {@code i} is, for a message: {@code answer: group 3}. */
  private static String group(String where, int i) {
    return where + ": group " + i;
  }

  private static void labels(
      JsonParser p,
      JsonToken t,
      String where,
      int group,
      LabelNames names,
      SourceLimits limits,
      Map<String, String> labels)
      throws IOException {
    if (t == JsonToken.VALUE_NULL) {
      return;
    }
    if (t != JsonToken.START_OBJECT) {
      throw new IOException(group(where, group) + ": labels is not an object");
    }
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken v = p.nextToken();
      if (!v.isScalarValue() || v == JsonToken.VALUE_NULL) {
        throw new IOException(
            group(where, group) + ": label " + LogSafe.text(name) + " is not a string");
      }
      if (!names.isValid(name)) {
        names.drop(name, group(where, group));
        continue;
      }
      labels.put(name, p.getText());
      if (labels.size() > limits.maxLabelsPerTarget()) {
        throw new IOException(
            group(where, group) + ": more than " + limits.maxLabelsPerTarget() + " labels");
      }
    }
  }

  /**
   * Reads a Prometheus {@code /api/v1/targets} answer: each active target's {@code
   * discoveredLabels} under its scrape pool as the job, less the discovering server's own scrape
   * settings ({@link #SCRAPE_SETTING_LABELS}, {@code __param_*}).
   *
   * @throws IOException if malformed, not {@code success}, or over a limit, naming {@code where}
   */
  static List<Target> prometheus(
      InputStream in,
      JsonFactory factory,
      String where,
      LabelNames names,
      SourceLimits limits,
      TargetInterner interner)
      throws IOException {
    List<Target> out = new ArrayList<>();
    String status = null;
    boolean sawActive = false;
    try (JsonParser p = factory.createParser(in)) {
      JsonToken t = p.nextToken();
      if (t == null) {
        throw new IOException(where + ": empty answer");
      }
      if (t != JsonToken.START_OBJECT) {
        throw new IOException(where + ": status is not success");
      }
      while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        t = p.nextToken();
        if ("status".equals(field)) {
          status = t.isScalarValue() ? p.getText() : null;
          p.skipChildren();
        } else if ("data".equals(field) && t == JsonToken.START_OBJECT) {
          while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            String d = p.currentName();
            t = p.nextToken();
            if ("activeTargets".equals(d) && t == JsonToken.START_ARRAY) {
              sawActive = true;
              activeTargets(p, where, names, limits, interner, out);
            } else {
              p.skipChildren();
            }
          }
        } else {
          p.skipChildren();
        }
      }
    }
    if (!"success".equals(status)) {
      throw new IOException(where + ": status is not success");
    }
    if (!sawActive) {
      throw new IOException(where + ": data.activeTargets is missing or not a list");
    }
    return out;
  }

  private static void activeTargets(
      JsonParser p,
      String where,
      LabelNames names,
      SourceLimits limits,
      TargetInterner interner,
      List<Target> out)
      throws IOException {
    Map<String, String> labels = new LabelBuffer();
    JsonToken t;
    for (int i = 0; (t = p.nextToken()) != JsonToken.END_ARRAY; i++) {
      if (t != JsonToken.START_OBJECT) {
        throw new IOException(active(where, i) + " is not an object");
      }
      labels.clear();
      String pool = null;
      boolean sawDiscovered = false;
      while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        t = p.nextToken();
        if ("discoveredLabels".equals(field) && t == JsonToken.START_OBJECT) {
          sawDiscovered = true;
          while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (v != JsonToken.VALUE_STRING) {
              p.skipChildren();
              continue;
            }
            if (SCRAPE_SETTING_LABELS.contains(name) || name.startsWith(PARAM_PREFIX)) {
              continue;
            }
            if (!names.isValid(name)) {
              names.drop(name, active(where, i));
              continue;
            }
            labels.put(name, p.getText());
            if (labels.size() > limits.maxLabelsPerTarget()) {
              throw new IOException(
                  active(where, i) + ": more than " + limits.maxLabelsPerTarget() + " labels");
            }
          }
        } else if ("scrapePool".equals(field) && t == JsonToken.VALUE_STRING) {
          pool = p.getText();
        } else {
          p.skipChildren();
        }
      }
      if (!sawDiscovered) {
        throw new IOException(active(where, i) + ".discoveredLabels is missing");
      }
      String address = labels.getOrDefault("__address__", "").trim();
      String job = pool == null || pool.isBlank() ? labels.getOrDefault("job", "") : pool;
      if (address.isEmpty() || job.isBlank()) {
        throw new IOException(active(where, i) + " has no __address__ or no scrape pool");
      }
      if (out.size() >= limits.maxTargets()) {
        throw new IOException(where + ": more than " + limits.maxTargets() + " targets");
      }
      if (!address.equals(labels.get("__address__"))) {
        labels.put("__address__", address); // the target's address is the trimmed one
      }
      out.add(interner.intern(job, address, labels));
    }
  }

  /** Where active target {@code i} is, for a message: {@code answer: data.activeTargets[3]}. */
  private static String active(String where, int i) {
    return where + ": data.activeTargets[" + i + "]";
  }
}
