package dev.apportion.allocation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class MoveTest {
  private static final Target T = Target.of("job", "10.0.0.1:80", Map.of("pod", "p"));
  private static final Target OTHER = Target.of("job", "10.0.0.2:80", Map.of("pod", "p"));

  @Test
  void nullTargetIsRejected() {
    NullPointerException e =
        assertThrows(NullPointerException.class, () -> new Move(null, "a", "b"));
    assertTrue(e.getMessage().contains("target"), e.getMessage());
  }

  @Test
  void fromEqualToToIsRejected() {
    assertThrows(IllegalArgumentException.class, () -> new Move(T, "a", "a"));
    // equal, not only identical, strings
    assertThrows(IllegalArgumentException.class,
        () -> new Move(T, "collector-a", "collector-".concat("a")));
  }

  @Test
  void bothNullIsRejected() {
    assertThrows(IllegalArgumentException.class, () -> new Move(T, null, null));
  }

  @Test
  void accessors() {
    Move reassigned = new Move(T, "a", "b");
    assertSame(T, reassigned.target());
    assertEquals(Optional.of("a"), reassigned.from());
    assertEquals(Optional.of("b"), reassigned.to());

    Move placed = new Move(T, null, "b");
    assertEquals(Optional.empty(), placed.from());
    assertEquals(Optional.of("b"), placed.to());

    Move dropped = new Move(T, "a", null);
    assertEquals(Optional.of("a"), dropped.from());
    assertEquals(Optional.empty(), dropped.to());
  }

  @Test
  void equalsAndHashCode() {
    Move m = new Move(T, "a", "b");
    Move same = new Move(Target.of("job", "10.0.0.1:80", Map.of("pod", "p")), "a", "b");
    assertEquals(m, same);
    assertEquals(m.hashCode(), same.hashCode());
    assertEquals(m, m);

    assertNotEquals(m, new Move(OTHER, "a", "b"));
    assertNotEquals(m, new Move(T, "c", "b"));
    assertNotEquals(m, new Move(T, "a", "c"));
    assertNotEquals(m, new Move(T, null, "b"));
    assertNotEquals(m, new Move(T, "a", null));
    assertNotEquals(m, new Move(T, "b", "a"));
    assertFalse(m.equals(null));
    assertFalse(m.equals((Object) "a"));
  }

  @Test
  void equalityFollowsTargetIdentityNotMetaLabels() {
    Target withMeta = Target.of("job", "10.0.0.1:80",
        Map.of("pod", "p", "__meta_kubernetes_pod_ready", "true"));
    assertEquals(new Move(T, "a", "b"), new Move(withMeta, "a", "b"));
    assertEquals(new Move(T, "a", "b").hashCode(), new Move(withMeta, "a", "b").hashCode());
  }

  @Test
  void toStringShowsTargetAndBothEnds() {
    assertEquals("job/10.0.0.1:80{pod=\"p\"}: a -> b", new Move(T, "a", "b").toString());
    assertEquals("job/10.0.0.1:80{pod=\"p\"}: - -> b", new Move(T, null, "b").toString());
    assertEquals("job/10.0.0.1:80{pod=\"p\"}: a -> -", new Move(T, "a", null).toString());
  }
}
