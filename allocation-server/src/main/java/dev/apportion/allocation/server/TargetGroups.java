package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.apportion.allocation.Target;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads Prometheus target groups ({@code [{"targets": [...], "labels": {...}}]}) into targets, the
 * way Prometheus's file and HTTP SD do: every target gets the group's labels, {@code __address__}
 * and the source's meta label. Malformed input is an {@link IOException} naming where; a label
 * whose name Prometheus would reject is dropped ({@link LabelNames}).
 */
final class TargetGroups {
  static final ObjectMapper JSON = new ObjectMapper();
  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private TargetGroups() {}

  static List<Target> parse(
      JsonNode root, String job, String metaName, String metaValue, String where)
      throws IOException {
    return parse(root, job, metaName, metaValue, where, new LabelNames());
  }

  /** As above; labels whose names Prometheus rejects are dropped and counted in {@code names}. */
  static List<Target> parse(
      JsonNode root, String job, String metaName, String metaValue, String where, LabelNames names)
      throws IOException {
    List<Target> out = new ArrayList<>();
    if (root == null || root.isNull() || root.isMissingNode()) {
      return out; // an empty file: no groups
    }
    if (!root.isArray()) {
      throw new IOException(where + ": expected a list of target groups");
    }
    for (int i = 0; i < root.size(); i++) {
      JsonNode group = root.get(i);
      String at = where + ": group " + i;
      if (!group.isObject()) {
        throw new IOException(at + " is not an object");
      }
      Map<String, String> labels = new HashMap<>();
      JsonNode l = group.get("labels");
      if (l != null && !l.isNull()) {
        if (!l.isObject()) {
          throw new IOException(at + ": labels is not an object");
        }
        for (Map.Entry<String, JsonNode> e : l.properties()) {
          if (!e.getValue().isValueNode() || e.getValue().isNull()) {
            throw new IOException(at + ": label " + e.getKey() + " is not a string");
          }
          if (!names.keep(e.getKey(), at)) {
            continue;
          }
          labels.put(e.getKey(), e.getValue().asText());
        }
      }
      if (metaName != null) {
        labels.put(metaName, metaValue);
      }
      JsonNode targets = group.get("targets");
      if (targets == null || !targets.isArray()) {
        throw new IOException(at + ": targets is missing or not a list");
      }
      for (JsonNode t : targets) {
        String address = t.isTextual() ? t.asText().trim() : "";
        if (address.isEmpty()) {
          throw new IOException(at + ": a target is not a non-empty string");
        }
        Map<String, String> own = new HashMap<>(labels);
        own.put("__address__", address);
        out.add(Target.of(job, address, own));
      }
    }
    return out;
  }
}
