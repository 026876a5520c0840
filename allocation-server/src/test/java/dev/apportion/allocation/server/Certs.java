package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;

/** Test certificates made with the JDK's keytool (no openssl needed), written as PEM files. */
final class Certs {
  static final char[] PASS = "changeit".toCharArray();

  private Certs() {}

  /**
   * A self-signed EC certificate for {@code cn} (SAN 127.0.0.1 and localhost) in {@code
   * dir/name.p12}, with {@code dir/name.crt} and {@code dir/name.key} (PKCS#8) beside it.
   */
  static Path make(Path dir, String name, String cn) throws Exception {
    Path store = dir.resolve(name + ".p12");
    Files.deleteIfExists(store);
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    Process p =
        new ProcessBuilder(
                keytool.toString(), "-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=" + cn, "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2",
                "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", "changeit")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), out);
    KeyStore ks = load(store);
    Certificate cert = ks.getCertificate(name);
    Files.writeString(dir.resolve(name + ".crt"), WebConfig.pem("CERTIFICATE", cert.getEncoded()));
    Files.writeString(dir.resolve(name + ".key"), WebConfig.pem("PRIVATE KEY", ks.getKey(name, PASS).getEncoded()));
    return store;
  }

  static KeyStore load(Path p12) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(p12)) {
      ks.load(in, PASS);
    }
    return ks;
  }
}
