package io.gpusync.examples;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Writes latency CDFs (log time axis) as a PNG with JFreeChart, headless. */
final class LatencyPlot {
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
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, false);
        Color[] colors = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c)};
        for (int i = 0; i < data.getSeriesCount(); i++) {
            r.setSeriesPaint(i, colors[i % colors.length]);
            r.setSeriesStroke(i, new BasicStroke(2f));
        }
        XYPlot plot = new XYPlot(data, x, y, r);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        ChartUtils.saveChartAsPNG(file.toFile(), chart, 1000, 560);
    }
}
