package io.kvtier.replay.optimum;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SweepChartTest {

    @TempDir
    Path dir;

    @Test
    void writesAPngOfTheGivenSize() throws IOException {
        double[] caps = {1 << 20, 3_000_000, 10_000_000};
        Map<String, double[][]> series = new LinkedHashMap<>();
        series.put("lru", new double[][] {caps, {0.0566, 0.1437, 0.2976}});
        series.put("belady", new double[][] {caps, {0.2623, 0.3599, 0.3734}});
        series.put("ceiling", new double[][] {caps, {0.3734, 0.3734, 0.3734}});
        Path png = dir.resolve("sub/sweep.png");
        SweepChart.write(png, "conversation", series);

        byte[] bytes = Files.readAllBytes(png);
        assertThat(bytes).startsWith(0x89, 'P', 'N', 'G');
        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image.getWidth()).isEqualTo(SweepChart.WIDTH);
        assertThat(image.getHeight()).isEqualTo(SweepChart.HEIGHT);
        // Something was drawn: not a blank white canvas.
        int white = 0xFFFFFFFF;
        int other = 0;
        for (int y = 0; y < image.getHeight(); y += 4) {
            for (int x = 0; x < image.getWidth(); x += 4) {
                if (image.getRGB(x, y) != white) {
                    other++;
                }
            }
        }
        assertThat(other).isGreaterThan(500);
    }

    @Test
    void rejectsMisshapenSeries() {
        Path png = dir.resolve("bad.png");
        assertThatThrownBy(() -> SweepChart.write(png, "t", Map.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no series");
        assertThatThrownBy(() -> SweepChart.write(png, "t", Map.of("lru", new double[][] {{1, 2}, {0.1}})))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'lru' has 2 capacities and 1 ratios");
        assertThatThrownBy(() -> SweepChart.write(png, "t", Map.of("lru", new double[][] {{0, 2}, {0.1, 0.2}})))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("log axis");
        assertThatThrownBy(() -> SweepChart.write(png, "t", Map.of("lru", new double[][] {{1, 2}, {0.1, 1.2}})))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be in [0, 1]");
        assertThatThrownBy(() -> SweepChart.write(png, "t", Map.of("lru", new double[][] {{1, 2}})))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("{capacitiesTokens, hitRatios}");
        assertThat(png).doesNotExist();
    }

    /** The labels each swept capacity gets above the axis (the log axis labels powers of ten only). */
    @Test
    void capacityLabelsAreShort() {
        assertThat(SweepChart.compact(250_000)).isEqualTo("250k");
        assertThat(SweepChart.compact(1 << 20)).isEqualTo("1.05M");
        assertThat(SweepChart.compact(3_000_000)).isEqualTo("3M");
        assertThat(SweepChart.compact(900)).isEqualTo("900");
    }

    /** Coinciding lines (a policy on the optimum) must still show: distinct markers, all but the first line broken. */
    @Test
    void seriesHaveDistinctMarkersAndLaterOnesAreDashed() {
        double[] caps = {1 << 20, 3_000_000};
        Map<String, double[][]> series = new LinkedHashMap<>();
        for (String name : new String[] {"lru", "arc", "lru-admit2", "optimum", "ceiling"}) {
            series.put(name, new double[][] {caps, {0.3, 0.3}}); // all on one line
        }
        var chart = SweepChart.chart("t", series);
        java.util.Set<Object> markers = new java.util.HashSet<>();
        int i = 0;
        for (var s : chart.getSeriesMap().values()) {
            assertThat(s.getMarker()).as(s.getName()).isNotNull();
            markers.add(s.getMarker().getClass());
            assertThat(s.getLineStyle()).as(s.getName()).isNotNull();
            if (i++ > 0) {
                assertThat(s.getLineStyle().getDashArray()).as("%s is dashed or dotted", s.getName()).isNotNull();
            }
        }
        assertThat(markers).hasSize(5);
    }
}
