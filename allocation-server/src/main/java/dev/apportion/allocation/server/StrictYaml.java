package dev.apportion.allocation.server;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import org.yaml.snakeyaml.LoaderOptions;

/**
 * Reads the config file's YAML strictly, so that what the file says is what the service does:
 * a duplicate key is an error (not "the last wins", which once replaced a whole {@code collectors:}
 * block), an alias is an error (Jackson's YAML reader would give the anchor's <em>name</em> as the
 * value), and so is a second document (which would be ignored). Each error is one line with the
 * line number.
 */
final class StrictYaml {
  private static final ObjectMapper MAPPER;

  static {
    LoaderOptions options = new LoaderOptions();
    options.setAllowDuplicateKeys(false);
    options.setMaxAliasesForCollections(0);
    options.setCodePointLimit(1 << 20);
    MAPPER =
        new ObjectMapper(
            YAMLFactory.builder()
                .loaderOptions(options)
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .build());
  }

  private StrictYaml() {}

  /**
   * The one document in {@code yaml} as a tree.
   *
   * @throws ConfigException naming the line of a duplicate key, an alias, a second document, or a
   *     syntax error
   */
  static JsonNode read(byte[] yaml) throws ConfigException {
    try (JsonParser p = MAPPER.getFactory().createParser(yaml)) {
      int depth = 0;
      int documents = 0;
      JsonToken t;
      while ((t = p.nextToken()) != null) {
        if (p instanceof YAMLParser y && y.isCurrentAlias()) {
          throw new ConfigException(
              "line " + p.currentLocation().getLineNr() + ": YAML aliases (*" + LogSafe.text(p.getText())
                  + ") are not supported; write the value out");
        }
        if (depth == 0) {
          if (++documents > 1) {
            throw new ConfigException(
                "line " + p.currentLocation().getLineNr() + ": a second YAML document; the config is one document");
          }
        }
        if (t.isNumeric()) {
          try {
            p.getNumberValue();
          } catch (IOException e) {
            // Jackson's YAML reader cannot read .nan or .inf; name the key, not the parser.
            throw new ConfigException(path(p) + ": must be a finite number, not " + LogSafe.text(p.getText()));
          }
        }
        if (t.isStructStart()) {
          depth++;
        } else if (t.isStructEnd()) {
          depth--;
        }
      }
    } catch (JsonProcessingException e) {
      throw new ConfigException("not valid YAML: " + oneLine(e.getOriginalMessage()) + location(e));
    } catch (IOException e) {
      throw new ConfigException("unreadable: " + oneLine(e.getMessage()));
    }
    try {
      return MAPPER.readTree(yaml);
    } catch (JsonProcessingException e) {
      throw new ConfigException("not valid YAML: " + oneLine(e.getOriginalMessage()) + location(e));
    } catch (IOException e) {
      throw new ConfigException("unreadable: " + oneLine(e.getMessage()));
    }
  }

  /** The key path of the parser's current value, as the config's errors write it: a.b[2].c. */
  private static String path(JsonParser p) {
    StringBuilder b = new StringBuilder();
    for (JsonStreamContext c = p.getParsingContext(); c != null && !c.inRoot(); c = c.getParent()) {
      String part;
      if (c.inObject()) {
        part = (c.getParent() != null && c.getParent().inRoot() ? "" : ".") + c.getCurrentName();
      } else {
        part = "[" + Math.max(0, c.getCurrentIndex()) + "]";
      }
      b.insert(0, part);
    }
    return b.length() == 0 ? "the file" : LogSafe.text(b.toString());
  }

  private static String location(JsonProcessingException e) {
    return e.getLocation() == null ? "" : " (line " + e.getLocation().getLineNr() + ")";
  }

  private static String oneLine(String s) {
    return s == null ? "unreadable" : LogSafe.text(s.replaceAll("\\s+", " ").trim());
  }
}
