package dev.apportion.bench.sim;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.CombinedDomainCategoryPlot;
import org.jfree.chart.plot.Plot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** Draws the simulator's charts as PNG files, with JFreeChart. */
final class Charts {
  private static final Color[] PALETTE = {
    new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c), new Color(0xd62728),
    new Color(0x9467bd), new Color(0x8c564b),
  };

  private Charts() {}

  /**
   * Writes {@code distribution.png} (targets per collector after the initial placement, one line
   * per strategy, collectors ranked busiest first), {@code cost-distribution.png} (the same for
   * cost relative to capacity) and {@code moved.png} (targets moved against
   * the minimum, one panel per scenario that changes the cluster).
   *
   * @return the files written
   */
  static List<Path> write(Path dir, List<Result> results) throws IOException {
    Files.createDirectories(dir);
    List<Path> written = new ArrayList<>();
    JFreeChart distribution = distribution(results);
    if (distribution != null) {
      Path file = dir.resolve("distribution.png");
      ChartUtils.saveChartAsPNG(file.toFile(), distribution, 900, 520);
      written.add(file);
    }
    JFreeChart cost = costDistribution(results);
    if (cost != null) {
      Path file = dir.resolve("cost-distribution.png");
      ChartUtils.saveChartAsPNG(file.toFile(), cost, 900, 520);
      written.add(file);
    }
    JFreeChart moved = moved(results);
    if (moved != null) {
      Path file = dir.resolve("moved.png");
      ChartUtils.saveChartAsPNG(file.toFile(), moved, 900, 220 * countChanging(results) + 120);
      written.add(file);
    }
    return written;
  }

  private static JFreeChart distribution(List<Result> results) {
    XYSeriesCollection data = new XYSeriesCollection();
    for (Result r : results) {
      if (r.scenario() != ClusterScenario.INITIAL) {
        continue;
      }
      XYSeries s = new XYSeries(r.strategy());
      for (int i = 0; i < r.loads().length; i++) {
        s.add(i + 1, r.loads()[i]);
      }
      data.addSeries(s);
    }
    if (data.getSeriesCount() == 0) {
      return null;
    }
    NumberAxis x = new NumberAxis("collectors, busiest first");
    x.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
    NumberAxis y = new NumberAxis("targets per collector");
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
    for (int i = 0; i < data.getSeriesCount(); i++) {
      renderer.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
      renderer.setSeriesStroke(i, new BasicStroke(2f));
    }
    XYPlot plot = new XYPlot(data, x, y, renderer);
    style(plot);
    JFreeChart chart = new JFreeChart("Targets per collector after the initial placement",
        JFreeChart.DEFAULT_TITLE_FONT, plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    return chart;
  }

  /** Like {@link #distribution}, for each collector's cost relative to its capacity share. */
  private static JFreeChart costDistribution(List<Result> results) {
    XYSeriesCollection data = new XYSeriesCollection();
    for (Result r : results) {
      if (r.scenario() != ClusterScenario.INITIAL || r.costShares().length == 0) {
        continue;
      }
      XYSeries s = new XYSeries(r.strategy());
      for (int i = 0; i < r.costShares().length; i++) {
        s.add(i + 1, r.costShares()[i]);
      }
      data.addSeries(s);
    }
    if (data.getSeriesCount() == 0) {
      return null;
    }
    NumberAxis x = new NumberAxis("collectors, busiest first");
    x.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
    NumberAxis y = new NumberAxis("cost / capacity, over the mean (1 = its share)");
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
    for (int i = 0; i < data.getSeriesCount(); i++) {
      renderer.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
      renderer.setSeriesStroke(i, new BasicStroke(2f));
    }
    XYPlot plot = new XYPlot(data, x, y, renderer);
    style(plot);
    JFreeChart chart = new JFreeChart("Cost per collector (relative to capacity) after the "
        + "initial placement", JFreeChart.DEFAULT_TITLE_FONT, plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    return chart;
  }

  private static int countChanging(List<Result> results) {
    return (int) results.stream().map(Result::scenario).filter(s -> s != ClusterScenario.INITIAL)
        .distinct().count();
  }

  private static JFreeChart moved(List<Result> results) {
    CombinedDomainCategoryPlot combined = new CombinedDomainCategoryPlot(new CategoryAxis());
    ClusterScenario current = null;
    DefaultCategoryDataset data = null;
    CategoryPlot first = null;
    for (Result r : results) {
      if (r.scenario() == ClusterScenario.INITIAL) {
        continue;
      }
      if (r.scenario() != current) {
        if (data != null) {
          CategoryPlot p = panel(current, data);
          first = first == null ? p : first;
          combined.add(p);
        }
        current = r.scenario();
        data = new DefaultCategoryDataset();
      }
      data.addValue(r.moved(), "moved", r.strategy());
      data.addValue(r.minimumMoved(), "minimum", r.strategy());
    }
    if (data == null) {
      return null;
    }
    CategoryPlot last = panel(current, data);
    first = first == null ? last : first;
    combined.add(last);
    combined.setOrientation(PlotOrientation.VERTICAL);
    // Each panel has the same two series; one legend entry each, not one per panel.
    combined.setFixedLegendItems(first.getLegendItems());
    JFreeChart chart = new JFreeChart("Targets moved, against the minimum",
        JFreeChart.DEFAULT_TITLE_FONT, combined, true);
    chart.setBackgroundPaint(Color.WHITE);
    return chart;
  }

  private static CategoryPlot panel(ClusterScenario scenario, DefaultCategoryDataset data) {
    BarRenderer renderer = new BarRenderer();
    renderer.setBarPainter(new StandardBarPainter());
    renderer.setShadowVisible(false);
    renderer.setSeriesPaint(0, PALETTE[0]);
    renderer.setSeriesPaint(1, Color.GRAY);
    renderer.setDefaultItemLabelsVisible(true);
    renderer.setDefaultItemLabelGenerator(
        new StandardCategoryItemLabelGenerator());
    NumberAxis y = new NumberAxis(scenario.title());
    y.setUpperMargin(0.2);
    CategoryPlot plot = new CategoryPlot(data, null, y, renderer);
    style(plot);
    return plot;
  }

  private static void style(Plot plot) {
    plot.setBackgroundPaint(Color.WHITE);
    if (plot instanceof XYPlot xy) {
      xy.setDomainGridlinePaint(Color.LIGHT_GRAY);
      xy.setRangeGridlinePaint(Color.LIGHT_GRAY);
    } else if (plot instanceof CategoryPlot cp) {
      cp.setRangeGridlinePaint(Color.LIGHT_GRAY);
    }
  }
}
