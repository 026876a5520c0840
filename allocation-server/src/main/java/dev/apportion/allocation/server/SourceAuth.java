package dev.apportion.allocation.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;

/**
 * A source's credentials in Prometheus's HTTP client form: {@code basic_auth} (username with
 * {@code password} or {@code password_file}) or {@code authorization} ({@code type}, default
 * {@code Bearer}, with {@code credentials} or {@code credentials_file}). A file is read at every
 * request, so a rotated token is used at once, as Prometheus does. Never printed: {@link
 * #toString()} shows the kind only, and errors name the file, not its content.
 *
 * @param scheme {@code Basic}, {@code Bearer} or another authorization type
 * @param username the basic-auth user, or null
 * @param secret the password or credentials given inline, or null
 * @param secretFile the file holding them, or null
 */
record SourceAuth(String scheme, String username, String secret, Path secretFile) {
  /** The {@code Authorization} header's value. Blocks to read the file, if any. */
  String header() throws IOException {
    String s = secret;
    if (secretFile != null) {
      try {
        s = Files.readString(secretFile, StandardCharsets.UTF_8).strip();
      } catch (IOException e) {
        throw new IOException("cannot read the credentials file " + secretFile + ": " + e.getClass().getSimpleName(), e);
      }
    }
    if (username != null) {
      return "Basic "
          + Base64.getEncoder().encodeToString((username + ":" + s).getBytes(StandardCharsets.UTF_8));
    }
    return scheme + " " + s;
  }

  @Override
  public String toString() {
    return scheme + " <secret>";
  }
}
