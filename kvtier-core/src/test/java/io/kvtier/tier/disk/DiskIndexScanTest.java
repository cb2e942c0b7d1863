package io.kvtier.tier.disk;

import static io.kvtier.tier.disk.Chunks.NS;
import static io.kvtier.tier.disk.Chunks.OTHER_NS;
import static io.kvtier.tier.disk.Chunks.header;
import static io.kvtier.tier.disk.Chunks.key;
import static io.kvtier.tier.disk.Chunks.parent;
import static io.kvtier.tier.disk.Chunks.payload;
import static io.kvtier.tier.disk.Chunks.read;
import static io.kvtier.tier.disk.Chunks.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskIndexScanTest {

    private static final long PAYLOAD = 2000;
    private static final long T0 = 1_700_000_000_000L;

    @TempDir
    Path root;

    private final Arena arena = Arena.ofShared();
    private final List<DiskIndexScan.Progress> reports = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() {
        arena.close();
    }

    /**
     * Starts a scan whose first report after the listing holds it: {@code paused} opens when it is
     * held, and it goes on when {@code resume} opens.
     */
    private static DiskIndexScan startHeldAfterListing(DiskStore store, int threads, CountDownLatch paused,
                                                       CountDownLatch resume) {
        return DiskIndexScan.start(store, threads, pr -> {
            if (pr.listed() && !pr.ended() && paused.getCount() > 0) {
                paused.countDown();
                try {
                    resume.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
    }

    private static List<ScannedChunk> drainAll(DiskIndexScan scan) throws InterruptedException {
        assertThat(scan.awaitEnd(Duration.ofSeconds(30))).isTrue();
        List<ScannedChunk> out = new ArrayList<>();
        scan.drain(Integer.MAX_VALUE, out::add);
        assertThat(scan.finished()).isTrue();
        return out;
    }

    private static List<Path> tree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> !Files.isDirectory(p)).sorted().toList();
        }
    }

    private static void setMtime(Path p, long millis) throws IOException {
        Files.setLastModifiedTime(p, FileTime.fromMillis(millis));
    }

    @Test
    void restartFindsExactlyTheCompleteFilesOldestFirstAndCleansOnlyItsNamespace() throws Exception {
        int n = 40;
        long[] mtimeRank = new long[n];
        Path otherNsFile;
        Path otherNsTemp;
        Path notes;
        Path ourTemp;
        List<Path> bad = new ArrayList<>();
        Path deadTemp;
        try (DiskStore store = DiskStore.open(root, NS, DiskFsync.NONE);
             DiskStore other = DiskStore.open(root, OTHER_NS, DiskFsync.NONE)) {
            MemorySegment p = payload(arena, PAYLOAD, 1);
            for (int i = 0; i < n; i++) {
                write(store, i, p);
                mtimeRank[i] = (i * 17L) % n; // a permutation of 0..n-1
                setMtime(store.layout().fileOf(key(i)), T0 + 1000 * mtimeRank[i]);
            }
            DiskLayout layout = store.layout();
            // a writer killed mid-way: its temporary file, of a process that no longer exists
            deadTemp = layout.tempFileOf(key(100), DiskStore.PID + "xdead", 3);
            Files.createDirectories(deadTemp.getParent());
            Files.write(deadTemp, new byte[100]);
            // a write in flight in this very process: left alone (a dead process with our pid, above, is not us)
            ourTemp = layout.tempFileOf(key(101), DiskStore.PROCESS_TAG, Long.MAX_VALUE);
            Files.createDirectories(ourTemp.getParent());
            Files.write(ourTemp, new byte[100]);
            // truncated chunk
            write(store, 102, p);
            try (RandomAccessFile f = new RandomAccessFile(layout.fileOf(key(102)).toFile(), "rw")) {
                f.setLength(f.length() - 10);
            }
            bad.add(layout.fileOf(key(102)));
            // garbage header
            Files.createDirectories(layout.fileOf(key(103)).getParent());
            Files.write(layout.fileOf(key(103)), new byte[300]);
            bad.add(layout.fileOf(key(103)));
            // a foreign namespace's chunk inside our directory
            write(other, 104, p);
            Files.createDirectories(layout.fileOf(key(104)).getParent());
            Files.copy(other.layout().fileOf(key(104)), layout.fileOf(key(104)));
            bad.add(layout.fileOf(key(104)));
            // a chunk under the name of another key
            write(store, 105, p);
            Files.createDirectories(layout.fileOf(key(106)).getParent());
            Files.move(layout.fileOf(key(105)), layout.fileOf(key(106)));
            bad.add(layout.fileOf(key(106)));
            // a .kvc name that is no key
            Path badName = layout.shardDir(7).resolve("not-a-key.kvc");
            Files.createDirectories(badName.getParent());
            Files.write(badName, new byte[10]);
            bad.add(badName);
            // unknown files are not ours to judge
            notes = layout.namespaceDir().resolve("notes.txt");
            Files.writeString(notes, "hello");
            // the other namespace: a chunk and a dead temporary file, none of our business
            otherNsFile = other.layout().fileOf(key(104));
            otherNsTemp = other.layout().tempFileOf(key(200), "999999999x1", 1);
            Files.createDirectories(otherNsTemp.getParent());
            Files.write(otherNsTemp, new byte[10]);
        }
        List<Path> otherBefore = tree(root.resolve(OTHER_NS.toString()));

        try (DiskStore store = DiskStore.open(root, NS, DiskFsync.NONE);
             DiskIndexScan scan = DiskIndexScan.start(store, 3, reports::add)) {
            assertThat(store.role()).isEqualTo(DiskStore.Role.OWNER);
            List<ScannedChunk> found = drainAll(scan);
            assertThat(found).hasSize(n);
            for (int rank = 0; rank < n; rank++) {
                ScannedChunk c = found.get(rank);
                int i = (int) c.key().w2();
                assertThat(c.key()).isEqualTo(key(i));
                assertThat(mtimeRank[i]).as("chunk %d delivered at position %d", i, rank).isEqualTo(rank);
                assertThat(c).isEqualTo(new ScannedChunk(key(i), parent(i), 16, PAYLOAD,
                        DiskCapacity.fileBytes(PAYLOAD, 16), T0 + 1000 * rank));
            }
            DiskIndexScan.Progress end = scan.progress();
            assertThat(end).isEqualTo(new DiskIndexScan.Progress(n + 4, n + 4, n, 1, 5, 2, true, true));
            assertThat(reports.getLast()).isEqualTo(end);
            assertThat(reports.getFirst().listed()).isTrue();
            assertThat(end.line()).isEqualTo("disk scan: 44/44 files, 40 chunks, 6 deleted, done");
            // One line for all the damaged files, by cause, without Java's class names (a trial: a line a file).
            assertThat(scan.deletedByCause()).containsExactly(entry("unreadable header", 1L), entry("truncated", 1L),
                    entry("another namespace's chunk", 1L), entry("another key's chunk", 1L), entry("not a chunk file name", 1L));
            assertThat(scan.deletionLine()).startsWith("disk scan of " + store.layout().namespaceDir() + ": deleted 5 damaged chunk"
                    + " files (unreadable header 1, truncated 1, another namespace's chunk 1, another key's chunk 1, not a chunk"
                    + " file name 1), the first ").doesNotContain("Exception");

            assertThat(deadTemp).doesNotExist();
            assertThat(ourTemp).exists();
            for (Path b : bad) {
                assertThat(b).doesNotExist();
            }
            assertThat(notes).hasContent("hello");
            assertThat(tree(root.resolve(OTHER_NS.toString()))).isEqualTo(otherBefore).contains(otherNsFile, otherNsTemp);
            MemorySegment back = arena.allocate(PAYLOAD);
            assertThat(read(store, 5, back).ok()).isTrue();
        }
    }

    @Test
    void aReadersScanReportsButDeletesNothing() throws Exception {
        Path garbage;
        Path deadTemp;
        try (DiskStore owner = DiskStore.open(root, NS, DiskFsync.NONE);
             DiskStore reader = DiskStore.open(root, NS, DiskFsync.NONE)) {
            assertThat(reader.role()).isEqualTo(DiskStore.Role.READER);
            write(owner, 1, payload(arena, PAYLOAD, 1));
            garbage = owner.layout().fileOf(key(2));
            Files.createDirectories(garbage.getParent());
            Files.write(garbage, new byte[300]);
            deadTemp = owner.layout().tempFileOf(key(3), "999999999x1", 1);
            Files.createDirectories(deadTemp.getParent());
            Files.write(deadTemp, new byte[3]);
            try (DiskIndexScan scan = DiskIndexScan.start(reader, 2, reports::add)) {
                assertThat(drainAll(scan)).extracting(ScannedChunk::key).containsExactly(key(1));
                assertThat(scan.progress()).isEqualTo(new DiskIndexScan.Progress(2, 2, 1, 0, 0, 2, true, true));
            }
        }
        assertThat(garbage).exists();
        assertThat(deadTemp).exists();
    }

    @Test
    void theTierIsUsableWhileTheScanRuns() throws Exception {
        try (DiskStore store = DiskStore.open(root, NS, DiskFsync.NONE)) {
            MemorySegment p = payload(arena, PAYLOAD, 1);
            for (int i = 0; i < 20; i++) {
                write(store, i, p);
            }
            CountDownLatch paused = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            DiskIndexScan scan = startHeldAfterListing(store, 2, paused, resume);
            try (scan) {
                paused.await();
                assertThat(scan.progress().filesListed()).isEqualTo(20);
                assertThat(scan.drain(100, c -> { })).isZero(); // nothing adopted yet: every lookup is a miss
                assertThat(scan.finished()).isFalse();
                write(store, 50, p); // stores and loads work meanwhile
                MemorySegment back = arena.allocate(PAYLOAD);
                assertThat(read(store, 50, back).ok()).isTrue();
                assertThat(read(store, 3, back).ok()).isTrue();
                resume.countDown();
                List<ScannedChunk> found = drainAll(scan);
                assertThat(found).extracting(c -> (int) c.key().w2()).containsExactlyInAnyOrderElementsOf(
                        java.util.stream.IntStream.range(0, 20).boxed().toList());
            }
        }
    }

    @Test
    void drainHandsOverAtMostTheAskedNumber() throws Exception {
        try (DiskStore store = DiskStore.open(root, NS, DiskFsync.NONE)) {
            MemorySegment p = payload(arena, 100, 1);
            for (int i = 0; i < 10; i++) {
                write(store, i, p);
            }
            try (DiskIndexScan scan = DiskIndexScan.start(store, 1, reports::add)) {
                assertThat(scan.awaitEnd(Duration.ofSeconds(30))).isTrue();
                List<BlockKey> got = new ArrayList<>();
                assertThat(scan.drain(4, c -> got.add(c.key()))).isEqualTo(4);
                assertThat(scan.finished()).isFalse();
                assertThat(scan.drain(4, c -> got.add(c.key()))).isEqualTo(4);
                assertThat(scan.drain(4, c -> got.add(c.key()))).isEqualTo(2);
                assertThat(scan.finished()).isTrue();
                assertThat(got).hasSize(10).doesNotHaveDuplicates();
            }
        }
    }

    @Test
    void aScanOfAnEmptyDirectoryEndsAtOnce() throws Exception {
        try (DiskStore store = DiskStore.open(root, NS, DiskFsync.NONE);
             DiskIndexScan scan = DiskIndexScan.start(store, 2, reports::add)) {
            assertThat(drainAll(scan)).isEmpty();
            assertThat(scan.progress()).isEqualTo(new DiskIndexScan.Progress(0, 0, 0, 0, 0, 0, true, true));
        }
    }

    @Test
    void aChunkRewrittenAfterTheListingIsNotDeletedAsBad() throws Exception {
        try (DiskStore store = DiskStore.open(root, NS, DiskFsync.NONE)) {
            Path f = store.layout().fileOf(key(1));
            Files.createDirectories(f.getParent());
            Files.write(f, new byte[300]); // garbage under key 1's name
            CountDownLatch paused = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            DiskIndexScan scan = startHeldAfterListing(store, 1, paused, resume);
            try (scan) {
                paused.await();
                MemorySegment p = payload(arena, PAYLOAD, 9);
                write(store, 1, p); // the engine stores key 1 while the scan holds the old listing
                resume.countDown();
                List<ScannedChunk> found = drainAll(scan);
                assertThat(found).extracting(ScannedChunk::key).containsExactly(key(1));
                MemorySegment back = arena.allocate(PAYLOAD);
                assertThat(read(store, 1, back)).isEqualTo(new DiskRead.Ok(header(NS, 1, p)));
            }
        }
    }

    @Test
    void headersWithManyTokensAreReadBeyondTheFirstRead() throws Exception {
        try (DiskStore store = DiskStore.open(root, NS, DiskFsync.NONE)) {
            int[] tokens = new int[2000]; // header of 8128 bytes, more than the first 4 KiB read
            MemorySegment p = payload(arena, 100, 3);
            store.write(key(1), ChunkHeader.of(NS, key(1), parent(1), tokens, 100, ChunkHeader.crc32c(p)), p);
            try (DiskIndexScan scan = DiskIndexScan.start(store, 1, reports::add)) {
                assertThat(drainAll(scan)).containsExactly(new ScannedChunk(key(1), parent(1), 2000, 100,
                        ChunkHeader.encodedSize(2000) + 100, Files.getLastModifiedTime(store.layout().fileOf(key(1))).toMillis()));
            }
        }
    }
}
