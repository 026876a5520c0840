package dev.apportion.bench.sim;

/**
 * Bad simulator input. Its message is one line that names the file and the line or field at
 * fault; the command prints it as it is and exits with code 2.
 */
public final class InputException extends Exception {
  private static final long serialVersionUID = 1L;

  /**
   * An input error.
   *
   * @param message one line naming the file and the line or field
   */
  public InputException(String message) {
    super(message);
  }
}
