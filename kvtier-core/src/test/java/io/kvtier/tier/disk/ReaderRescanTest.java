package io.kvtier.tier.disk;

import static io.kvtier.tier.disk.Chunks.key;
import static io.kvtier.tier.disk.Chunks.payload;
import static io.kvtier.tier.disk.Chunks.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.kv.BlockKey;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A reader of a directory another store owns finds the owner's chunks written after its first scan. */
class ReaderRescanTest {

    private static final BlockKey NS = Chunks.NS;
    private static final Duration EVERY = Duration.ofSeconds(5);

    @TempDir
    Path root;

    private final Arena arena = Arena.ofShared();
    /** The test's clock, in nanoseconds: only the test moves it. */
    private final AtomicLong now = new AtomicLong(1_000);

    @AfterEach
    void close() {
        arena.close();
    }

    /** Waits for the current scan, then drains it; the keys handed over. */
    private static List<BlockKey> awaitAndDrain(ReaderRescan scan) throws InterruptedException {
        assertThat(scan.awaitEnd(Duration.ofSeconds(30))).isTrue();
        List<BlockKey> out = new ArrayList<>();
        scan.drain(Integer.MAX_VALUE, c -> out.add(c.key()));
        return out;
    }

    @Test
    void aRescanStartsOnlyWhenTheIntervalHasPassedSinceTheScanWasOverAndFindsTheOwnersNewChunks() throws Exception {
        try (DiskStore owner = DiskStore.open(root, NS, DiskFsync.NONE);
             DiskStore reader = DiskStore.open(root, NS, DiskFsync.NONE)) {
            assertThat(reader.role()).isEqualTo(DiskStore.Role.READER);
            write(owner, 1, payload(arena, 2000, 1));
            List<DiskIndexScan.Progress> firstReports = new ArrayList<>();
            try (ReaderRescan scan = new ReaderRescan(DiskIndexScan.start(reader, 1, firstReports::add),
                    () -> DiskIndexScan.start(reader, 1, p -> { }, Set.of(key(1))), EVERY, now::get)) {
                assertThat(awaitAndDrain(scan)).containsExactly(key(1));
                write(owner, 2, payload(arena, 2000, 2));
                now.addAndGet(EVERY.toNanos() - 1);
                assertThat(awaitAndDrain(scan)).as("not due yet: the same (finished) scan").isEmpty();
                assertThat(scan.rescans()).isZero();
                now.addAndGet(1);
                assertThat(awaitAndDrain(scan)).as("the drain that found it due starts the rescan").isEmpty();
                assertThat(scan.rescans()).isEqualTo(1);
                assertThat(awaitAndDrain(scan)).as("the new file; the known one passed over").containsExactly(key(2));
                assertThat(scan.progress().chunksFound()).as("the first scan's progress").isEqualTo(1);
                assertThat(scan.progress().ended()).isTrue();
            }
        }
    }

    @Test
    void aNegativeIntervalIsRefused() {
        assertThatThrownBy(() -> new ReaderRescan(new NoScan(), NoScan::new, Duration.ofMillis(-1), now::get))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT-0.001S");
    }

    /** A test fake: a scan that is over and found nothing. */
    private static final class NoScan implements RestartScan {
        @Override
        public int drain(int max, java.util.function.Consumer<? super ScannedChunk> sink) {
            return 0;
        }

        @Override
        public boolean finished() {
            return true;
        }

        @Override
        public DiskIndexScan.Progress progress() {
            return new DiskIndexScan.Progress(0, 0, 0, 0, 0, 0, true, true);
        }

        @Override
        public boolean awaitEnd(Duration timeout) {
            return true;
        }

        @Override
        public void close() {
        }
    }
}
