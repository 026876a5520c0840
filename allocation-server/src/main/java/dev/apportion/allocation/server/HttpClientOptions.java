package dev.apportion.allocation.server;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The HTTP client options of a Prometheus-style client config, as far as a query API needs them:
 * {@code basic_auth} ({@code username}, {@code password} or {@code password_file}), {@code
 * authorization} ({@code type}, default {@code Bearer}; {@code credentials} or {@code
 * credentials_file}) and {@code tls_config} ({@code ca_file}, {@code insecure_skip_verify}).
 * Files are read at every request, as Prometheus does, so a rotated token needs no restart.
 *
 * <p>Self-contained for the cost query so that it can later be unified with the target sources'
 * options. {@link #toString()} never shows a secret, nor does any error message.
 *
 * @param username basic auth user, or null for no basic auth
 * @param password basic auth password given inline, or null
 * @param passwordFile basic auth password file, or null
 * @param authType the {@code Authorization} scheme, or null for no authorization header
 * @param credentials the credentials given inline, or null
 * @param credentialsFile the credentials file, or null
 * @param caFile PEM certificates to trust instead of the JDK's, or null
 * @param insecureSkipVerify whether to accept any certificate and host name (tests only)
 */
record HttpClientOptions(
    String username,
    String password,
    Path passwordFile,
    String authType,
    String credentials,
    Path credentialsFile,
    Path caFile,
    boolean insecureSkipVerify) {

  /** No authentication, the JDK's trust store. */
  static final HttpClientOptions NONE =
      new HttpClientOptions(null, null, null, null, null, null, null, false);

  /**
   * The {@code Authorization} header's value, read now (files are re-read at every call), or null
   * when no authentication is configured.
   *
   * @throws IOException if a credentials file cannot be read; the message names the file only
   */
  String authorizationHeader() throws IOException {
    if (username != null) {
      String pw = passwordFile != null ? readSecret(passwordFile) : password == null ? "" : password;
      return "Basic "
          + Base64.getEncoder()
              .encodeToString((username + ":" + pw).getBytes(StandardCharsets.UTF_8));
    }
    if (authType != null) {
      String c = credentialsFile != null ? readSecret(credentialsFile) : credentials;
      return authType + " " + c;
    }
    return null;
  }

  private static String readSecret(Path file) throws IOException {
    try {
      return Files.readString(file, StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      throw new IOException("cannot read " + file + " (" + e.getClass().getSimpleName() + ")");
    }
  }

  /**
   * A client with these TLS options.
   *
   * @param connectTimeout the connect timeout
   * @throws IOException if the CA file cannot be read or holds no certificate
   */
  HttpClient client(Duration connectTimeout) throws IOException {
    HttpClient.Builder b =
        HttpClient.newBuilder().connectTimeout(connectTimeout).followRedirects(HttpClient.Redirect.NORMAL);
    if (insecureSkipVerify || caFile != null) {
      try {
        SSLContext ssl = SSLContext.getInstance("TLS");
        TrustManager[] trust = insecureSkipVerify ? new TrustManager[] {new TrustAll()} : trusting(caFile);
        ssl.init(null, trust, new SecureRandom());
        b.sslContext(ssl);
        if (insecureSkipVerify) {
          SSLParameters p = new SSLParameters();
          p.setEndpointIdentificationAlgorithm(null);
          b.sslParameters(p);
        }
      } catch (GeneralSecurityException e) {
        throw new IOException("TLS set-up failed: " + e.getMessage(), e);
      }
    }
    return b.build();
  }

  private static TrustManager[] trusting(Path caFile) throws IOException, GeneralSecurityException {
    KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    store.load(null, null);
    int n = 0;
    try (InputStream in = Files.newInputStream(caFile)) {
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        store.setCertificateEntry("ca-" + n++, c);
      }
    }
    if (n == 0) {
      throw new IOException(caFile + ": no certificate in it");
    }
    TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    f.init(store);
    return f.getTrustManagers();
  }

  /** Which options are set, never their secrets. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("HttpClientOptions[");
    if (username != null) {
      sb.append("basic_auth user ").append(username).append(", password <hidden>; ");
    }
    if (authType != null) {
      sb.append("authorization ").append(authType).append(" <hidden>; ");
    }
    if (caFile != null) {
      sb.append("ca_file ").append(caFile).append("; ");
    }
    if (insecureSkipVerify) {
      sb.append("insecure_skip_verify; ");
    }
    return sb.append(']').toString();
  }

  /** Accepts every certificate: {@code insecure_skip_verify: true}. */
  private static final class TrustAll extends X509ExtendedTrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
