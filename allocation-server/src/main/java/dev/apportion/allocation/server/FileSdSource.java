package dev.apportion.allocation.server;

import com.fasterxml.jackson.core.JsonFactory;
import dev.apportion.allocation.Target;
import dev.apportion.allocation.TargetInterner;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Prometheus file SD: re-reads the files only when one changed (size or modification time) or the
 * set of files matching the patterns changed; otherwise returns the same list. Prometheus watches
 * with inotify and re-reads every five minutes as well; polling the files' attributes once per
 * refresh costs a few stat calls and also works where inotify does not (a ConfigMap's symlink
 * swap, network file systems).
 *
 * <p>A matched path that is not a regular file (a directory, a FIFO, a device) is an error, as is
 * an empty file (write {@code []} for none): both keep the last good targets. The files are parsed
 * as they are read, within {@link SourceLimits}; the byte cap covers all files of the source.
 */
final class FileSdSource implements TargetSource {
  private final String job;
  private final List<Path> patterns;
  private Map<Path, String> lastStamps;
  private List<Target> last = List.of();
  private final InternedReads reads = new InternedReads();
  private final SourceLimits limits;
  private final JsonFactory json;
  private final JsonFactory yaml;

  FileSdSource(String job, List<Path> patterns, SourceLimits limits) {
    if (patterns.isEmpty()) {
      throw new IllegalArgumentException("file SD needs at least one file");
    }
    this.job = job;
    this.patterns = patterns;
    this.limits = limits;
    this.json = TargetReader.json(limits);
    this.yaml = TargetReader.yaml(limits);
  }

  LabelNames labelNames() {
    return reads.labelNames();
  }

  @Override
  public String describe() {
    return "file SD " + patterns;
  }

  @Override
  public List<Target> read() throws IOException, InterruptedException {
    Map<Path, String> stamps = new TreeMap<>();
    for (Path p : patterns) {
      for (Path f : expand(p)) {
        try {
          BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class);
          if (!a.isRegularFile()) {
            // A FIFO would block the read, a device never end, a directory never hold targets.
            throw new IOException(f + ": not a regular file (a directory, a FIFO or a device)");
          }
          stamps.put(f, a.size() + "@" + a.lastModifiedTime().toMillis());
        } catch (NoSuchFileException e) {
          // gone between listing and reading: it simply has no targets now
        }
      }
    }
    if (stamps.equals(lastStamps)) {
      return last;
    }
    List<Target> read = reads.read(describe(), (interner, labelNames, out) -> readFiles(stamps, interner, labelNames, out));
    last = read;
    lastStamps = stamps;
    return last;
  }

  private void readFiles(
      Map<Path, String> stamps, TargetInterner interner, LabelNames labelNames, List<Target> out)
      throws IOException {
    long budget = limits.maxBytes();
    for (Path f : stamps.keySet()) {
      if (Files.size(f) > budget) {
        throw new IOException(f + ": larger than " + limits.maxBytes() + " bytes (all files of the source)");
      }
      String name = f.getFileName().toString();
      JsonFactory factory = name.endsWith(".json") ? json : yaml;
      // Long.MAX_VALUE / 2: no deadline of its own; the feed's read deadline interrupts the
      // (interruptible, channel-backed) stream.
      try (LimitedInputStream in =
          new LimitedInputStream(
              Files.newInputStream(f), f.toString(), budget, System.nanoTime() + Long.MAX_VALUE / 2)) {
        try {
          TargetReader.groups(in, factory, job, "__meta_filepath", f.toString(), f.toString(), labelNames, limits, interner, out);
        } catch (IOException e) {
          throw new IOException(firstLine(e.getMessage()), e);
        }
        budget -= in.count();
      }
    }
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "unreadable";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  private static List<Path> expand(Path pattern) throws IOException {
    Path name = pattern.getFileName();
    if (name == null || !isGlob(name.toString())) {
      return Files.exists(pattern) ? List.of(pattern) : List.of();
    }
    Path dir = pattern.getParent() == null ? Path.of(".") : pattern.getParent();
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    List<Path> out = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, name.toString())) {
      for (Path p : ds) {
        out.add(p);
      }
    }
    return out;
  }

  static boolean isGlob(String s) {
    return s.indexOf('*') >= 0 || s.indexOf('?') >= 0 || s.indexOf('[') >= 0;
  }
}
