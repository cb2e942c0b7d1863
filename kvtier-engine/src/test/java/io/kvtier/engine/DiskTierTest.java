package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords.Record;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.Namespace;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.CheckpointWriter;
import io.kvtier.model.Kernels;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadStats;
import io.kvtier.tier.disk.DiskFsync;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The disk tier on the real model (issue 5): restart-safe, namespaced, verified on every read,
 * and every fault ends with the reference output and the right counter.
 */
class DiskTierTest {

    private static final List<Record> RECORDS = ReferenceRecords.load();
    /** Records whose prompts have at least one full 16-token block before their last token. */
    private static final int[] LONG_PROMPTS = {3, 4, 5, 7};

    @TempDir
    Path dir;

    private static OffloadSetup setup(Path dir, long diskBytes, DiskWritePolicy policy) {
        return new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT,
                new OffloadSetup.DiskSetup(dir, diskBytes, policy, DiskFsync.NONE, 1, null));
    }

    private static Engine engine(Path model, int blockSize, OffloadSetup setup) {
        return LlamaRunner.engine(Checkpoint.load(model), EngineConfig.of(blockSize, 1024 / blockSize * 2),
                Kernels.best(), 2, setup);
    }

    /** Runs the records one after another, the device cache dropped between them; checks outputs. */
    private static List<Request> runSequential(Engine e, int... records) {
        e.offload().awaitDiskScan(Duration.ofSeconds(30));
        return SequentialRuns.run(e, records);
    }

    private static int[] all() {
        return new int[] {0, 1, 2, 3, 4, 5, 6, 7};
    }

    /** The first process: stores every record's blocks to disk, then exits (closes). */
    private void firstProcess(DiskWritePolicy policy) {
        try (Engine e = engine(ReferenceRecords.model(), 16, setup(dir, 1L << 30, policy))) {
            runSequential(e, all());
            assertThat(e.offload().stats().blocksStored().get("disk")).isPositive();
        }
    }

    private static long diskHits(Request r) {
        return r.externalHitTokens().getOrDefault("disk", 0);
    }

    @Test
    void aRestartedEngineStartsWarmFromDisk() {
        firstProcess(DiskWritePolicy.THROUGH);
        try (Engine e = engine(ReferenceRecords.model(), 16, setup(dir, 1L << 30, DiskWritePolicy.THROUGH))) {
            List<Request> done = runSequential(e, all());
            for (int i : LONG_PROMPTS) {
                Request r = done.get(i);
                int hit = r.externalHitTokens().values().stream().mapToInt(Integer::intValue).sum();
                assertThat(hit).as("record %d: every full block before its last token", i)
                        .isEqualTo((r.promptLength() - 1) / 16 * 16);
            }
            assertThat(diskHits(done.get(3))).isEqualTo(32);
            assertThat(diskHits(done.get(7))).isEqualTo(224);
            assertThat(e.offload().stats().loadFailures()).isZero();
        }
    }

    /**
     * A disk tier that only reads its directory (another tier owns it) counts the host chunks it
     * does not write as {@code disk-read-only}, not as failed writes (a new user's trial), and
     * still serves hits from the owner's chunks.
     */
    @Test
    void aReadOnlyDiskTierCountsItsUnwrittenChunksAsReadOnlyNotFailed() {
        try (Engine owner = engine(ReferenceRecords.model(), 16, setup(dir, 1L << 30, DiskWritePolicy.THROUGH))) {
            runSequential(owner, 0, 1, 2, 3);
            try (Engine reader = engine(ReferenceRecords.model(), 16, setup(dir, 1L << 30, DiskWritePolicy.THROUGH))) {
                List<Request> done = runSequential(reader, all());
                assertThat(diskHits(done.get(3))).as("the owner's chunks").isEqualTo(32);
                assertThat(reader.offload().stats().blocksNotStored()).doesNotContainKey(OffloadStats.DISK_WRITE_FAILED);
                assertThat(reader.offload().stats().blocksNotStored().get(OffloadStats.DISK_READ_ONLY)).isPositive();
                assertThat(owner.offload().stats().blocksNotStored()).doesNotContainKey(OffloadStats.DISK_READ_ONLY);
            }
        }
    }

    /** An engine on {@link #dir} owned by another engine, rescanning every step, its first scan taken in. */
    private Engine rescanningReader() {
        OffloadSetup rescanning = new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT,
                new OffloadSetup.DiskSetup(dir, 1L << 30, DiskWritePolicy.THROUGH, DiskFsync.NONE, 1, null)
                        .withRescanEvery(Duration.ZERO));
        Engine reader = engine(ReferenceRecords.model(), 16, rescanning);
        reader.offload().awaitDiskScan(Duration.ofSeconds(30));
        return reader;
    }

    /**
     * A reader started before the owner wrote anything finds the owner's later chunks by rescanning
     * the directory (a third trial's finding: it never saw them). Rescans every step here
     * ({@code rescanEvery} zero); two waits after the owner closed take in one scan that started after.
     */
    @Test
    void aReaderFindsChunksTheOwnerWroteAfterItsFirstScan() {
        Engine owner = engine(ReferenceRecords.model(), 16, setup(dir, 1L << 30, DiskWritePolicy.THROUGH));
        try (Engine reader = rescanningReader()) {
            try (owner) {
                runSequential(owner, 3);
            }
            reader.offload().awaitDiskScan(Duration.ofSeconds(30));
            reader.offload().awaitDiskScan(Duration.ofSeconds(30));
            List<Request> done = SequentialRuns.run(reader, 3);
            assertThat(diskHits(done.getFirst())).as("the owner's two chunks of record 3").isEqualTo(32);
            assertThat(reader.offload().stats().loadFailures()).isZero();
        }
    }

    /**
     * A server's loop between requests calls {@link Engine#idle}: that alone takes in a rescan's
     * findings, so the first request after the owner wrote is a hit (with rescans driven only by
     * steps, a quiet server's first request started the rescan and missed).
     */
    @Test
    void anIdleReaderTakesInTheOwnersChunksWithoutARequestAndDropsTheDeletedOnes() throws IOException, InterruptedException {
        Engine owner = engine(ReferenceRecords.model(), 16, setup(dir, 1L << 30, DiskWritePolicy.THROUGH));
        try (Engine reader = rescanningReader()) {
            long stored;
            try (owner) {
                runSequential(owner, 3);
                owner.drainTransfers();
                stored = owner.offload().stats().blocksStored().get("disk");
            }
            assertThat(stored).as("record 3's blocks with prompt tokens").isEqualTo(3);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (reader.offload().diskIndex().readyCount() < stored && System.nanoTime() < deadline) {
                reader.idle();
                Thread.sleep(5);
            }
            assertThat(reader.offload().diskIndex().readyCount()).as("the owner's chunks, taken in while idle").isEqualTo(stored);
            assertThat(diskHits(SequentialRuns.run(reader, 3).getFirst())).isEqualTo(32);

            // The owner's files deleted (as its reset does): a rescan drops them.
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".kvc")).toList()) {
                    Files.delete(f);
                }
            }
            deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (reader.offload().diskIndex().readyCount() > 0 && System.nanoTime() < deadline) {
                reader.idle();
                Thread.sleep(5);
            }
            assertThat(reader.offload().diskIndex().readyCount()).as("vanished files dropped, not kept until a failed load")
                    .isZero();
        }
    }

    @Test
    void writeOnEvictAlsoSurvivesARestart() {
        // A host tier of 4 chunks: record 3 stores 2, records 6, 0, 1, 2 one each, so record 3's
        // two chunks are evicted last and reach the disk only then.
        OffloadSetup small = new OffloadSetup(0, 4, "lru", OffloadConfig.DEFAULT,
                new OffloadSetup.DiskSetup(dir, 1L << 30, DiskWritePolicy.ON_EVICT, DiskFsync.DATA, 1, null));
        try (Engine e = engine(ReferenceRecords.model(), 16, small)) {
            runSequential(e, 3, 6, 0, 1, 2);
            assertThat(e.offload().stats().blocksStored().get("disk")).isEqualTo(2);
        }
        try (Engine e = engine(ReferenceRecords.model(), 16, setup(dir, 1L << 30, DiskWritePolicy.THROUGH))) {
            List<Request> done = runSequential(e, 3);
            assertThat(diskHits(done.getFirst())).isEqualTo(32);
        }
    }

    @Test
    void anotherBlockSizeOrModelGetsNoHitsAndCorrectOutputs(@TempDir Path models) throws IOException {
        firstProcess(DiskWritePolicy.THROUGH);
        try (Engine e = engine(ReferenceRecords.model(), 32, setup(dir, 1L << 30, DiskWritePolicy.THROUGH))) {
            for (Request r : runSequential(e, all())) {
                assertThat(diskHits(r)).isZero();
            }
        }
        Path other = models.resolve("other.bin");
        try (Checkpoint real = Checkpoint.load(ReferenceRecords.model())) {
            CheckpointWriter.writeRandom(other, real.config(), 7);
        }
        List<int[]> expected = new ArrayList<>();
        try (Engine plain = engine(other, 16, OffloadSetup.OFF)) {
            for (int i : LONG_PROMPTS) {
                Request r = new Request(i, RECORDS.get(i).promptIds(), 20, SamplingParams.GREEDY, ExtraKeys.NONE);
                plain.submit(r);
                plain.runToCompletion();
                expected.add(r.outputIds());
            }
        }
        try (Engine e = engine(other, 16, setup(dir, 1L << 30, DiskWritePolicy.THROUGH))) {
            e.offload().awaitDiskScan(Duration.ofSeconds(30));
            for (int k = 0; k < LONG_PROMPTS.length; k++) {
                e.resetDevicePrefixCache();
                Request r = new Request(k, RECORDS.get(LONG_PROMPTS[k]).promptIds(), 20, SamplingParams.GREEDY, ExtraKeys.NONE);
                e.submit(r);
                e.runToCompletion();
                e.drainTransfers();
                assertThat(diskHits(r)).isZero();
                assertThat(r.outputIds()).containsExactly(expected.get(k));
            }
        }
    }

    private void forEachChunkFile(Consumer<Path> action) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            files.filter(p -> p.toString().endsWith(".kvc")).forEach(action);
        }
    }

    /** Restarts on the stored files, damages them after the scan, and checks the fallback. */
    private OffloadStats restartWithDamage(Consumer<Path> damage) throws IOException {
        firstProcess(DiskWritePolicy.THROUGH);
        try (Engine e = engine(ReferenceRecords.model(), 16, setup(dir, 1L << 30, DiskWritePolicy.THROUGH))) {
            e.offload().awaitDiskScan(Duration.ofSeconds(30));
            forEachChunkFile(damage);
            runSequential(e, LONG_PROMPTS); // every output equals its reference (checked inside)
            return e.offload().stats();
        }
    }

    @Test
    void aFlippedByteIsDetectedAndTheRequestRecomputes() throws IOException {
        OffloadStats s = restartWithDamage(p -> {
            try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
                long at = f.length() - 7;
                f.seek(at);
                int b = f.read();
                f.seek(at);
                f.write(b ^ 0xFF);
            } catch (IOException ex) {
                throw new java.io.UncheckedIOException(ex);
            }
        });
        assertThat(s.loadFailures()).isPositive();
        assertThat(s.blocksLoaded().getOrDefault("disk", 0L)).isZero();
    }

    @Test
    void aTruncatedFileIsDetected() throws IOException {
        OffloadStats s = restartWithDamage(p -> {
            try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
                f.setLength(f.length() / 2);
            } catch (IOException ex) {
                throw new java.io.UncheckedIOException(ex);
            }
        });
        assertThat(s.loadFailures()).isPositive();
        assertThat(s.blocksLoaded().getOrDefault("disk", 0L)).isZero();
    }

    @Test
    void aDeletedFileIsAMissAndTheRequestRecomputes() throws IOException {
        OffloadStats s = restartWithDamage(p -> {
            try {
                Files.delete(p);
            } catch (IOException ex) {
                throw new java.io.UncheckedIOException(ex);
            }
        });
        assertThat(s.loadFailures()).isPositive();
        assertThat(s.blocksLoaded().getOrDefault("disk", 0L)).isZero();
    }

    @Test
    void aDirectoryThatCannotBeWrittenStopsDiskStoresOnly() throws IOException {
        // As root, chmod does not stop writes: put a regular file where every shard directory goes.
        String model;
        try (Checkpoint c = Checkpoint.load(ReferenceRecords.model())) {
            model = c.modelId();
            Path ns = dir.resolve(Namespace.of(model, c.config().kvLayout(16)).digest().toString());
            Files.createDirectories(ns);
            for (int i = 0; i < 256; i++) {
                Files.writeString(ns.resolve(String.format("%02x", i)), "not a directory");
            }
        }
        try (Engine e = engine(ReferenceRecords.model(), 16, setup(dir, 1L << 30, DiskWritePolicy.THROUGH))) {
            runSequential(e, all());
            OffloadStats s = e.offload().stats();
            assertThat(s.storeFailures()).isPositive();
            assertThat(s.blocksStored().getOrDefault("disk", 0L)).isZero();
            assertThat(s.blocksStored().get("host")).isPositive(); // nothing else is affected
            // Write-through offers every host chunk to the disk once: each failed or was skipped in the
            // pause after a failure, and each is counted (a new user's trial: only failed jobs were).
            assertThat(s.blocksNotStored().get(OffloadStats.DISK_WRITE_FAILED)).isEqualTo(s.blocksStored().get("host"));
            assertThat(s.externalHitTokens().get("host")).isPositive();
        }
    }

    @Test
    void aTinyDiskBudgetKeepsWithinItAndLosesNothing() {
        long twoChunks;
        try (Checkpoint c = Checkpoint.load(ReferenceRecords.model())) {
            var layout = c.config().kvLayout(16);
            twoChunks = 2 * io.kvtier.tier.disk.DiskCapacity.allocatedBytes(layout.bytesPerBlock(), 16, 4096);
        }
        try (Engine e = engine(ReferenceRecords.model(), 16, setup(dir, twoChunks, DiskWritePolicy.THROUGH))) {
            runSequential(e, all());
            assertThat(e.offload().diskIndex().capacity()).isEqualTo(2);
            assertThat(e.offload().diskIndex().capacity() - e.offload().diskIndex().freeSlots()).isLessThanOrEqualTo(2);
            assertThat(e.offload().stats().storeRefusals() + e.offload().diskIndex().evictions()).isPositive();
        }
    }
}
