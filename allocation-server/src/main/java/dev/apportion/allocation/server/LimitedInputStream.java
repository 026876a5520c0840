package dev.apportion.allocation.server;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Fails once more than a number of bytes were read, or once a deadline has passed: a body that
 * drips or never ends is cut here, not by whoever waits for its parse. The deadline is checked at
 * each read call; a read blocked in the stream below is ended by interrupting its thread ({@link
 * TargetFeed} does) or by the transport's own timeout.
 */
final class LimitedInputStream extends FilterInputStream {
  private final String what;
  private final long limit;
  private final long deadlineNanos;
  private long left;

  /**
   * @param in the stream
   * @param what what is read, for the error message
   * @param limit the most bytes read
   * @param deadlineNanos a {@link System#nanoTime()} after which reading fails
   */
  LimitedInputStream(InputStream in, String what, long limit, long deadlineNanos) {
    super(in);
    this.what = what;
    this.limit = limit;
    this.left = limit;
    this.deadlineNanos = deadlineNanos;
  }

  /** The bytes read so far. */
  long count() {
    return limit - left;
  }

  private void check() throws IOException {
    if (System.nanoTime() - deadlineNanos > 0) {
      throw new IOException(what + ": not read completely within the request timeout");
    }
  }

  @Override
  public int read() throws IOException {
    check();
    int b = super.read();
    if (b >= 0 && --left < 0) {
      throw new IOException(what + ": larger than " + limit + " bytes");
    }
    return b;
  }

  @Override
  public int read(byte[] buf, int off, int len) throws IOException {
    check();
    int n = super.read(buf, off, len);
    if (n > 0) {
      left -= n;
      if (left < 0) {
        throw new IOException(what + ": larger than " + limit + " bytes");
      }
    }
    return n;
  }

  @Override
  public long skip(long n) throws IOException {
    check();
    long s = super.skip(n);
    left -= s;
    if (left < 0) {
      throw new IOException(what + ": larger than " + limit + " bytes");
    }
    return s;
  }
}
