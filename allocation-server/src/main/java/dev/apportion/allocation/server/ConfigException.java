package dev.apportion.allocation.server;

/**
 * A config error: its message is one line naming the key at fault ({@code
 * targets[1].fileSd.files: ...}), the line {@link Main} prints and a refused reload logs.
 */
final class ConfigException extends Exception {
  private static final long serialVersionUID = 1L;

  ConfigException(String message) {
    super(message);
  }
}
