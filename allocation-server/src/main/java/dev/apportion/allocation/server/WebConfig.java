package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * HTTPS settings in the form Prometheus users know: the exporter toolkit's web config file,
 * {@code tls_server_config} with {@code cert_file} and {@code key_file} (PEM; the key PKCS#8,
 * RSA or EC), {@code client_auth_type} and {@code client_ca_file}. Relative paths are resolved
 * against the web config file's folder. The files are read again when they change ({@link
 * #stamp()}), so a renewed certificate is served without a restart.
 *
 * <p>{@code client_auth_type}: {@code NoClientCert} (the default), {@code VerifyClientCertIfGiven}
 * and {@code RequireAndVerifyClientCert} (both need {@code client_ca_file}). {@code
 * RequestClientCert} and {@code RequireAnyClientCert}, which accept unverified certificates, are
 * refused.
 */
record WebConfig(Path certFile, Path keyFile, String clientAuthType, Path clientCaFile) {
  private static final Set<String> AUTH_TYPES =
      Set.of("NoClientCert", "VerifyClientCertIfGiven", "RequireAndVerifyClientCert");

  /** A password for the in-memory key store only; nothing is written anywhere. */
  private static final char[] IN_MEMORY = "apportion".toCharArray();

  /**
   * Reads and checks a web config file, loading its certificates once to fail early.
   *
   * @throws ConfigException naming the key at fault
   */
  static WebConfig read(Path file) throws ConfigException {
    byte[] bytes;
    try {
      if (!Files.isRegularFile(file)) {
        throw new ConfigException("webConfigFile: not a regular file: " + LogSafe.text(file.toString()));
      }
      bytes = Files.readAllBytes(file);
    } catch (IOException e) {
      throw new ConfigException("webConfigFile: cannot read " + file + ": " + e.getClass().getSimpleName());
    }
    JsonNode root = StrictYaml.read(bytes);
    String at = "webConfigFile " + file.getFileName();
    if (!(root instanceof ObjectNode top)) {
      throw new ConfigException(at + ": must be a mapping");
    }
    for (Iterator<String> it = top.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!"tls_server_config".equals(k)) {
        throw new ConfigException(at + ": " + k + ": not supported (only tls_server_config)");
      }
    }
    JsonNode t = top.get("tls_server_config");
    if (!(t instanceof ObjectNode tls)) {
      throw new ConfigException(at + ": tls_server_config: must be a mapping");
    }
    Path dir = file.toAbsolutePath().getParent();
    Map<String, String> v = new java.util.HashMap<>();
    for (Map.Entry<String, JsonNode> e : tls.properties()) {
      if (!Set.of("cert_file", "key_file", "client_auth_type", "client_ca_file").contains(e.getKey())) {
        throw new ConfigException(at + ": tls_server_config." + e.getKey() + ": not supported");
      }
      if (!e.getValue().isTextual()) {
        throw new ConfigException(at + ": tls_server_config." + e.getKey() + ": must be a string");
      }
      v.put(e.getKey(), e.getValue().asText());
    }
    if (v.get("cert_file") == null || v.get("key_file") == null) {
      throw new ConfigException(at + ": tls_server_config: cert_file and key_file are required");
    }
    String auth = v.getOrDefault("client_auth_type", "NoClientCert");
    if (!AUTH_TYPES.contains(auth)) {
      throw new ConfigException(
          at + ": tls_server_config.client_auth_type: " + LogSafe.text(auth) + " is not supported; one of " + AUTH_TYPES);
    }
    Path ca = v.get("client_ca_file") == null ? null : dir.resolve(v.get("client_ca_file"));
    if (!"NoClientCert".equals(auth) && ca == null) {
      throw new ConfigException(at + ": tls_server_config.client_ca_file: required with " + auth);
    }
    WebConfig c = new WebConfig(dir.resolve(v.get("cert_file")), dir.resolve(v.get("key_file")), auth, ca);
    try {
      c.keyStore();
      c.trustStore();
    } catch (IOException | GeneralSecurityException e) {
      throw new ConfigException(at + ": tls_server_config: " + LogSafe.text(e.getMessage()));
    }
    return c;
  }

  /** The files' sizes and modification times: a change means a reload. */
  String stamp() {
    StringBuilder b = new StringBuilder();
    for (Path p : new Path[] {certFile, keyFile, clientCaFile}) {
      if (p != null) {
        try {
          b.append(Files.size(p)).append('@').append(Files.getLastModifiedTime(p).toMillis()).append(';');
        } catch (IOException e) {
          b.append("missing;");
        }
      }
    }
    return b.toString();
  }

  /** A Jetty TLS factory with these settings. */
  SslContextFactory.Server factory() throws IOException, GeneralSecurityException {
    SslContextFactory.Server f = new SslContextFactory.Server();
    apply(f);
    f.setNeedClientAuth("RequireAndVerifyClientCert".equals(clientAuthType));
    f.setWantClientAuth("VerifyClientCertIfGiven".equals(clientAuthType));
    // Clients reach the service by any name or address; the certificate is not matched to SNI.
    f.setSniRequired(false);
    return f;
  }

  /** Loads the files into {@code f}; for the first start and for each reload. */
  void apply(SslContextFactory f) throws IOException, GeneralSecurityException {
    // Both read (and the pair checked) before anything is set: a failure leaves f as it was.
    KeyStore keys = keyStore();
    KeyStore trust = trustStore();
    f.setKeyStore(keys);
    f.setKeyStorePassword(new String(IN_MEMORY));
    if (trust != null) {
      f.setTrustStore(trust);
    }
  }

  KeyStore keyStore() throws IOException, GeneralSecurityException {
    List<Certificate> chain = certificates(certFile, "cert_file");
    PrivateKey key = privateKey(keyFile);
    requireMatch(key, chain.get(0));
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    ks.setKeyEntry("server", key, IN_MEMORY, chain.toArray(new Certificate[0]));
    return ks;
  }

  /**
   * Fails unless {@code key} is the private key of {@code cert}: a test message signed with the
   * key must verify with the certificate's public key. A renewed certificate written before its
   * key (or without it) is then refused rather than served with the old key, which would fail
   * every handshake.
   */
  static void requireMatch(PrivateKey key, Certificate cert) throws GeneralSecurityException {
    String alg =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          default -> key.getAlgorithm(); // Ed25519, Ed448
        };
    byte[] probe = "apportion: does the key match the certificate?".getBytes(StandardCharsets.US_ASCII);
    boolean matches;
    try {
      java.security.Signature sign = java.security.Signature.getInstance(alg);
      sign.initSign(key);
      sign.update(probe);
      byte[] signature = sign.sign();
      java.security.Signature verify = java.security.Signature.getInstance(alg);
      verify.initVerify(cert.getPublicKey());
      verify.update(probe);
      matches = verify.verify(signature);
    } catch (java.security.InvalidKeyException | java.security.SignatureException e) {
      matches = false; // a key of another algorithm than the certificate's
    }
    if (!matches) {
      throw new GeneralSecurityException("key_file does not match cert_file (the key is not the certificate's)");
    }
  }

  KeyStore trustStore() throws IOException, GeneralSecurityException {
    if (clientCaFile == null) {
      return null;
    }
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    int i = 0;
    for (Certificate c : certificates(clientCaFile, "client_ca_file")) {
      ks.setCertificateEntry("ca-" + i++, c);
    }
    return ks;
  }

  static List<Certificate> certificates(Path file, String key)
      throws IOException, GeneralSecurityException {
    try (InputStream in = Files.newInputStream(file)) {
      List<Certificate> out = new ArrayList<>(CertificateFactory.getInstance("X.509").generateCertificates(in));
      if (out.isEmpty()) {
        throw new GeneralSecurityException(key + ": no certificate in " + file);
      }
      return out;
    }
  }

  private static final Pattern PKCS8 =
      Pattern.compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");

  static PrivateKey privateKey(Path file) throws IOException, GeneralSecurityException {
    String pem = Files.readString(file, StandardCharsets.US_ASCII);
    Matcher m = PKCS8.matcher(pem);
    if (!m.find()) {
      throw new GeneralSecurityException(
          "key_file: no PKCS#8 'BEGIN PRIVATE KEY' block in " + file + " (convert with openssl pkcs8 -topk8 -nocrypt)");
    }
    byte[] der = Base64.getMimeDecoder().decode(m.group(1));
    GeneralSecurityException last = null;
    for (String alg : new String[] {"RSA", "EC", "Ed25519"}) {
      try {
        return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        last = e;
      }
    }
    throw new GeneralSecurityException("key_file: not an RSA, EC or Ed25519 key: " + file, last);
  }

  /** For tests: the PEM text of DER bytes. */
  static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }
}
