package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * One operation of a {@link Scenario}: a change to the {@link Inputs} model and the one allocator
 * call that tells the allocator about it. Steps are immutable values that name the entities they
 * touch; a step whose entities are absent (because shrinking dropped the step that added them) is
 * a no-op on the model but still makes its call, which must then move nothing.
 */
abstract class Step {

  /** Which write method a step calls. */
  enum Kind {
    TARGETS,
    COLLECTORS
  }

  abstract Kind kind();

  abstract Inputs apply(Inputs in);

  /** Java source of the builder call that recreates this step, starting with a dot. */
  abstract String toJava(String indent);

  /** Strictly smaller variants of this step, most aggressive first. */
  List<Step> shrinks() {
    return List.of();
  }

  /** Extra stale copies to send before the current targets (duplicates), none by default. */
  List<Target> staleCopies() {
    return List.of();
  }

  /** Every target this step names, in order; none for a collector step. */
  List<Target> targets() {
    return List.of();
  }

  /**
   * This step with {@code f} applied to every target it names (the same step for a collector
   * step). The shrinker uses it to change a target's identity consistently in every step.
   */
  Step mapTargets(UnaryOperator<Target> f) {
    return this;
  }

  /** {@code targets} with {@code f} applied to each. */
  static List<Target> map(List<Target> targets, UnaryOperator<Target> f) {
    List<Target> out = new ArrayList<>(targets.size());
    for (Target t : targets) {
      out.add(f.apply(t));
    }
    return out;
  }

  /** Halves, then every one-element-removed sublist: the classic list shrink. */
  static <T> List<List<T>> sublists(List<T> items) {
    List<List<T>> out = new ArrayList<>();
    int n = items.size();
    if (n <= 1) {
      return out;
    }
    if (n >= 4) {
      out.add(items.subList(0, n / 2));
      out.add(items.subList(n / 2, n));
    }
    for (int i = 0; i < n; i++) {
      List<T> l = new ArrayList<>(items);
      l.remove(i);
      out.add(l);
    }
    return out;
  }

  /**
   * The shrinks of a step over {@code targets}: the same step over each smaller sublist, then over
   * each simplified list.
   */
  static List<Step> targetShrinks(List<Target> targets, Function<List<Target>, Step> step) {
    List<Step> out = new ArrayList<>();
    for (List<Target> l : sublists(targets)) {
      out.add(step.apply(l));
    }
    for (List<Target> l : simplified(targets)) {
      out.add(step.apply(l));
    }
    return out;
  }

  /**
   * The same targets with every {@code __meta_*} label dropped except one that names the same
   * node: identity and node are kept, the report gets shorter. Empty when nothing would change.
   * (Identity labels are dropped by the shrinker across the whole scenario, see
   * {@link Shrinker}: dropping one here would change a target's identity in this step only.)
   */
  static List<List<Target>> simplified(List<Target> targets) {
    List<Target> out = new ArrayList<>();
    boolean changed = false;
    for (Target t : targets) {
      Target s = simplified(t);
      changed |= !s.sameLabels(t);
      out.add(s);
    }
    return changed ? List.of(out) : List.of();
  }

  private static Target simplified(Target t) {
    TreeMap<String, String> labels = new TreeMap<>();
    for (Map.Entry<String, String> e : t.labels().entrySet()) {
      if (!e.getKey().startsWith(Target.META_PREFIX)) {
        labels.put(e.getKey(), e.getValue());
      }
    }
    t.node().ifPresent(n -> labels.put("__meta_kubernetes_pod_node_name", n));
    return Target.of(t.job(), t.address(), labels);
  }

  /** Adds or replaces collectors by name. */
  static final class AddCollectors extends Step {
    final List<Collector> collectors;

    AddCollectors(List<Collector> collectors) {
      this.collectors = List.copyOf(collectors);
    }

    @Override
    Kind kind() {
      return Kind.COLLECTORS;
    }

    @Override
    Inputs apply(Inputs in) {
      TreeMap<String, Collector> next = new TreeMap<>(in.declaredByName());
      for (Collector c : collectors) {
        next.put(c.name(), c);
      }
      return in.withDeclared(next);
    }

    @Override
    List<Step> shrinks() {
      List<Step> out = new ArrayList<>();
      for (List<Collector> l : sublists(collectors)) {
        out.add(new AddCollectors(l));
      }
      return out;
    }

