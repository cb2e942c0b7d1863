package io.kvtier.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The measuring harness works (a smoke test with tiny sizes; numbers are not judged here). */
class CopyBandwidthTest {

    @Test
    void measuresAllThreeKindsOfPass() {
        List<CopyBandwidth.Point> points = CopyBandwidth.measure(List.of(16L << 10, 64L << 10), 1 << 20, Duration.ofMillis(5));
        assertThat(points).extracting(CopyBandwidth.Point::chunkBytes).containsExactly(16L << 10, 64L << 10);
        for (CopyBandwidth.Point p : points) {
            assertThat(p.copyGBps()).isPositive().isFinite();
            assertThat(p.storeGBps()).isPositive().isFinite();
            assertThat(p.loadGBps()).isPositive().isFinite();
            assertThat(p.engineStoreGBps()).isPositive().isFinite();
            assertThat(p.engineLoadGBps()).isPositive().isFinite();
        }
        assertThat(CopyBandwidth.table(points)).contains("16 KiB").contains("64 KiB").contains("store %");
    }
}
