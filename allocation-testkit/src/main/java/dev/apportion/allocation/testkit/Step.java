package dev.apportion.allocation.testkit;

import dev.apportion.allocation.Collector;
import dev.apportion.allocation.Target;
import java.util.ArrayList;
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
 *
 * <p>One record per {@link Scenario} builder method, in two families: a {@link CollectorStep}
 * ends in a {@code setCollectors} call, a {@link TargetStep} in a {@code setTargets} call. The
 * target steps differ only in what they do to the model; how they shrink, relabel and print is
 * written once, in {@link TargetStep}.
 */
sealed interface Step permits Step.CollectorStep, Step.TargetStep {

  /** This step's change to the model. */
  Inputs apply(Inputs in);

  /** Java source of the builder call that recreates this step, starting with a dot. */
  String toJava(String indent);

  /** Strictly smaller variants of this step, most aggressive first. */
  default List<Step> shrinks() {
    return List.of();
  }

  /** Extra stale copies to send before the current targets (duplicates), none by default. */
  default List<Target> staleCopies() {
    return List.of();
  }

  /** Every target this step names, in order; none for a collector step. */
  default List<Target> targets() {
    return List.of();
  }

  /**
   * This step with {@code f} applied to every target it names (the same step for a collector
   * step). The shrinker uses it to change a target's identity consistently in every step.
   */
  default Step mapTargets(UnaryOperator<Target> f) {
    return this;
  }

  /** A step whose call is {@code setCollectors} with the declared collectors. */
  sealed interface CollectorStep extends Step
      permits AddCollectors, RemoveCollectors, ReplaceCollector, MoveCollector, SetCollectors {}

  /**
   * A step over a list of targets whose call is {@code setTargets} with the known targets. It
   * shrinks to the same step over each smaller sublist of its targets, then over them with their
   * {@code __meta_*} labels but the node's dropped.
   */
  sealed interface TargetStep extends Step
      permits AddTargets, RemoveTargets, RelabelTargets, SetTargets, SendDuplicates {

    @Override
    List<Target> targets();

    /** The same kind of step over {@code targets}. */
    TargetStep with(List<Target> targets);

    /** The {@link Scenario} method that adds this kind of step. */
    String builderMethod();

    @Override
    default List<Step> shrinks() {
      List<Step> out = each(sublists(targets()), this::with);
      out.addAll(each(simplified(targets()), this::with));
      return out;
    }

    @Override
    default Step mapTargets(UnaryOperator<Target> f) {
      List<Target> out = new ArrayList<>(targets().size());
      for (Target t : targets()) {
        out.add(f.apply(t));
      }
      return with(out);
    }

    @Override
    default String toJava(String indent) {
      return JavaCode.call(indent, builderMethod(), JavaCode.targets(targets()));
    }
  }

  /**
   * Adds or replaces collectors by name.
   *
   * @param collectors the collectors, each replacing a declared one of its name
   */
  record AddCollectors(List<Collector> collectors) implements CollectorStep {
    public AddCollectors {
      collectors = List.copyOf(collectors);
    }

    @Override
    public Inputs apply(Inputs in) {
      return in.withDeclared(next -> {
        for (Collector c : collectors) {
          next.put(c.name(), c);
        }
      });
    }

    @Override
    public List<Step> shrinks() {
      return each(sublists(collectors), AddCollectors::new);
    }

    @Override
    public String toJava(String indent) {
      return JavaCode.call(indent, "addCollectors", JavaCode.collectors(collectors));
    }
  }

  /**
   * Removes collectors by name.
   *
   * @param names the names of the collectors to remove
   */
  record RemoveCollectors(List<String> names) implements CollectorStep {
    public RemoveCollectors {
      names = List.copyOf(names);
    }

    @Override
    public Inputs apply(Inputs in) {
      return in.withDeclared(next -> {
        for (String n : names) {
          next.remove(n);
        }
      });
    }

    @Override
    public List<Step> shrinks() {
      return each(sublists(names), RemoveCollectors::new);
    }

    @Override
    public String toJava(String indent) {
      return JavaCode.call(indent, "removeCollectors", JavaCode.strings(names));
    }
  }

  /**
   * One call that removes a collector and adds another: a rolling update's replacement.
   *
   * @param old the name of the collector to remove
   * @param replacement the collector to add
   */
  record ReplaceCollector(String old, Collector replacement) implements CollectorStep {
    public ReplaceCollector {
      Objects.requireNonNull(old);
      Objects.requireNonNull(replacement);
    }

    @Override
    public Inputs apply(Inputs in) {
      return in.withDeclared(next -> {
        next.remove(old);
        next.put(replacement.name(), replacement);
      });
    }

    @Override
    public List<Step> shrinks() {
      return List.of(new RemoveCollectors(List.of(old)), new AddCollectors(List.of(replacement)));
    }

    @Override
    public String toJava(String indent) {
      return JavaCode.call(indent, "replaceCollector",
          List.of(JavaCode.string(old), JavaCode.collector(replacement)));
    }
  }

  /**
   * A known collector re-reported on another node (or with none).
   *
   * @param name the collector's name
   * @param node its new node, or null for none
   */
  record MoveCollector(String name, String node) implements CollectorStep {
    public MoveCollector {
      Objects.requireNonNull(name);
    }