    @Override
    String toJava(String indent) {
      return JavaCode.call(indent, "addCollectors", JavaCode.collectors(collectors));
    }
  }

  /** Removes collectors by name. */
  static final class RemoveCollectors extends Step {
    final List<String> names;

    RemoveCollectors(List<String> names) {
      this.names = List.copyOf(names);
    }

    @Override
    Kind kind() {
      return Kind.COLLECTORS;
    }

    @Override
    Inputs apply(Inputs in) {
      TreeMap<String, Collector> next = new TreeMap<>(in.declaredByName());
      for (String n : names) {
        next.remove(n);
      }
      return in.withDeclared(next);
    }

    @Override
    List<Step> shrinks() {
      List<Step> out = new ArrayList<>();
      for (List<String> l : sublists(names)) {
        out.add(new RemoveCollectors(l));
      }
      return out;
    }

    @Override
    String toJava(String indent) {
      return JavaCode.call(indent, "removeCollectors", JavaCode.strings(names));
    }
  }

  /** One call that removes a collector and adds another: a rolling update's replacement. */
  static final class ReplaceCollector extends Step {
    final String old;
    final Collector replacement;

    ReplaceCollector(String old, Collector replacement) {
      this.old = Objects.requireNonNull(old);
      this.replacement = Objects.requireNonNull(replacement);
    }

    @Override
    Kind kind() {
      return Kind.COLLECTORS;
    }

    @Override
    Inputs apply(Inputs in) {
      TreeMap<String, Collector> next = new TreeMap<>(in.declaredByName());
      next.remove(old);
      next.put(replacement.name(), replacement);
      return in.withDeclared(next);
    }

    @Override
    List<Step> shrinks() {
      return List.of(new RemoveCollectors(List.of(old)), new AddCollectors(List.of(replacement)));
    }

    @Override
    String toJava(String indent) {
      return JavaCode.call(indent, "replaceCollector",
          List.of(JavaCode.string(old), JavaCode.collector(replacement)));
    }
  }

  /** A known collector re-reported on another node (or with none). */
  static final class MoveCollector extends Step {
    final String name;
    final String node;

    MoveCollector(String name, String node) {
      this.name = Objects.requireNonNull(name);
      this.node = node;
    }

    @Override
    Kind kind() {
      return Kind.COLLECTORS;
    }

    @Override
    Inputs apply(Inputs in) {
      if (!in.declaredByName().containsKey(name)) {
        return in;
      }
      TreeMap<String, Collector> next = new TreeMap<>(in.declaredByName());
      next.put(name, Collector.of(name, node));
      return in.withDeclared(next);
    }

    @Override
    String toJava(String indent) {
      return JavaCode.call(indent, "moveCollector",
          List.of(JavaCode.string(name), node == null ? "null" : JavaCode.string(node)));
    }
  }

  /** Replaces the whole collector set; empty is a blip. */
  static final class SetCollectors extends Step {
    final List<Collector> collectors;

    SetCollectors(List<Collector> collectors) {
      this.collectors = List.copyOf(collectors);
    }

    @Override
    Kind kind() {
      return Kind.COLLECTORS;
    }

    @Override
    Inputs apply(Inputs in) {
      TreeMap<String, Collector> next = new TreeMap<>();
      for (Collector c : collectors) {
        next.put(c.name(), c);
      }
      return in.withDeclared(next);
    }

    @Override
    List<Step> shrinks() {
      List<Step> out = new ArrayList<>();
      for (List<Collector> l : sublists(collectors)) {
        out.add(new SetCollectors(l));
      }
      return out;
    }

    @Override
    String toJava(String indent) {
      if (collectors.isEmpty()) {
        return indent + ".emptyCollectors()";
      }
      return JavaCode.call(indent, "setCollectors", JavaCode.collectors(collectors));
    }
  }

  /** Adds targets; a target equal to a known one replaces its instance (its labels win). */
  static final class AddTargets extends Step {
    final List<Target> targets;

    AddTargets(List<Target> targets) {
      this.targets = List.copyOf(targets);
    }

    @Override
    Kind kind() {
      return Kind.TARGETS;
    }

    @Override
    Inputs apply(Inputs in) {
      LinkedHashMap<Target, Target> next = in.targetMap();
      for (Target t : targets) {
        next.put(t, t);
      }
      return in.withTargets(next);
    }

