package dev.apportion.allocation.ownership;

import com.google.common.hash.Hasher;
import com.google.common.hash.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.SortedMap;

/** How a view's state and fingerprint follow from its configuration and member list. */
final class OwnershipViews {
  private OwnershipViews() {}

  /** The state of the local member {@code self} over {@code weights} in the given mode. */
  static Ownership.State state(String self, int minimumMembers,
      SortedMap<String, Double> weights) {
    boolean listed = weights.containsKey(self);
    if (minimumMembers > 0) {
      if (!listed || weights.size() < minimumMembers) {
        return Ownership.State.WAITING;
      }
    } else if (!listed) {
      return Ownership.State.FAIL_SAFE;
    }
    return weights.size() == 1 ? Ownership.State.ALONE : Ownership.State.SHARED;
  }

  /** See {@link Ownership#fingerprint()}: FarmHash over the placement's whole configuration. */
  static long fingerprint(TargetKey key, int minimumMembers, int replicas,
      SortedMap<String, Double> weights) {
    Hasher h = Hashing.farmHashFingerprint64().newHasher();
    h.putInt(1);
    putString(h, key.describe());
    h.putInt(minimumMembers);
    h.putInt(weights.size());
    for (Map.Entry<String, Double> e : weights.entrySet()) {
      putString(h, e.getKey());
      h.putLong(Double.doubleToLongBits(e.getValue()));
    }
    if (replicas > 1) {
      h.putInt(replicas); // one replica hashes as before replicas existed
    }
    return h.hash().asLong();
  }

  private static void putString(Hasher h, String s) {
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    h.putInt(utf8.length).putBytes(utf8);
  }
}
