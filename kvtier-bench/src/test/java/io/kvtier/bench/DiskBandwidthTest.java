package io.kvtier.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The measurement works and cleans up; the numbers themselves are for {@code bench offload}. */
class DiskBandwidthTest {

    @TempDir
    Path dir;

    @Test
    void measuresEverySizeAndLeavesNothingBehind() throws Exception {
        List<DiskBandwidth.Row> rows = DiskBandwidth.measure(dir, new long[] {16 << 10, 64 << 10}, 512 << 10, 2);
        assertThat(rows).extracting(DiskBandwidth.Row::chunkBytes).containsExactly(16L << 10, 64L << 10);
        assertThat(rows).extracting(DiskBandwidth.Row::files).containsExactly(32, 8);
        for (DiskBandwidth.Row r : rows) {
            for (double gbps : new double[] {r.storeWriteGBps(), r.plainWriteGBps(), r.storeReadGBps(), r.plainReadGBps()}) {
                assertThat(gbps).isPositive().isLessThan(1e4);
            }
            assertThat(r.writeRatio()).isEqualTo(r.storeWriteGBps() / r.plainWriteGBps());
        }
        String table = DiskBandwidth.table(rows);
        assertThat(table.lines()).hasSize(3);
        assertThat(table.lines().toList().get(1)).startsWith("    16 KiB      32 ");
        assertThat(table.lines().toList().get(2)).startsWith("    64 KiB       8 ");
        try (Stream<Path> s = Files.list(dir)) {
            assertThat(s.toList()).isEmpty();
        }
    }
}