    @Override
    public Inputs apply(Inputs in) {
      if (!in.declaredByName().containsKey(name)) {
        return in;
      }
      // A move changes the node only: the collector keeps its capacity and labels.
      Collector old = in.declaredByName().get(name);
      Collector moved = Collector.of(name, node).withLabels(old.labels());
      return in.withDeclared(next -> next.put(name,
          old.capacity() == 1.0 ? moved : moved.withCapacity(old.capacity())));
    }

    @Override
    public String toJava(String indent) {
      return JavaCode.call(indent, "moveCollector",
          List.of(JavaCode.string(name), node == null ? "null" : JavaCode.string(node)));
    }
  }

  /**
   * Replaces the whole collector set; empty is a blip.
   *
   * @param collectors the new set
   */
  record SetCollectors(List<Collector> collectors) implements CollectorStep {
    public SetCollectors {
      collectors = List.copyOf(collectors);
    }

    @Override
    public Inputs apply(Inputs in) {
      return in.withDeclared(next -> {
        next.clear();
        for (Collector c : collectors) {
          next.put(c.name(), c);
        }
      });
    }

    @Override
    public List<Step> shrinks() {
      return each(sublists(collectors), SetCollectors::new);
    }

    @Override
    public String toJava(String indent) {
      if (collectors.isEmpty()) {
        return indent + ".emptyCollectors()";
      }
      return JavaCode.call(indent, "setCollectors", JavaCode.collectors(collectors));
    }
  }

  /**
   * Adds targets; a target equal to a known one replaces its instance (its labels win).
   *
   * @param targets the targets to add
   */
  record AddTargets(List<Target> targets) implements TargetStep {
    public AddTargets {
      targets = List.copyOf(targets);
    }

    @Override
    public Inputs apply(Inputs in) {
      return in.withTargets(next -> {
        for (Target t : targets) {
          next.put(t, t);
        }
      });
    }

    @Override
    public TargetStep with(List<Target> other) {
      return new AddTargets(other);
    }

    @Override
    public String builderMethod() {
      return "addTargets";
    }
  }

  /**
   * Removes targets by identity.
   *
   * @param targets the targets to remove
   */
  record RemoveTargets(List<Target> targets) implements TargetStep {
    public RemoveTargets {
      targets = List.copyOf(targets);
    }

    @Override
    public Inputs apply(Inputs in) {
      return in.withTargets(next -> {
        for (Target t : targets) {
          next.remove(t);
        }
      });
    }

    @Override
    public TargetStep with(List<Target> other) {
      return new RemoveTargets(other);
    }

    @Override
    public String builderMethod() {
      return "removeTargets";
    }
  }

  /**
   * New labels for known targets: same identity, other {@code __meta_*} labels.
   *
   * @param targets the relabeled targets; unknown ones are ignored
   */
  record RelabelTargets(List<Target> targets) implements TargetStep {
    public RelabelTargets {
      targets = List.copyOf(targets);
    }

    @Override
    public Inputs apply(Inputs in) {
      return in.withTargets(next -> {
        for (Target t : targets) {
          next.replace(t, t);
        }
      });
    }

    @Override
    public TargetStep with(List<Target> other) {
      return new RelabelTargets(other);
    }

    @Override
    public String builderMethod() {
      return "relabelTargets";
    }
  }

  /**
   * Replaces the whole target set.
   *
   * @param targets the new set
   */
  record SetTargets(List<Target> targets) implements TargetStep {
    public SetTargets {
      targets = List.copyOf(targets);
    }

    @Override
    public Inputs apply(Inputs in) {
      return in.withTargets(next -> {
        next.clear();
        for (Target t : targets) {
          next.put(t, t);
        }
      });
    }

    @Override
    public TargetStep with(List<Target> other) {
      return new SetTargets(other);
    }

    @Override
    public String builderMethod() {
      return "setTargets";
    }
  }

  /**
   * Re-sends the current targets with stale copies of some of them first: duplicates by identity
   * in one call, which must collapse to the last (current) copy. The model does not change.
   *
   * @param stale the stale copies; those of unknown targets are not sent
   */
  record SendDuplicates(List<Target> stale) implements TargetStep {
    public SendDuplicates {
      stale = List.copyOf(stale);
    }

    @Override
    public Inputs apply(Inputs in) {
      return in;
    }

    @Override
    public List<Target> staleCopies() {
      return stale;
    }

    @Override
    public List<Target> targets() {
      return stale;
    }

    @Override
    public TargetStep with(List<Target> other) {
      return new SendDuplicates(other);
    }

    @Override
    public String builderMethod() {
      return "sendDuplicates";
    }
  }

  /** {@code step} over each of {@code lists}, in order. */
  private static <T> List<Step> each(List<List<T>> lists, Function<List<T>, Step> step) {
    List<Step> out = new ArrayList<>();
    for (List<T> l : lists) {
      out.add(step.apply(l));
    }
    return out;
  }

  /** Halves, then every one-element-removed sublist: the classic list shrink. */
  private static <T> List<List<T>> sublists(List<T> items) {
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
   * The same targets with every {@code __meta_*} label dropped except one that names the same
   * node: identity and node are kept, the report gets shorter. Empty when nothing would change.
   * (Identity labels are dropped by the shrinker across the whole scenario, see
   * {@link Shrinker}: dropping one here would change a target's identity in this step only.)
   */
  private static List<List<Target>> simplified(List<Target> targets) {
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
}