    @Override
    List<Step> shrinks() {
      return targetShrinks(targets, AddTargets::new);
    }

    @Override
    List<Target> targets() {
      return targets;
    }

    @Override
    Step mapTargets(UnaryOperator<Target> f) {
      return new AddTargets(map(targets, f));
    }

    @Override
    String toJava(String indent) {
      return JavaCode.call(indent, "addTargets", JavaCode.targets(targets));
    }
  }

  /** Removes targets by identity. */
  static final class RemoveTargets extends Step {
    final List<Target> targets;

    RemoveTargets(List<Target> targets) {
      this.targets = List.copyOf(targets);
    }

    @Override
    Kind kind() {
      return Kind.TARGETS;
    }

    @Override
    Inputs apply(Inputs in) {
      LinkedHashMap<Target, Target> next = in.targetMap();
      for (Target t : targets) {
        next.remove(t);
      }
      return in.withTargets(next);
    }

    @Override
    List<Step> shrinks() {
      return targetShrinks(targets, RemoveTargets::new);
    }

    @Override
    List<Target> targets() {
      return targets;
    }

    @Override
    Step mapTargets(UnaryOperator<Target> f) {
      return new RemoveTargets(map(targets, f));
    }

    @Override
    String toJava(String indent) {
      return JavaCode.call(indent, "removeTargets", JavaCode.targets(targets));
    }
  }

  /** New labels for known targets: same identity, other {@code __meta_*} labels. */
  static final class RelabelTargets extends Step {
    final List<Target> targets;

    RelabelTargets(List<Target> targets) {
      this.targets = List.copyOf(targets);
    }

    @Override
    Kind kind() {
      return Kind.TARGETS;
    }

    @Override
    Inputs apply(Inputs in) {
      LinkedHashMap<Target, Target> next = in.targetMap();
      for (Target t : targets) {
        next.replace(t, t);
      }
      return in.withTargets(next);
    }

    @Override
    List<Step> shrinks() {
      return targetShrinks(targets, RelabelTargets::new);
    }

    @Override
    List<Target> targets() {
      return targets;
    }

    @Override
    Step mapTargets(UnaryOperator<Target> f) {
      return new RelabelTargets(map(targets, f));
    }

    @Override
    String toJava(String indent) {
      return JavaCode.call(indent, "relabelTargets", JavaCode.targets(targets));
    }
  }

  /** Replaces the whole target set. */
  static final class SetTargets extends Step {
    final List<Target> targets;

    SetTargets(List<Target> targets) {
      this.targets = List.copyOf(targets);
    }

    @Override
    Kind kind() {
      return Kind.TARGETS;
    }

    @Override
    Inputs apply(Inputs in) {
      LinkedHashMap<Target, Target> next = new LinkedHashMap<>();
      for (Target t : targets) {
        next.put(t, t);
      }
      return in.withTargets(next);
    }

    @Override
    List<Step> shrinks() {
      return targetShrinks(targets, SetTargets::new);
    }

    @Override
    List<Target> targets() {
      return targets;
    }

    @Override
    Step mapTargets(UnaryOperator<Target> f) {
      return new SetTargets(map(targets, f));
    }

    @Override
    String toJava(String indent) {
      return JavaCode.call(indent, "setTargets", JavaCode.targets(targets));
    }
  }

  /**
   * Re-sends the current targets with stale copies of some of them first: duplicates by identity
   * in one call, which must collapse to the last (current) copy. The model does not change.
   */
  static final class SendDuplicates extends Step {
    final List<Target> stale;

    SendDuplicates(List<Target> stale) {
      this.stale = List.copyOf(stale);
    }

    @Override
    Kind kind() {
      return Kind.TARGETS;
    }

    @Override
    Inputs apply(Inputs in) {
      return in;
    }

    @Override
    List<Target> staleCopies() {
      return stale;
    }

    @Override
    List<Step> shrinks() {
      return targetShrinks(stale, SendDuplicates::new);
    }

    @Override
    List<Target> targets() {
      return stale;
    }

    @Override
    Step mapTargets(UnaryOperator<Target> f) {
      return new SendDuplicates(map(stale, f));
    }

    @Override
    String toJava(String indent) {
      return JavaCode.call(indent, "sendDuplicates", JavaCode.targets(stale));
    }
  }
}
