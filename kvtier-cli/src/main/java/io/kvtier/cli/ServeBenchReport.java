package io.kvtier.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/** The table and the chart of {@code bench serve}: one column (or bar series) per side. */
final class ServeBenchReport {

    /**
     * One server's figures.
     *
     * @param metricsBefore the server's {@code /metrics} text before the run (empty if it has none)
     * @param metricsAfter the same after the run: the table's server rows are the differences, so
     *     a server that served other requests before shows this run's counts only
     */
    record Side(String name, ServeLoad.Result result, String metricsBefore, String metricsAfter) {
    }

    private static final double[] PERCENTILES = {50, 90, 99};

    private ServeBenchReport() {
    }

    static void print(PrintStream out, List<Side> sides) {
        List<String[]> rows = new ArrayList<>();
        rows.add(header(sides));
        latencyRows(rows, sides, "TTFT", ServeLoad.Result::ttft);
        latencyRows(rows, sides, "inter-token", ServeLoad.Result::interToken);
        latencyRows(rows, sides, "end-to-end", ServeLoad.Result::e2e);
        rows.add(row(sides, "requests", s -> String.valueOf(s.result().requests()), null));
        rows.add(row(sides, "wall time (s)", s -> fmt(s.result().wallSeconds()), s -> s.result().wallSeconds()));
        rows.add(row(sides, "generated tokens/s", s -> fmt(s.result().generatedPerSecond()), s -> s.result().generatedPerSecond()));
        rows.add(row(sides, "prompt tokens", s -> String.valueOf(s.result().promptTokens()), null));
        rows.add(row(sides, "cached prompt tokens", s -> s.result().cachedTokens() + String.format(Locale.ROOT, " (%.1f%%)",
                100 * s.result().cachedShare()), null));
        rows.add(row(sides, "preemptions (server)", s -> metricDelta(s, "vllm:num_preemptions_total"), null));
        rows.add(row(sides, "host->device bytes (server)", s -> metricDelta(s,
                "vllm:kv_offload_total_bytes_total", "transfer_type=\"CPU_to_GPU\""), null));
        int[] width = new int[rows.getFirst().length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                sb.append(i == 0 ? String.format("%-" + width[i] + "s", r[i]) : String.format("  %" + width[i] + "s", r[i]));
            }
            out.println(sb);
        }
    }

    private static String[] header(List<Side> sides) {
        List<String> h = new ArrayList<>(List.of(""));
        sides.forEach(s -> h.add(s.name()));
        if (sides.size() == 2) {
            h.add(sides.get(1).name().replace("host tier ", "") + " vs " + sides.get(0).name().replace("host tier ", ""));
        }
        return h.toArray(String[]::new);
    }

    private static void latencyRows(List<String[]> rows, List<Side> sides, String what,
                                    java.util.function.Function<ServeLoad.Result, Histogram> h) {
        for (double p : PERCENTILES) {
            rows.add(row(sides, String.format(Locale.ROOT, "%s p%.0f (ms)", what, p),
                    s -> fmt(ms(h.apply(s.result()), p)), s -> ms(h.apply(s.result()), p)));
        }
    }

    /** A row; with two sides and a numeric value, a last column comparing the second side's value to the first's ({@link #ratio}). */
    private static String[] row(List<Side> sides, String label, java.util.function.Function<Side, String> text,
                                java.util.function.ToDoubleFunction<Side> value) {
        List<String> r = new ArrayList<>(List.of(label));
        sides.forEach(s -> r.add(text.apply(s)));
        if (sides.size() == 2) {
            r.add(value == null ? "" : ratio(value.applyAsDouble(sides.get(0)), value.applyAsDouble(sides.get(1))));
        }
        return r.toArray(String[]::new);
    }

    /**
     * How {@code second} compares to {@code first}, worded so that every row reads the same way
     * whichever direction is better: "3.02x lower", "1.10x higher", "equal"; "-" when either is
     * zero or not a number (a ratio of values shown as 0 would mean nothing).
     */
    static String ratio(double first, double second) {
        if (!(first > 0) || !(second > 0) || Double.isInfinite(first) || Double.isInfinite(second)) {
            return "-";
        }
        if (first == second) {
            return "equal";
        }
        return first > second ? String.format(Locale.ROOT, "%.2fx lower", first / second)
                : String.format(Locale.ROOT, "%.2fx higher", second / first);
    }

    static double ms(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile) / 1000.0;
    }

    /** Three significant digits below 100 (a latency under 0.1 ms does not show as 0.0), whole numbers above. */
    static String fmt(double v) {
        if (v == 0) {
            return "0";
        }
        double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3g", v);
    }

    /** How much a counter grew over the run on {@code side}'s server ({@link #metricSum}), or "-" when absent after it. */
    static String metricDelta(Side side, String name, String... labels) {
        double after = metricSum(side.metricsAfter(), name, labels);
        if (Double.isNaN(after)) {
            return "-";
        }
        double before = metricSum(side.metricsBefore(), name, labels);
        return String.format(Locale.ROOT, "%.0f", Double.isNaN(before) ? after : after - before);
    }

    /** The sum of a metric's samples whose line contains every {@code labels} text, or NaN when absent. */
    static double metricSum(String metrics, String name, String... labels) {
        double sum = 0;
        boolean found = false;
        for (String line : metrics.split("\n")) {
            if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) {
                continue;
            }
            boolean all = true;
            for (String l : labels) {
                all &= line.contains(l);
            }
            if (all) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                found = true;
            }
        }
        return found ? sum : Double.NaN;
    }

    /**
     * Three bar charts side by side (TTFT, inter-token, end-to-end), each with p50, p90 and p99 per
     * side in milliseconds, in one PNG.
     */
    static void chart(Path png, List<Side> sides, ServeLoad load) throws IOException {
        List<java.awt.image.BufferedImage> panels = new ArrayList<>();
        List<String> titles = List.of("TTFT", "inter-token latency", "end-to-end latency");
        for (int i = 0; i < titles.size(); i++) {
            CategoryChart chart = new CategoryChartBuilder().width(420).height(440)
                    // Short enough for a 420-pixel panel (the longer form was cut off).
                    .title(String.format(Locale.ROOT, "%s, %d x %s", titles.get(i), load.conversations(),
                            io.kvtier.text.Plural.count(load.turns(), "turn")))
                    .xAxisTitle("percentile").yAxisTitle("milliseconds").build();
            chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW).setChartBackgroundColor(java.awt.Color.WHITE);
            for (Side s : sides) {
                Histogram h = List.of(s.result().ttft(), s.result().interToken(), s.result().e2e()).get(i);
                List<Double> v = new ArrayList<>();
                for (double p : PERCENTILES) {
                    v.add(ms(h, p));
                }
                chart.addSeries(s.name(), List.of("p50", "p90", "p99"), v);
            }
            panels.add(BitmapEncoder.getBufferedImage(chart));
        }
        java.awt.image.BufferedImage all = new java.awt.image.BufferedImage(panels.size() * 420, 440,
                java.awt.image.BufferedImage.TYPE_INT_RGB);
        java.awt.Graphics2D g = all.createGraphics();
        for (int i = 0; i < panels.size(); i++) {
            g.drawImage(panels.get(i), i * 420, 0, null);
        }
        g.dispose();
        Path parent = png.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try (OutputStream out = Files.newOutputStream(png)) {
            javax.imageio.ImageIO.write(all, "png", out);
        }
    }
}
