package io.kvtier.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ColdDiskBandwidthTest {

    @TempDir
    Path dir;

    /** With a counting no-op in place of dropping the cache (tests do not run as root). */
    @Test
    void dropsTheCacheBeforeEachSideOfEachPassMeasuresEverySizeAndLeavesNothingBehind() throws Exception {
        AtomicInteger drops = new AtomicInteger();
        List<ColdDiskBandwidth.Row> rows = ColdDiskBandwidth.measure(dir, new long[] {16 << 10, 300_000}, 1 << 20,
                drops::incrementAndGet);
        assertThat(drops.get()).as("2 sizes x 2 passes x 2 sides").isEqualTo(8);
        assertThat(rows).extracting(ColdDiskBandwidth.Row::chunkBytes).containsExactly(16L << 10, 300_000L);
        assertThat(rows).extracting(ColdDiskBandwidth.Row::files).containsExactly(64, 4);
        for (ColdDiskBandwidth.Row r : rows) {
            assertThat(r.storeReadGBps()).isPositive().isLessThan(1e4);
            assertThat(r.plainReadGBps()).isPositive().isLessThan(1e4);
            assertThat(r.readRatio()).isEqualTo(r.storeReadGBps() / r.plainReadGBps());
        }
        assertThat(ColdDiskBandwidth.table(rows).lines().toList()).hasSize(3).element(2).asString()
                .startsWith("   292 KiB       4 ");
        try (Stream<Path> s = Files.list(dir)) {
            assertThat(s.toList()).isEmpty();
        }
    }
}
