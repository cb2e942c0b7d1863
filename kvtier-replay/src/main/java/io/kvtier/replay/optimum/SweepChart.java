package io.kvtier.replay.optimum;

import java.awt.BasicStroke;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.knowm.xchart.AnnotationText;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.Marker;
import org.knowm.xchart.style.markers.SeriesMarkers;
import org.knowm.xchart.style.Styler;

/**
 * PNG chart of token hit ratio against cache capacity, one line per series (policies, the
 * optimum, the ceiling), drawn with XChart. The x axis is logarithmic in tokens of capacity.
 * Rendering is off-screen (AWT images only), so it works on a headless machine. Each series has
 * its own marker and line pattern, later ones dashed, so lines that coincide (a policy on the
 * optimum, the optimum on the ceiling) still show each other through the gaps.
 */
public final class SweepChart {

    /** Width and height of the PNG, in pixels. */
    public static final int WIDTH = 960;
    public static final int HEIGHT = 600;

    private SweepChart() {
    }

    /**
     * Writes the chart to {@code png} (replaced if present; parent folders are created).
     *
     * @param png    file to write
     * @param title  chart title, e.g. the trace name
     * @param series in legend order (use a {@link java.util.LinkedHashMap}): name to
     *               {@code {capacitiesTokens, hitRatios}}, two arrays of equal length >= 1, with
     *               capacities > 0 (log axis) and ratios in [0, 1]. A constant such as the
     *               ceiling is drawn by giving it as a series with the same ratio at each capacity.
     * @throws IllegalArgumentException when a series has the wrong shape or values
     * @throws IOException              when the file cannot be written
     */
    public static void write(Path png, String title, Map<String, double[][]> series) throws IOException {
        write(png, title, "capacity (tokens, log scale)", series);
    }

    /** {@link #write(Path, String, Map)} with the x axis titled {@code xTitle}. */
    public static void write(Path png, String title, String xTitle, Map<String, double[][]> series) throws IOException {
        XYChart chart = chart(title, series);
        chart.setXAxisTitle(xTitle);
        Path parent = png.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try (OutputStream out = Files.newOutputStream(png)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }

    /** Markers, in series order (cycled). */
    private static final Marker[] MARKERS = {SeriesMarkers.CIRCLE, SeriesMarkers.SQUARE, SeriesMarkers.DIAMOND,
        SeriesMarkers.TRIANGLE_UP, SeriesMarkers.TRIANGLE_DOWN, SeriesMarkers.CROSS};

    /** Line patterns of the series after the first (which is solid), cycled. */
    private static final BasicStroke[] BROKEN_LINES = {SeriesLines.DASH_DASH, SeriesLines.DOT_DOT, SeriesLines.DASH_DOT};

    /** The chart of {@link #write}, not yet drawn. */
    static XYChart chart(String title, Map<String, double[][]> series) {
        if (series.isEmpty()) {
            throw new IllegalArgumentException("no series to draw");
        }
        double maxRatio = 0;
        for (Map.Entry<String, double[][]> e : series.entrySet()) {
            maxRatio = Math.max(maxRatio, check(e.getKey(), e.getValue()));
        }
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle("capacity (tokens, log scale)").yAxisTitle("token hit ratio").build();
        chart.getStyler().setXAxisLogarithmic(true)
                .setYAxisMin(0.0)
                // Headroom above the highest curve, on a tenth, so low-ratio traces stay readable.
                .setYAxisMax(Math.min(1.0, Math.ceil(maxRatio * 10 + 0.5) / 10))
                .setXAxisDecimalPattern("#,##0")
                .setYAxisDecimalPattern("0.00")
                .setLegendPosition(Styler.LegendPosition.InsideNW)
                .setChartBackgroundColor(java.awt.Color.WHITE);
        // The log axis labels only powers of ten: each capacity of the first series gets its own
        // label just above the axis, so a sweep of 250k and 1M says where 250k is.
        double[] caps = series.values().iterator().next()[0];
        double labelY = chart.getStyler().getYAxisMax() * 0.02;
        for (double cap : caps) {
            AnnotationText label = new AnnotationText(compact(cap), cap, labelY, false);
            chart.addAnnotation(label);
        }
        int i = 0;
        for (Map.Entry<String, double[][]> e : series.entrySet()) {
            XYSeries s = chart.addSeries(e.getKey(), e.getValue()[0], e.getValue()[1]);
            s.setMarker(MARKERS[i % MARKERS.length]);
            s.setLineStyle(i == 0 ? SeriesLines.SOLID : BROKEN_LINES[(i - 1) % BROKEN_LINES.length]);
            i++;
        }
        return chart;
    }

    /** A capacity as a short label: 250k, 1M, 1.5M, 900. */
    static String compact(double tokens) {
        if (tokens >= 1_000_000) {
            return new java.text.DecimalFormat("0.##", java.text.DecimalFormatSymbols.getInstance(java.util.Locale.ROOT))
                    .format(tokens / 1_000_000) + "M";
        }
        if (tokens >= 1_000) {
            return new java.text.DecimalFormat("0.##", java.text.DecimalFormatSymbols.getInstance(java.util.Locale.ROOT))
                    .format(tokens / 1_000) + "k";
        }
        return String.valueOf(Math.round(tokens));
    }

    /** Validates one series and returns its largest ratio. */
    private static double check(String name, double[][] xy) {
        if (xy == null || xy.length != 2 || xy[0] == null || xy[1] == null) {
            throw new IllegalArgumentException("series '" + name + "' must be {capacitiesTokens, hitRatios}");
        }
        if (xy[0].length == 0 || xy[0].length != xy[1].length) {
            throw new IllegalArgumentException("series '" + name + "' has " + xy[0].length + " capacities and "
                    + xy[1].length + " ratios; need equal counts >= 1");
        }
        double max = 0;
        for (int i = 0; i < xy[0].length; i++) {
            if (!(xy[0][i] > 0) || Double.isInfinite(xy[0][i])) {
                throw new IllegalArgumentException("series '" + name + "': capacity " + xy[0][i]
                        + " at index " + i + " must be finite and > 0 (log axis)");
            }
            if (!(xy[1][i] >= 0 && xy[1][i] <= 1)) {
                throw new IllegalArgumentException("series '" + name + "': ratio " + xy[1][i] + " at index " + i
                        + " must be in [0, 1]");
            }
            max = Math.max(max, xy[1][i]);
        }
        return max;
    }
}
