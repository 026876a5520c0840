package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.Socket;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The HTTP client options of every outgoing request (target sources and the cost query alike), in
 * Prometheus's client config form: {@code basic_auth} ({@code username} with {@code password} or
 * {@code password_file}), {@code authorization} ({@code type}, default {@code Bearer}, with {@code
 * credentials} or {@code credentials_file}) and {@code tls_config} ({@code ca_file}; {@code
 * cert_file} with {@code key_file} for a client certificate, PEM, the key PKCS#8; {@code
 * insecure_skip_verify}). Relative files are resolved against the config's folder. A credentials
 * file must be readable when the config is loaded and is read again at every request, so a rotated
 * token is used at once, as Prometheus does; the TLS files are loaded with the config (and so again
 * at a reload).
 *
 * <p>Clients are shared: every source and feed whose TLS settings (and TLS files) are the same
 * uses one {@link HttpClient}, across reloads too, so reloading does not start a new client (a
 * selector thread and its file descriptors) each time. {@link #toString()} never shows a secret,
 * nor does any error message.
 *
 * @param username basic auth user, or null for no basic auth
 * @param password basic auth password given inline, or null
 * @param passwordFile basic auth password file, or null
 * @param authType the {@code Authorization} scheme, or null for no authorization header
 * @param credentials the credentials given inline, or null
 * @param credentialsFile the credentials file, or null
 * @param caFile PEM certificates to trust instead of the JDK's, or null
 * @param certFile a client certificate (PEM), or null
 * @param keyFile its key (PEM, PKCS#8), or null
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
    Path certFile,
    Path keyFile,
    boolean insecureSkipVerify) {

  /** No authentication, the JDK's trust store. */
  static final HttpClientOptions NONE =
      new HttpClientOptions(null, null, null, null, null, null, null, null, null, false);

  /** A password for the in-memory key store only; nothing is written anywhere. */
  private static final char[] IN_MEMORY = "apportion".toCharArray();

  /** The most clients kept for reuse (distinct TLS settings); far above any real config. */
  private static final int MAX_CLIENTS = 32;

  /** Shared clients by TLS settings and their files' stamps; least recently used dropped first. */
  private static final Map<List<Object>, HttpClient> CLIENTS =
      new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<List<Object>, HttpClient> eldest) {
          return size() > MAX_CLIENTS;
        }
      };

  /**
   * Parses the {@code basic_auth}, {@code authorization} and {@code tls_config} keys of {@code
   * node} (other keys are the caller's to check), loading the TLS files and checking the
   * credentials files now, so that a bad one is a config error.
   *
   * @param node the mapping holding the options
   * @param at its path, for errors
   * @param baseDir the config file's folder
   * @return the options; {@link #NONE} when none are given
   * @throws ConfigException naming the key at fault
   */
  static HttpClientOptions parse(JsonNode node, String at, Path baseDir) throws ConfigException {
    String username = null;
    String password = null;
    Path passwordFile = null;
    JsonNode ba = node.get("basic_auth");
    JsonNode au = node.get("authorization");
    if (ba != null && !ba.isNull() && au != null && !au.isNull()) {
      throw new ConfigException(at + ".authorization: give basic_auth or authorization, not both");
    }
    if (ba != null && !ba.isNull()) {
      String w = at + ".basic_auth";
      ConfigNodes.object(ba, w);
      ConfigNodes.keys(ba, w, "username", "password", "password_file");
      username = ConfigNodes.required(ba, "username", w);
      password = ConfigNodes.text(ba, "password", null, w);
      String pf = ConfigNodes.text(ba, "password_file", null, w);
      if (password != null && pf != null) {
        throw new ConfigException(w + ": give password or password_file, not both");
      }
      if (password == null && pf == null) {
        throw new ConfigException(w + ": give password or password_file");
      }
      passwordFile = secretFile(baseDir, pf, w + ".password_file");
    }
    String type = null;
    String credentials = null;
    Path credentialsFile = null;
    if (au != null && !au.isNull()) {
      String w = at + ".authorization";
      ConfigNodes.object(au, w);
      ConfigNodes.keys(au, w, "type", "credentials", "credentials_file");
      type = ConfigNodes.text(au, "type", "Bearer", w);
      if (type.isBlank() || type.chars().anyMatch(Character::isWhitespace)) {
        throw new ConfigException(w + ".type: must be one word, such as Bearer");
      }
      if ("basic".equalsIgnoreCase(type)) {
        throw new ConfigException(w + ".type: use basic_auth for Basic");
      }
      credentials = ConfigNodes.text(au, "credentials", null, w);
      String cf = ConfigNodes.text(au, "credentials_file", null, w);
      if ((credentials == null) == (cf == null)) {
        throw new ConfigException(w + ": give exactly one of credentials, credentials_file");
      }
      credentialsFile = secretFile(baseDir, cf, w + ".credentials_file");
    }
    Path ca = null;
    Path cert = null;
    Path key = null;
    boolean insecure = false;
    JsonNode tls = node.get("tls_config");
    if (tls != null && !tls.isNull()) {
      String w = at + ".tls_config";
      ConfigNodes.object(tls, w);
      ConfigNodes.keys(tls, w, "ca_file", "cert_file", "key_file", "insecure_skip_verify");
      ca = file(baseDir, ConfigNodes.text(tls, "ca_file", null, w));
      cert = file(baseDir, ConfigNodes.text(tls, "cert_file", null, w));
      key = file(baseDir, ConfigNodes.text(tls, "key_file", null, w));
      if ((cert == null) != (key == null)) {
        throw new ConfigException(w + ": give cert_file and key_file together");
      }
      insecure = ConfigNodes.bool(tls, "insecure_skip_verify", false, w);
      HttpClientOptions check = new HttpClientOptions(null, null, null, null, null, null, ca, cert, key, insecure);
      try {
        check.sslContext();
      } catch (IOException | GeneralSecurityException e) {
        throw new ConfigException(w + ": " + ConfigNodes.oneLine(e.getMessage()));
      }
    }
    return new HttpClientOptions(
        username, password, passwordFile, type, credentials, credentialsFile, ca, cert, key, insecure);
  }

  private static Path file(Path baseDir, String name) {
    return name == null ? null : baseDir.resolve(name).normalize();
  }

  private static Path secretFile(Path baseDir, String name, String at) throws ConfigException {
    if (name == null) {
      return null;
    }
    Path p = file(baseDir, name);
    if (!Files.isRegularFile(p) || !Files.isReadable(p)) {
      throw new ConfigException(at + ": not a readable regular file: " + LogSafe.text(name));
    }
    return p;
  }

  /**
   * The {@code Authorization} header's value, read now (files are re-read at every call), or null
   * when no authentication is configured. Blocks to read a file.
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
      throw new IOException("cannot read the credentials file " + file + " (" + e.getClass().getSimpleName() + ")");
    }
  }

  /**
   * The shared client for these TLS settings, made on first use (and again when a TLS file
   * changed). Blocks to read the TLS files.
   *
   * @throws IOException if the TLS files cannot be loaded
   */
  HttpClient client() throws IOException {
    List<Object> key = new ArrayList<>();
    key.add(insecureSkipVerify);
    for (Path p : new Path[] {caFile, certFile, keyFile}) {
      key.add(p == null ? "" : p + "@" + stamp(p));
    }
    synchronized (CLIENTS) {
      HttpClient c = CLIENTS.get(key);
      if (c == null) {
        c = build();
        CLIENTS.put(List.copyOf(key), c);
      }
      return c;
    }
  }

  /**
   * Forgets a shared client, so that the next {@link #client()} builds another: after an {@link
   * Error} in a read, its selector thread may be dead.
   */
  static void discard(HttpClient client) {
    synchronized (CLIENTS) {
      CLIENTS.values().removeIf(c -> c == client);
    }
  }

  /** How many distinct clients are kept for reuse. */
  static int sharedClients() {
    synchronized (CLIENTS) {
      return CLIENTS.size();
    }
  }

  private static String stamp(Path p) {
    try {
      return Files.size(p) + "@" + Files.getLastModifiedTime(p).toMillis();
    } catch (IOException e) {
      return "missing";
    }
  }

  private HttpClient build() throws IOException {
    HttpClient.Builder b = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL);
    if (insecureSkipVerify || caFile != null || certFile != null) {
      try {
        b.sslContext(sslContext());
      } catch (GeneralSecurityException e) {
        throw new IOException("TLS set-up failed: " + ConfigNodes.oneLine(e.getMessage()), e);
      }
      if (insecureSkipVerify) {
        SSLParameters p = new SSLParameters();
        p.setEndpointIdentificationAlgorithm(null);
        b.sslParameters(p);
      }
    }
    return b.build();
  }

  /** An SSL context with these settings. Blocks to read the files. */
  SSLContext sslContext() throws IOException, GeneralSecurityException {
    TrustManager[] trust = null;
    if (insecureSkipVerify) {
      trust = new TrustManager[] {new TrustAll()};
    } else if (caFile != null) {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      int i = 0;
      for (Certificate c : WebConfig.certificates(caFile, "ca_file")) {
        store.setCertificateEntry("ca-" + i++, c);
      }
      TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      f.init(store);
      trust = f.getTrustManagers();
    }
    KeyManagerFactory kmf = null;
    if (certFile != null) {
      List<Certificate> chain = WebConfig.certificates(certFile, "cert_file");
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      ks.setKeyEntry("client", WebConfig.privateKey(keyFile), IN_MEMORY, chain.toArray(new Certificate[0]));
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(ks, IN_MEMORY);
    }
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf == null ? null : kmf.getKeyManagers(), trust, new SecureRandom());
    return ctx;
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
    if (certFile != null) {
      sb.append("cert_file ").append(certFile).append("; ");
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
