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
                    keys -> DiskIndexScan.start(reader, 1, p -> { }, keys), () -> List.of(key(1)), EVERY, now::get)) {
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
    void aRescanReportsTheKnownChunksWhoseFilesTheOwnerDeletedOnce() throws Exception {
        try (DiskStore owner = DiskStore.open(root, NS, DiskFsync.NONE);
             DiskStore reader = DiskStore.open(root, NS, DiskFsync.NONE)) {
            write(owner, 1, payload(arena, 2000, 1));
            write(owner, 2, payload(arena, 2000, 2));
            List<BlockKey> held = new ArrayList<>(List.of(key(1), key(2), key(3)));
            try (ReaderRescan scan = new ReaderRescan(DiskIndexScan.start(reader, 1, p -> { }),
                    keys -> DiskIndexScan.start(reader, 1, p -> { }, keys), () -> held, EVERY, now::get)) {
                assertThat(awaitAndDrain(scan)).containsExactlyInAnyOrder(key(1), key(2));
                assertThat(scan.takeVanished()).as("the first scan only adds").isEmpty();
                assertThat(owner.delete(key(1))).isTrue();
                now.addAndGet(EVERY.toNanos());
                assertThat(awaitAndDrain(scan)).as("due: starts the rescan").isEmpty();
                assertThat(awaitAndDrain(scan)).as("the rescan, given 1, 2 and 3, finds only 2, and passes over it").isEmpty();
                assertThat(scan.takeVanished()).as("1 deleted, 3 never there").containsExactlyInAnyOrder(key(1), key(3));
                assertThat(scan.takeVanished()).as("once").isEmpty();
                held.remove(key(1));
                held.remove(key(3));
                now.addAndGet(EVERY.toNanos());
                assertThat(awaitAndDrain(scan)).isEmpty();
                assertThat(awaitAndDrain(scan)).isEmpty();
                assertThat(scan.rescans()).isEqualTo(2);
                assertThat(scan.takeVanished()).as("2 is still there").isEmpty();
            }
        }
    }

    @Test
    void aNegativeIntervalIsRefused() {
        assertThatThrownBy(() -> new ReaderRescan(new NoScan(), keys -> null, List::of, Duration.ofMillis(-1), now::get))
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
