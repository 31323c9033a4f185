package io.gpusync.examples;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Writes the demo's charts as PNGs with JFreeChart, headless: latency CDFs, and measures against in-flight requests. */
final class LatencyPlot {
    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c)};
    private LatencyPlot() {
    }

    /**
     * Plots the CDF of each histogram on one chart.
     *
     * @param unitNanos how many nanoseconds one recorded unit is (1 for ns, 1000 for µs), per series
     */
    static void write(Path file, String title, String[] names, Histogram[] histograms, long[] unitNanos) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYSeriesCollection data = new XYSeriesCollection();
        for (int i = 0; i < histograms.length; i++) {
            Histogram h = histograms[i];
            if (h.getTotalCount() == 0) {
                continue;
            }
            XYSeries s = new XYSeries(names[i], true, true);
            for (HistogramIterationValue v : h.percentiles(20)) {
                double ms = v.getValueIteratedTo() * unitNanos[i] / 1e6;
                if (ms > 0) {
                    s.addOrUpdate(ms, v.getPercentileLevelIteratedTo() / 100.0);
                }
            }
            data.addSeries(s);
        }
        LogAxis x = new LogAxis("latency (ms, log scale)");
        x.setSmallestValue(1e-3);
        x.setTickUnit(new NumberTickUnit(1.0)); // one tick per decade
        x.setNumberFormatOverride(new java.text.DecimalFormat("0.###"));
        NumberAxis y = new NumberAxis("fraction of requests ≤ latency");
        y.setRange(0, 1.0);
        XYPlot plot = new XYPlot(data, x, y, renderer(data.getSeriesCount(), false));
        save(file, new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, style(plot), true), 560);
    }

    /**
     * Two charts over one log axis of requests in flight, stacked: {@code top} and {@code bottom} each map a series
     * name (one line per name, the same colour in both) to its points {@code {inFlight, value}}; the bottom one has a
     * log value axis.
     */
    static void againstInFlight(Path file, String title, Map<String, List<double[]>> top, String topLabel,
                                Map<String, List<double[]>> bottom, String bottomLabel) throws IOException {
        System.setProperty("java.awt.headless", "true");
        LogAxis x = new LogAxis("requests in flight (log)");
        x.setBase(2);
        x.setTickUnit(new NumberTickUnit(1.0)); // one tick per doubling
        x.setNumberFormatOverride(new java.text.DecimalFormat("#,##0"));
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(x);
        NumberAxis topAxis = new NumberAxis(topLabel);
        topAxis.setNumberFormatOverride(new java.text.DecimalFormat("#,##0"));
        LogAxis bottomAxis = new LogAxis(bottomLabel);
        bottomAxis.setTickUnit(new NumberTickUnit(1.0)); // one tick per decade
        bottomAxis.setNumberFormatOverride(new java.text.DecimalFormat("#,##0.###"));
        XYSeriesCollection topData = series(top);
        XYSeriesCollection bottomData = series(bottom);
        plot.add(style(new XYPlot(topData, null, topAxis, renderer(topData.getSeriesCount(), true))), 1);
        XYPlot lower = style(new XYPlot(bottomData, null, bottomAxis, renderer(bottomData.getSeriesCount(), true)));
        lower.setFixedLegendItems(new org.jfree.chart.LegendItemCollection()); // the top chart's legend names them
        plot.add(lower, 1);
        save(file, new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, style(plot), true), 760);
    }

    private static XYSeriesCollection series(Map<String, List<double[]>> lines) {
        XYSeriesCollection data = new XYSeriesCollection();
        lines.forEach((name, points) -> {
            XYSeries s = new XYSeries(name, true, true);
            points.forEach(p -> s.addOrUpdate(p[0], p[1]));
            data.addSeries(s);
        });
        return data;
    }

    private static XYLineAndShapeRenderer renderer(int series, boolean shapes) {
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, shapes);
        r.setAutoPopulateSeriesShape(false); // one shape for every series, in both charts
        r.setDefaultShape(new java.awt.geom.Ellipse2D.Double(-3.5, -3.5, 7, 7));
        for (int i = 0; i < series; i++) {
            r.setSeriesPaint(i, COLORS[i % COLORS.length]);
            r.setSeriesStroke(i, new BasicStroke(2f));
        }
        return r;
    }

    private static <P extends XYPlot> P style(P plot) {
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        return plot;
    }

    private static void save(Path file, JFreeChart chart, int height) throws IOException {
        chart.setBackgroundPaint(Color.WHITE);
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        ChartUtils.saveChartAsPNG(file.toFile(), chart, 1000, height);
    }
}
