package dev.apportion.allocation.internal;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import java.util.stream.Collectors;
import org.slf4j.LoggerFactory;

/**
 * Captures what one class logs, through logback (the tests' SLF4J binding). Close it to detach.
 */
public final class LogCapture implements AutoCloseable {
  private final Logger logger;
  private final Level levelBefore;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  private LogCapture(Class<?> source, Level level) {
    // A ClassCastException here means SLF4J did not bind to logback: see the surefire notes in
    // allocation-core's pom.
    this.logger = (Logger) LoggerFactory.getLogger(source);
    this.levelBefore = logger.getLevel();
    if (level != null) {
      logger.setLevel(level);
    }
    appender.start();
    logger.addAppender(appender);
  }

  /**
   * Starts capturing the events {@code source}'s logger emits.
   *
   * @param source the class whose logger to watch
   * @return the capture
   */
  public static LogCapture of(Class<?> source) {
    return new LogCapture(source, null);
  }

  /**
   * Starts capturing the events {@code source}'s logger emits at {@code level} and above (its
   * level until closed): trace lines say which way a change was placed.
   *
   * @param source the class whose logger to watch
   * @param level the most detailed level to capture
   * @return the capture
   */
  public static LogCapture of(Class<?> source, Level level) {
    return new LogCapture(source, level);
  }

  /**
   * How many messages were captured at {@code level} that contain {@code text}.
   *
   * @param level a level
   * @param text a part of the message
   * @return the count
   */
  public int count(Level level, String text) {
    return messages(level, text).size();
  }

  /**
   * The formatted messages captured at {@code level}, in order.
   *
   * @param level a level
   * @return a new list
   */
  public List<String> messages(Level level) {
    synchronized (appender) {
      return appender.list.stream().filter(e -> e.getLevel() == level)
          .map(ILoggingEvent::getFormattedMessage).collect(Collectors.toList());
    }
  }

  /**
   * The messages captured at {@code level} that contain {@code text}.
   *
   * @param level a level
   * @param text a part of the message
   * @return a new list
   */
  public List<String> messages(Level level, String text) {
    return messages(level).stream().filter(m -> m.contains(text)).collect(Collectors.toList());
  }

  /**
   * Runs {@code action} without capturing what it logs: for a test that compares with a second
   * instance of the class it watches.
   *
   * @param action what to run
   */
  public void without(Runnable action) {
    logger.detachAppender(appender);
    try {
      action.run();
    } finally {
      logger.addAppender(appender);
    }
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
    appender.stop();
    logger.setLevel(levelBefore);
  }
}
