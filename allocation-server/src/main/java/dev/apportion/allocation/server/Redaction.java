package dev.apportion.allocation.server;

import java.net.URI;
import java.util.Locale;
import java.util.Set;

/**
 * A URL as logs, metrics and {@code __meta_url} may show it: the password of its user information
 * and the values of its secret query parameters replaced by {@code <secret>}. Secret are the
 * parameters every API uses for credentials ({@value #ALWAYS_LIST}, in any case) and any the
 * config marks so. Stateless.
 */
final class Redaction {
  static final String SECRET = "<secret>";

  /** The query parameters always taken for credentials, lower case. */
  static final Set<String> ALWAYS =
      Set.of(
          "token", "access_token", "id_token", "refresh_token", "apikey", "api_key", "api-key",
          "password", "passwd", "secret", "client_secret", "auth", "authorization", "sig",
          "signature", "x-amz-signature", "x-amz-security-token", "key");

  static final String ALWAYS_LIST = "token, access_token, apikey, api_key, password, secret, sig, key and the like";

  private Redaction() {}

  /**
   * {@code url} safe to show.
   *
   * @param url a URL
   * @param secretParams further parameter names to hide (as the config spells them)
   * @return the URL itself when it carries nothing secret
   */
  static String url(URI url, Set<String> secretParams) {
    String s = url.toString();
    String userInfo = url.getRawUserInfo();
    if (userInfo != null) {
      int colon = userInfo.indexOf(':');
      String shown = colon < 0 ? userInfo : userInfo.substring(0, colon) + ":" + SECRET;
      s = s.replace("://" + userInfo + "@", "://" + shown + "@");
    }
    String query = url.getRawQuery();
    if (query == null) {
      return s;
    }
    StringBuilder q = new StringBuilder(query.length());
    boolean changed = false;
    for (String pair : query.split("&", -1)) {
      if (q.length() > 0) {
        q.append('&');
      }
      int eq = pair.indexOf('=');
      String name = eq < 0 ? pair : pair.substring(0, eq);
      if (eq >= 0 && isSecret(name, secretParams)) {
        q.append(name).append('=').append(SECRET);
        changed = true;
      } else {
        q.append(pair);
      }
    }
    if (!changed) {
      return s;
    }
    int at = s.indexOf("?" + query);
    return s.substring(0, at + 1) + q + s.substring(at + 1 + query.length());
  }

  private static boolean isSecret(String rawName, Set<String> secretParams) {
    String name;
    try {
      name = Queries.decode(rawName);
    } catch (IllegalArgumentException e) {
      return true; // undecodable: hide it rather than guess
    }
    return ALWAYS.contains(name.toLowerCase(Locale.ROOT)) || secretParams.contains(name);
  }
}
