package io.gpusync.benchmarks.harness;

import org.HdrHistogram.Histogram;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/** The PNG plots (jfreechart): latency CDFs per approach, threads and throughput against N. */
final class Plots {
    private static final int W = 960;
    private static final int H = 600;
    /** Where a value of 0 is drawn on a log axis (a path that uses no thread at all). */
    private static final double ZERO_ON_LOG = 0.5;

    private Plots() {
    }

    static List<Path> write(Path dir, List<CellResult> results, Options o) throws IOException {
        List<Path> out = new ArrayList<>();
        Set<String> subjects = new LinkedHashSet<>();
        results.stream().filter(r -> r.tag.isEmpty()).forEach(r -> subjects.add(r.subject));
        for (String s : subjects) {
            for (int n : o.ns) {
                XYSeriesCollection ds = new XYSeriesCollection();
                for (CellResult r : results) {
                    if (r.tag.isEmpty() && r.subject.equals(s) && r.n == n && r.latency.getTotalCount() > 0) {
                        ds.addSeries(cdf("(" + r.approach + ") " + label(r.approach), r.latency));
                    }
                }
                if (ds.getSeriesCount() > 0) {
                    out.add(save(dir.resolve("latency-cdf-" + file(s) + "-n" + n + ".png"), cdfChart(
                            "Wake latency (signal → onComplete), " + s + ", " + String.format("%,d", n)
                                    + " other waits pending", ds)));
                }
            }
            out.add(save(dir.resolve("threads-vs-n-" + file(s) + ".png"), vsN(results, s, "Threads owned while N waits are pending, " + s,
                    "threads (log)", r -> r.threads, o)));
            out.add(save(dir.resolve("throughput-vs-n-" + file(s) + ".png"), vsN(results, s,
                    "Completions per second (burst of N signals), " + s, "completions / s (log)", r -> r.burstPerSec, o)));
        }
        XYSeriesCollection paths = new XYSeriesCollection();
        for (CellResult r : results) {
            if (r.tag.equals("path") && r.latency.getTotalCount() > 0) {
                paths.addSeries(cdf(r.subject + " " + switch (r.approach) {
                    case "d" -> "gpusync (d)";
                    case "e" -> "gpusync tuned (e)";
                    default -> "raw thread";
                }, r.latency));
            }
        }
        if (paths.getSeriesCount() > 0) {
            out.add(save(dir.resolve("latency-cdf-paths.png"),
                    cdfChart("Wake latency per gpusync path vs a raw thread blocked in the same wait", paths)));
        }
        return out;
    }

    private static String label(String key) {
        return switch (key) {
            case "a" -> "boundedElastic";
            case "b" -> "seed waiter thread";
            case "c" -> "CUDA.jl spin + 4 threads";
            case "d" -> "gpusync default";
            case "e" -> "gpusync tuned";
            default -> key;
        };
    }

    static String file(String subject) {
        return subject.replaceAll("[^A-Za-z0-9]+", "-");
    }

    private static XYSeries cdf(String name, Histogram h) {
        XYSeries s = new XYSeries(name, true, true);
        double[] ps = new double[200];
        for (int i = 0; i < ps.length; i++) {
            ps[i] = 100.0 * (1 - Math.pow(10, -4.0 * i / (ps.length - 1))); // 0 … 99.99, denser in the tail
        }
        for (double p : ps) {
            double us = Math.max(0.01, h.getValueAtPercentile(p) / 1_000.0);
            s.add(us, p / 100.0);
        }
        s.add(Math.max(0.01, h.getMaxValue() / 1_000.0), 1.0);
        return s;
    }

    private static JFreeChart cdfChart(String title, XYSeriesCollection ds) {
        JFreeChart chart = ChartFactory.createXYLineChart(title, "latency µs (log)", "fraction of waits woken",
                ds, PlotOrientation.VERTICAL, true, false, false);
        XYPlot plot = chart.getXYPlot();
        LogAxis x = new LogAxis("latency µs (log)");
        x.setSmallestValue(0.01);
        x.setNumberFormatOverride(new DecimalFormat("#,##0.##"));
        plot.setDomainAxis(x);
        ((NumberAxis) plot.getRangeAxis()).setRange(0, 1.0);
        style(plot);
        return chart;
    }

    private static JFreeChart vsN(List<CellResult> results, String subject, String title, String yLabel,
                                  ToDoubleFunction<CellResult> y, Options o) {
        XYSeriesCollection ds = new XYSeriesCollection();
        for (String a : o.approaches) {
            XYSeries s = new XYSeries("(" + a + ") " + label(a));
            for (CellResult r : results) {
                double v = y.applyAsDouble(r);
                if (r.tag.isEmpty() && r.subject.equals(subject) && r.approach.equals(a) && !r.skipped && v >= 0
                        && !Double.isNaN(v)) {
                    s.add(Math.max(1, r.n), Math.max(ZERO_ON_LOG, v)); // 0 (no thread at all) drawn at 0.5
                }
            }
            if (s.getItemCount() > 0) {
                ds.addSeries(s);
            }
        }
        JFreeChart chart = ChartFactory.createXYLineChart(title, "N pending waits (log)", yLabel, ds,
                PlotOrientation.VERTICAL, true, false, false);
        chart.addSubtitle(new org.jfree.chart.title.TextTitle("a value of 0 is drawn at 0.5 (log axis)"));
        XYPlot plot = chart.getXYPlot();
        LogAxis x = new LogAxis("N pending waits (log)");
        x.setNumberFormatOverride(new DecimalFormat("#,##0"));
        plot.setDomainAxis(x);
        LogAxis yAxis = new LogAxis(yLabel);
        yAxis.setSmallestValue(0.4);
        yAxis.setNumberFormatOverride(new DecimalFormat("#,##0.#"));
        plot.setRangeAxis(yAxis);
        style(plot);
        return chart;
    }

    private static void style(XYPlot plot) {
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < plot.getSeriesCount(); i++) {
            renderer.setSeriesStroke(i, new BasicStroke(2f));
            renderer.setSeriesShapesVisible(i, false);
        }
        plot.setRenderer(renderer);
    }

    private static Path save(Path file, JFreeChart chart) throws IOException {
        ChartUtils.saveChartAsPNG(file.toFile(), chart, W, H);
        return file;
    }
}
