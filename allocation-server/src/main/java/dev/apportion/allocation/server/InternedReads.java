package dev.apportion.allocation.server;

import dev.apportion.allocation.Target;
import dev.apportion.allocation.TargetInterner;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What a target source keeps from one read to the next: its {@link TargetInterner} (which gives
 * back the previous read's target for every unchanged label set) and its count of dropped label
 * names. A read that fails in any way, an {@link OutOfMemoryError} included, gives up the
 * interner it was filling, with every target the failed read made: the next read starts with an
 * empty one (and so builds its targets anew) instead of keeping a half-read answer reachable. Used
 * by one reading thread at a time.
 */
final class InternedReads {
  private final LabelNames labelNames = new LabelNames();
  private TargetInterner interner = new TargetInterner();

  /** One read's body: adds the targets it reads to {@code out}. */
  interface Body {
    void read(TargetInterner interner, LabelNames labelNames, List<Target> out)
        throws IOException, InterruptedException;
  }

  /**
   * Runs one read; on success ends the interner's refresh and returns the targets.
   *
   * @param source the source's description, for the dropped-labels log line
   * @param body the read
   * @return an immutable list
   */
  List<Target> read(String source, Body body) throws IOException, InterruptedException {
    boolean done = false;
    try {
      labelNames.begin();
      List<Target> out = new ArrayList<>();
      body.read(interner, labelNames, out);
      labelNames.end(source);
      interner.endRefresh();
      done = true;
      return List.copyOf(out);
    } finally {
      if (!done) {
        interner = new TargetInterner();
      }
    }
  }

  LabelNames labelNames() {
    return labelNames;
  }
}
