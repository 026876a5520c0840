package dev.apportion.allocation.server;

/**
 * What one read of one target source may take, so that the memory a read needs is bounded by what
 * is kept rather than by what is sent. The sources parse as they read (no tree of the whole answer
 * is ever built), so a read holds at most the targets kept so far plus one group's labels; these
 * bound that.
 *
 * @param maxBytes the most bytes read from one answer or one file SD source (all its files)
 * @param maxTargets the most targets one read may produce
 * @param maxLabelsPerTarget the most labels one target (or group) may carry
 * @param maxStringLength the longest label name, label value or address, in characters
 */
record SourceLimits(long maxBytes, int maxTargets, int maxLabelsPerTarget, int maxStringLength) {
  /**
   * The defaults: 64 MiB, 200,000 targets, 256 labels per target, 64 Ki characters per string. A
   * read that would exceed a limit fails (the source keeps its last good targets) before it gets
   * there.
   */
  static final SourceLimits DEFAULT = new SourceLimits(64L << 20, 200_000, 256, 64 << 10);

  SourceLimits {
    if (maxBytes < 1 || maxTargets < 1 || maxLabelsPerTarget < 1 || maxStringLength < 1) {
      throw new IllegalArgumentException("source limits must be positive");
    }
  }
}
