package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTPS from the exporter toolkit's web config file, client certificates, certificate reload.
 * Certificates are made with the JDK's
 * keytool; the PEM files the service reads are written from its PKCS#12 output.
 */
class TlsTest {
  @TempDir Path dir;
  private static final char[] PASS = Certs.PASS;

  private Path keytool(String name, String cn) throws Exception {
    return Certs.make(dir, name, cn);
  }

  private static KeyStore load(Path p12) throws Exception {
    return Certs.load(p12);
  }

  static HttpClient client(Path trustCert, Path clientP12) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    try (InputStream in = Files.newInputStream(trustCert)) {
      trust.setCertificateEntry("server", java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (clientP12 != null) {
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(load(clientP12), PASS);
    }
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return HttpClient.newBuilder().sslContext(ctx).connectTimeout(Duration.ofSeconds(5)).build();
  }

  static HttpResponse<String> get(HttpClient c, String url) throws Exception {
    return c.send(
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void requireAndVerifyClientCertServesOnlyClientsWithACertificateAndReloadsRenewedCertificates()
      throws Exception {
    keytool("server", "localhost");
    Path collector = keytool("collector", "prometheus-0");
    Files.writeString(dir.resolve("t.json"), "[{\"targets\":[\"a:1\"]}]");
    Files.writeString(
        dir.resolve("web.yml"),
        """
        tls_server_config:
          cert_file: server.crt
          key_file: server.key
          client_auth_type: RequireAndVerifyClientCert
          client_ca_file: collector.crt
        """);
    Path config = dir.resolve("c.yaml");
    Files.writeString(
        config,
        """
        listen: 127.0.0.1:0
        webConfigFile: web.yml
        targets: [{fileSd: {job: j, files: [t.json]}}]
        collectors: {static: [prometheus-0]}
        """);
    try (Service s = new Service(ServerConfig.read(config)).start()) {
      String url = "https://127.0.0.1:" + s.port() + "/targets?collector=prometheus-0";
      s.feed().refresh();
      HttpResponse<String> ok = get(client(dir.resolve("server.crt"), collector), url);
      assertEquals(200, ok.statusCode());
      assertTrue(ok.body().contains("a:1"), ok.body());
      Certificate before = ok.sslSession().orElseThrow().getPeerCertificates()[0];

      HttpClient anonymous = client(dir.resolve("server.crt"), null);
      assertThrows(IOException.class, () -> get(anonymous, url), "a client without a certificate gets nothing");
      Path stranger = keytool("stranger", "stranger");
      HttpClient unknown = client(dir.resolve("server.crt"), stranger);
      assertThrows(IOException.class, () -> get(unknown, url), "nor one whose certificate the CA did not sign");
      HttpClient plain = HttpClient.newHttpClient();
      assertThrows(IOException.class, () -> get(plain, url.replace("https", "http")));

      // A renewed certificate: new key, same name. New connections get it without a restart.
      keytool("server", "localhost");
      long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      Certificate after = before;
      while (after.equals(before) && System.nanoTime() < end) {
        Thread.sleep(500);
        try {
          after = get(client(dir.resolve("server.crt"), collector), url).sslSession().orElseThrow().getPeerCertificates()[0];
        } catch (IOException e) {
          // still the old certificate, which the client no longer trusts: retry
        }
      }
      assertNotEquals(
          ((X509Certificate) before).getSerialNumber(), ((X509Certificate) after).getSerialNumber(), "reloaded");
    }
  }

  @Test
  void badWebConfigsAreConfigErrorsNamingTheKey() throws Exception {
    Path config = dir.resolve("c.yaml");
    Files.writeString(dir.resolve("t.json"), "[]");
    Files.writeString(
        config, "webConfigFile: web.yml\ntargets: [{fileSd: {job: j, files: [t.json]}}]\ncollectors: {static: [x]}\n");
    Files.writeString(dir.resolve("web.yml"), "tls_server_config: {cert_file: a.crt, key_file: a.key, client_auth_type: RequireAnyClientCert}\n");
    ConfigException e = assertThrows(ConfigException.class, () -> ServerConfig.read(config));
    assertTrue(e.getMessage().contains("tls_server_config.client_auth_type: RequireAnyClientCert is not supported"), e.getMessage());
    Files.writeString(dir.resolve("web.yml"), "tls_server_config: {cert_file: a.crt, key_file: a.key, client_auth_type: RequireAndVerifyClientCert}\n");
    e = assertThrows(ConfigException.class, () -> ServerConfig.read(config));
    assertTrue(e.getMessage().contains("tls_server_config.client_ca_file: required"), e.getMessage());
    Files.writeString(dir.resolve("web.yml"), "tls_server_config: {cert_file: a.crt, key_file: a.key}\n");
    e = assertThrows(ConfigException.class, () -> ServerConfig.read(config));
    assertTrue(e.getMessage().contains("tls_server_config: "), e.getMessage());
  }
}
