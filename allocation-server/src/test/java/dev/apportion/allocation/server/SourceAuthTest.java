package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Sources' basic_auth and authorization options, never shown. */
class SourceAuthTest {
  @TempDir Path dir;

  @Test
  void basicAuthAndABearerTokenFileAreSentAndNeverShown() throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    HttpServer sd = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
    sd.createContext(
        "/",
        ex -> {
          seen.add(String.valueOf(ex.getRequestHeaders().getFirst("Authorization")));
          byte[] b = "[{\"targets\":[\"a:1\"]}]".getBytes(StandardCharsets.UTF_8);
          ex.getResponseHeaders().set("Content-Type", "application/json");
          ex.sendResponseHeaders(200, b.length);
          try (OutputStream out = ex.getResponseBody()) {
            out.write(b);
          }
        });
    sd.start();
    try {
      String url = "http://127.0.0.1:" + sd.getAddress().getPort() + "/sd";
      Files.writeString(dir.resolve("token"), "t0k3n\n");
      Files.writeString(dir.resolve("t.json"), "[]");
      Path config = dir.resolve("c.yaml");
      Files.writeString(
          config,
          "listen: 127.0.0.1:0\n"
              + "targets:\n"
              + "  - httpSd: {job: a, url: '" + url + "', basic_auth: {username: u, password: pw}}\n"
              + "  - httpSd: {job: b, url: '" + url + "', authorization: {credentials_file: token}}\n"
              + "collectors: {static: [x]}\n");
      ServerConfig c = ServerConfig.read(config);
      assertFalse(c.toString().contains("pw"), c.toString());
      try (Service s = new Service(c)) {
        s.feed().refresh();
        assertTrue(s.feed().isReady());
      }
      assertTrue(seen.contains("Basic " + Base64.getEncoder().encodeToString("u:pw".getBytes(StandardCharsets.UTF_8))), seen.toString());
      assertTrue(seen.contains("Bearer t0k3n"), seen.toString());
    } finally {
      sd.stop(0);
    }
  }

  @Test
  void tlsConfigGivesTheSourceItsCaAndClientCertificate() throws Exception {
    java.nio.file.Path sdStore = Certs.make(dir, "sd", "localhost");
    Certs.make(dir, "client", "apportion");
    javax.net.ssl.KeyManagerFactory kmf =
        javax.net.ssl.KeyManagerFactory.getInstance(javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(Certs.load(sdStore), Certs.PASS);
    java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    try (java.io.InputStream in = Files.newInputStream(dir.resolve("client.crt"))) {
      trust.setCertificateEntry("client", java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    javax.net.ssl.TrustManagerFactory tmf =
        javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    javax.net.ssl.SSLContext ctx = javax.net.ssl.SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    com.sun.net.httpserver.HttpsServer sd =
        com.sun.net.httpserver.HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
    sd.setHttpsConfigurator(
        new com.sun.net.httpserver.HttpsConfigurator(ctx) {
          @Override
          public void configure(com.sun.net.httpserver.HttpsParameters params) {
            javax.net.ssl.SSLParameters p = getSSLContext().getDefaultSSLParameters();
            p.setNeedClientAuth(true);
            params.setSSLParameters(p);
          }
        });
    sd.createContext(
        "/",
        ex -> {
          byte[] b = "[{\"targets\":[\"tls:1\"]}]".getBytes(StandardCharsets.UTF_8);
          ex.getResponseHeaders().set("Content-Type", "application/json");
          ex.sendResponseHeaders(200, b.length);
          try (OutputStream out = ex.getResponseBody()) {
            out.write(b);
          }
        });
    sd.start();
    try {
      String url = "https://127.0.0.1:" + sd.getAddress().getPort() + "/sd";
      Path config = dir.resolve("c.yaml");
      Files.writeString(
          config,
          "listen: 127.0.0.1:0\n"
              + "targets: [{httpSd: {job: a, url: '" + url + "',"
              + " tls_config: {ca_file: sd.crt, cert_file: client.crt, key_file: client.key}}}]\n"
              + "collectors: {static: [x]}\n");
      try (Service s = new Service(ServerConfig.read(config))) {
        s.feed().refresh();
        assertTrue(s.feed().isUp(0));
        assertEquals(1, s.allocator().snapshot().targets().size());
      }
      Files.writeString(
          config,
          "listen: 127.0.0.1:0\n"
              + "targets: [{httpSd: {job: a, url: '" + url + "', tls_config: {ca_file: sd.crt}}}]\n"
              + "collectors: {static: [x]}\n");
      try (Service s = new Service(ServerConfig.read(config))) {
        s.feed().refresh();
        assertFalse(s.feed().isUp(0), "no client certificate: the SD server refuses");
      }
    } finally {
      sd.stop(0);
    }
  }

  @Test
  void badAuthOptionsAreConfigErrorsNamingTheKey() throws Exception {
    Path config = dir.resolve("c.yaml");
    Files.writeString(
        config,
        """
        targets: [{httpSd: {job: a, url: 'http://x/', authorization: {credentials_file: missing}}}]
        collectors: {static: [x]}
        """);
    ConfigException e = assertThrows(ConfigException.class, () -> ServerConfig.read(config));
    assertTrue(e.getMessage().contains("targets[0].httpSd.authorization.credentials_file: not a readable regular file"), e.getMessage());
    Files.writeString(
        config,
        "targets: [{httpSd: {job: a, url: 'http://x/', basic_auth: {username: u}}}]\ncollectors: {static: [x]}\n");
    e = assertThrows(ConfigException.class, () -> ServerConfig.read(config));
    assertEquals(config + ": targets[0].httpSd.basic_auth: give password or password_file", e.getMessage());
  }
}
