package dev.apportion.allocation.server;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.apportion.allocation.Allocation;
import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Writes the JSON answers from one snapshot. Every answer is a pure function of the snapshot (and
 * the fixed scrape configs): jobs and collectors in name order, targets in the snapshot's
 * identity-hash order, labels in name order. That is what makes replicas' answers byte-identical.
 *
 * <p>Answers that do not depend on the request ({@code /jobs}, {@code /scrape_configs}) are cached
 * with the snapshot they were made from; a racing request that finds an older cache renders anew
 * and replaces it (both answers are correct for their snapshot), so no request waits for another.
 * A collector's answers are cached with their snapshot too (up to {@value #MAX_CACHED_BYTES} bytes
 * and {@value #MAX_CACHED_ANSWERS} answers per snapshot), so that the requests for one answer share
 * one encoding: clients that read it slowly hold a reference each, not a copy each.
 */
final class Rendering {
  static final String INDEX =
      """
      Apportion allocation server
      GET /targets?collector=NAME   Prometheus HTTP SD for one collector
      GET /jobs                     jobs (OpenTelemetry target allocator)
      GET /jobs/JOB/targets?collector_id=NAME
      GET /scrape_configs
      GET /livez  /readyz  /metrics
      GET /ui                       the operator's page (JSON: /api/v1/status)
      """;

  private static final JsonFactory JSON = new JsonFactory();
  private static final String ADDRESS = "__address__";
  private static final String JOB = "job";

  /** The most bytes of collectors' answers cached for one snapshot. */
  static final long MAX_CACHED_BYTES = 64L << 20;

  /** The most collectors' answers cached for one snapshot. */
  static final int MAX_CACHED_ANSWERS = 4096;

  private final Map<String, Map<String, Object>> scrapeConfigs;
  private volatile Cached cached = new Cached(null, null, null);
  private volatile Answers answers = new Answers(null);

  /** Collectors' answers rendered from one snapshot, by request. */
  private static final class Answers {
    final Allocation snapshot;
    final java.util.concurrent.ConcurrentHashMap<List<String>, byte[]> bytes =
        new java.util.concurrent.ConcurrentHashMap<>();
    final java.util.concurrent.atomic.AtomicLong size = new java.util.concurrent.atomic.AtomicLong();

    Answers(Allocation snapshot) {
      this.snapshot = snapshot;
    }
  }

  /** The answer {@code key} of {@code snapshot}: the cached encoding, or a new one (then cached). */
  private byte[] shared(Allocation snapshot, List<String> key, java.util.function.Supplier<byte[]> render) {
    Answers a = answers;
    if (a.snapshot != snapshot) {
      a = new Answers(snapshot);
      answers = a;
    }
    byte[] b = a.bytes.get(key);
    if (b != null) {
      return b;
    }
    b = render.get();
    if (a.bytes.size() < MAX_CACHED_ANSWERS && a.size.addAndGet(b.length) <= MAX_CACHED_BYTES) {
      byte[] raced = a.bytes.putIfAbsent(key, b);
      return raced == null ? b : raced;
    }
    return b;
  }

  Rendering(Map<String, Map<String, Object>> scrapeConfigs) {
    this.scrapeConfigs = scrapeConfigs;
  }

  private static final class Cached {
    final Allocation snapshot;
    final byte[] jobs;
    final byte[] scrapeConfigs;

    Cached(Allocation snapshot, byte[] jobs, byte[] scrapeConfigs) {
      this.snapshot = snapshot;
      this.jobs = jobs;
      this.scrapeConfigs = scrapeConfigs;
    }
  }

  private Cached cachedFor(Allocation snapshot) {
    Cached c = cached;
    if (c.snapshot != snapshot) {
      SortedSet<String> jobs = jobsOf(snapshot);
      c = new Cached(snapshot, renderJobs(jobs), renderScrapeConfigs(jobs));
      cached = c;
    }
    return c;
  }

  byte[] jobs(Allocation snapshot) {
    return cachedFor(snapshot).jobs;
  }

  byte[] scrapeConfigs(Allocation snapshot) {
    return cachedFor(snapshot).scrapeConfigs;
  }

  /** Every job with a target, in name order. Cost: one pass over the targets. */
  static SortedSet<String> jobsOf(Allocation snapshot) {
    SortedSet<String> jobs = new TreeSet<>();
    for (Target t : snapshot.targets()) {
      jobs.add(t.job());
    }
    return jobs;
  }

  private static byte[] renderJobs(SortedSet<String> jobs) {
    return write(
        g -> {
          g.writeStartObject();
          for (String job : jobs) {
            g.writeObjectFieldStart(job);
            g.writeStringField("_link", "/jobs/" + escape(job) + "/targets");
            g.writeEndObject();
          }
          g.writeEndObject();
        });
  }

  private byte[] renderScrapeConfigs(SortedSet<String> jobs) {
    SortedSet<String> all = new TreeSet<>(jobs);
    all.addAll(scrapeConfigs.keySet());
    return write(
        g -> {
          g.writeStartObject();
          for (String job : all) {
            g.writeObjectFieldStart(job);
            g.writeStringField("job_name", job);
            for (Map.Entry<String, Object> e : scrapeConfigs.getOrDefault(job, Map.of()).entrySet()) {
              if (!e.getKey().equals("job_name")) {
                g.writeFieldName(e.getKey());
                writeValue(g, e.getValue());
              }
            }
            g.writeEndObject();
          }
          g.writeEndObject();
        });
  }

  private static void writeValue(JsonGenerator g, Object value) throws IOException {
    if (value instanceof Map<?, ?> map) {
      g.writeStartObject();
      for (Map.Entry<?, ?> e : new TreeMap<>(map).entrySet()) {
        g.writeFieldName(String.valueOf(e.getKey()));
        writeValue(g, e.getValue());
      }
      g.writeEndObject();
    } else if (value instanceof List<?> list) {
      g.writeStartArray();
      for (Object o : list) {
        writeValue(g, o);
      }
      g.writeEndArray();
    } else if (value instanceof Boolean b) {
      g.writeBoolean(b);
    } else if (value instanceof Integer || value instanceof Long) {
      g.writeNumber(((Number) value).longValue());
    } else if (value instanceof Number n) {
      g.writeNumber(n.doubleValue());
    } else if (value == null) {
      g.writeNull();
    } else {
      g.writeString(value.toString());
    }
  }

  /**
   * Prometheus HTTP SD for one collector: for each of its jobs, in name order, the targets grouped
   * by their labels (without {@code __address__}, with {@code job} set to the target's job), the
   * groups in the order of their first target.
   */
  byte[] httpSd(Allocation snapshot, String collector) {
    return shared(snapshot, List.of("sd", collector), () -> renderHttpSd(snapshot, collector));
  }

  private static byte[] renderHttpSd(Allocation snapshot, String collector) {
    return write(
        g -> {
          g.writeStartArray();
          for (String job : snapshot.jobsFor(collector)) {
            Map<SortedMap<String, String>, List<String>> groups = new LinkedHashMap<>();
            for (Target t : snapshot.targetsFor(collector, job)) {
              groups.computeIfAbsent(groupLabels(t), k -> new ArrayList<>()).add(t.address());
            }
            for (Map.Entry<SortedMap<String, String>, List<String>> group : groups.entrySet()) {
              writeGroup(g, group.getValue(), group.getKey());
            }
          }
          g.writeEndArray();
        });
  }

  /** Upstream's {@code /jobs/{job}/targets?collector_id=}: one target group per target. */
  byte[] jobTargets(Allocation snapshot, String collector, String job) {
    return shared(snapshot, List.of("job", collector, job), () -> renderJobTargets(snapshot, collector, job));
  }

  private static byte[] renderJobTargets(Allocation snapshot, String collector, String job) {
    return write(
        g -> {
          g.writeStartArray();
          writeTargetsOf(g, snapshot, collector, job);
          g.writeEndArray();
        });
  }

  /** Upstream's {@code /jobs/{job}/targets} without a collector: every collector's, with links. */
  byte[] jobAllCollectors(Allocation snapshot, String job) {
    return shared(snapshot, List.of("all", job), () -> renderJobAllCollectors(snapshot, job));
  }

  private static byte[] renderJobAllCollectors(Allocation snapshot, String job) {
    return write(
        g -> {
          g.writeStartObject();
          for (Collector c : snapshot.collectors()) {
            g.writeObjectFieldStart(c.name());
            g.writeStringField(
                "_link", "/jobs/" + escape(job) + "/targets?collector_id=" + escape(c.name()));
            g.writeArrayFieldStart("targets");
            writeTargetsOf(g, snapshot, c.name(), job);
            g.writeEndArray();
            g.writeEndObject();
          }
          g.writeEndObject();
        });
  }

  private static void writeTargetsOf(
      JsonGenerator g, Allocation snapshot, String collector, String job) throws IOException {
    for (Target t : snapshot.targetsFor(collector, job)) {
      writeGroup(g, List.of(t.address()), groupLabels(t));
    }
  }

  private static void writeGroup(JsonGenerator g, List<String> addresses, Map<String, String> labels)
      throws IOException {
    g.writeStartObject();
    g.writeArrayFieldStart("targets");
    for (String a : addresses) {
      g.writeString(a);
    }
    g.writeEndArray();
    g.writeObjectFieldStart("labels");
    for (Map.Entry<String, String> l : labels.entrySet()) {
      g.writeStringField(l.getKey(), l.getValue());
    }
    g.writeEndObject();
    g.writeEndObject();
  }

  /** The labels a target's group carries: its own, less the address, with its job. */
  static SortedMap<String, String> groupLabels(Target t) {
    SortedMap<String, String> labels = new TreeMap<>(t.labels());
    labels.remove(ADDRESS);
    labels.put(JOB, t.job());
    return labels;
  }

  static byte[] error(String message) {
    return write(
        g -> {
          g.writeStartObject();
          g.writeStringField("error", message);
          g.writeEndObject();
        });
  }

  private static String escape(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private interface Body {
    void write(JsonGenerator g) throws IOException;
  }

  private static byte[] write(Body body) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    try (JsonGenerator g = JSON.createGenerator(out)) {
      body.write(g);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
    }
    out.write('\n');
    return out.toByteArray();
  }
}
