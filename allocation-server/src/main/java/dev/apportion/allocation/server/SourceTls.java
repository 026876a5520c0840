package dev.apportion.allocation.server;

import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A source's {@code tls_config}, as in Prometheus's HTTP client: {@code ca_file} (PEM; the CAs the
 * source's certificate must chain to, instead of the JVM's default trust store) and {@code
 * cert_file} with {@code key_file} (PEM, the key PKCS#8) for a client certificate. The files are read
 * when the config is loaded (and so again at a reload).
 *
 * @param caFile the CA file, or null for the JVM's trust store
 * @param certFile the client certificate, or null for none
 * @param keyFile its key, or null for none
 */
record SourceTls(Path caFile, Path certFile, Path keyFile) {
  private static final char[] IN_MEMORY = "apportion".toCharArray();

  /** An SSL context with these settings. Blocks to read the files. */
  SSLContext context() throws IOException, GeneralSecurityException {
    TrustManagerFactory tmf = null;
    if (caFile != null) {
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      int i = 0;
      for (Certificate c : WebConfig.certificates(caFile, "ca_file")) {
        trust.setCertificateEntry("ca-" + i++, c);
      }
      tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
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
    ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf == null ? null : tmf.getTrustManagers(), null);
    return ctx;
  }

  /** A client like the service's shared one, with this TLS context. */
  HttpClient client(Duration connectTimeout) throws IOException, GeneralSecurityException {
    return HttpClient.newBuilder()
        .connectTimeout(connectTimeout)
        .followRedirects(HttpClient.Redirect.NORMAL)
        .sslContext(context())
        .build();
  }
}
