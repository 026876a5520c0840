package dev.apportion.bench;

import dev.apportion.bench.footprint.FootprintCommand;
import dev.apportion.bench.movement.MovementCommand;
import dev.apportion.bench.refreshheap.RefreshHeapCommand;
import dev.apportion.bench.sim.SimulateCommand;
import java.util.Arrays;

/**
 * The entry point of {@code apportion.jar}.
 *
 * <ul>
 *   <li>{@code java -jar apportion.jar simulate [options]} runs the simulator
 *       ({@code simulate --help} lists the options);
 *   <li>{@code java -jar apportion.jar footprint [options]} measures the heap an allocator and a
 *       target retain, per target ({@code footprint --help} lists the options);
 *   <li>{@code java -jar apportion.jar movement [options]} measures balance against movement
 *       per strategy and load factor ({@code movement --help} lists the options);
 *   <li>{@code java -jar apportion.jar refresh-heap [options]} measures the heap growth during a
 *       refresh of one HTTP SD source by {@code allocation-server} ({@code refresh-heap --help}
 *       lists the options);
 *   <li>{@code java -jar apportion.jar bench [JMH options]}, or any other arguments, runs the JMH
 *       benchmarks, exactly as JMH's own {@code Main} would ({@code -h} lists its options,
 *       {@code -l} the benchmarks).
 * </ul>
 */
public final class Main {
  private Main() {}

  /**
   * Dispatches to the simulator, the footprint, movement or refresh-heap measurement, or JMH.
   *
   * @param args the command line
   * @throws Exception when JMH fails to start
   */
  public static void main(String[] args) throws Exception {
    System.setProperty("java.awt.headless", "true");
    if (args.length > 0 && args[0].equals("simulate")) {
      System.exit(SimulateCommand.run(Arrays.copyOfRange(args, 1, args.length), System.out,
          System.err));
    }
    if (args.length > 0 && args[0].equals("footprint")) {
      System.exit(FootprintCommand.run(Arrays.copyOfRange(args, 1, args.length), System.out,
          System.err));
    }
    if (args.length > 0 && args[0].equals("refresh-heap")) {
      System.exit(RefreshHeapCommand.run(Arrays.copyOfRange(args, 1, args.length), System.out,
          System.err));
    }
    if (args.length > 0 && args[0].equals("movement")) {
      System.exit(MovementCommand.run(Arrays.copyOfRange(args, 1, args.length), System.out,
          System.err));
    }
    String[] jmh = args.length > 0 && args[0].equals("bench")
        ? Arrays.copyOfRange(args, 1, args.length) : args;
    org.openjdk.jmh.Main.main(jmh);
  }
}
