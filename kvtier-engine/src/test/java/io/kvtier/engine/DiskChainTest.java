package io.kvtier.engine;

import static io.kvtier.engine.FingerprintEngines.range;
import static io.kvtier.engine.FingerprintEngines.reference;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadStats;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.TierIndex;
import io.kvtier.tier.disk.ScannedChunk;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * F02 and S01 with the disk tier in the chain (fingerprint model, real transfer threads, real
 * files): a tiny host tier pushes reuse through disk promotions.
 */
class DiskChainTest {

    private static final int REQUESTS = Integer.getInteger("kvtier.soak.requests", 700) / 2;

    @TempDir
    Path dir;

    /**
     * The chunk files under {@code dir}, listed while the disk thread writes: not {@code
     * Files.walk}, which reads each entry's attributes and fails when a temporary file is renamed
     * away between the listing and that read.
     */
    private static List<Path> chunkFiles(Path dir) {
        List<Path> out = new ArrayList<>();
        collectChunkFiles(dir, out);
        out.sort(null);
        return out;
    }

    private static void collectChunkFiles(Path dir, List<Path> out) {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path p : entries) {
                if (p.getFileName().toString().endsWith(".kvc")) {
                    out.add(p);
                } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    collectChunkFiles(p, out);
                }
            }
        } catch (NoSuchFileException e) {
            // a directory that went away: nothing in it
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Flips the last byte of {@code p}, unless the engine evicted the file meanwhile (never creates one). */
    private static void flipLastByte(Path p) {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            long last = ch.size() - 1;
            if (last >= 0 && ch.read(b, last) == 1) {
                b.put(0, (byte) (b.get(0) ^ 0x5A)).rewind();
                ch.write(b, last);
            }
        } catch (NoSuchFileException e) {
            // evicted between the listing and now
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void promotionFromDiskThenLoad() {
        try (OffloadFixture f = OffloadFixture.withDisk(FingerprintEngines.config(4, 64), 2, OffloadConfig.DEFAULT, dir, 32,
                DiskWritePolicy.THROUGH)) {
            Request a = f.runOne(range(1, 9), 1); // h1, h2 to host, then to disk
            f.runOne(range(30, 38), 1); // two more chunks evict h1, h2 from the 2-slot host tier
            assertThat(f.host.index().state(a.blockKeys().get(0))).isEqualTo(TierIndex.EntryState.ABSENT);
            assertThat(f.offload.diskIndex().state(a.blockKeys().get(0))).isEqualTo(TierIndex.EntryState.READY);
            f.engine.resetDevicePrefixCache();
            Request b = f.runOne(range(1, 9), 3);
            assertThat(b.externalHitTokens()).isEqualTo(Map.of("disk", 8));
            assertThat(f.offload.stats().blocksLoaded().get("disk")).isEqualTo(2);
            assertThat(b.outputIds()).containsExactly(reference(range(1, 9), 3));
            f.assertDrained();
        }
    }

    /**
     * F3 of a new user's trial: a disk tier of one chunk holds the chain's head A; its child B,
     * completed during decode and written later, would evict A (a child without its parent is
     * never hit: a lookup starts at the head), so B is skipped and counted, and the next run of
     * the same prompt hits A on disk.
     */
    @Test
    void aOneChunkDiskKeepsTheParentAndSkipsItsChild() {
        int[] prompt = range(1, 7); // 7 tokens: A full at prefill, B (3 prompt tokens) full after the first decode step
        Request first;
        try (OffloadFixture f = OffloadFixture.withDisk(FingerprintEngines.config(4, 64), 4, OffloadConfig.DEFAULT, dir, 1,
                DiskWritePolicy.THROUGH)) {
            first = f.submit(prompt, 3);
            f.step(); // prefill: A stored to the host
            f.engine.drainTransfers(); // and written to disk before B is stored (as on a slower model)
            f.run();
            f.engine.drainTransfers();
            TierIndex disk = f.offload.diskIndex();
            assertThat(disk.state(first.blockKeys().get(0))).as("A").isEqualTo(TierIndex.EntryState.READY);
            assertThat(disk.state(first.blockKeys().get(1))).as("B").isEqualTo(TierIndex.EntryState.ABSENT);
            assertThat(disk.evictions()).isZero();
            assertThat(f.offload.stats().blocksStored()).containsEntry("disk", 1L);
            assertThat(f.offload.stats().blocksNotStored()).containsEntry(OffloadStats.DISK_PREFIX_KEPT, 1L);
            assertThat(chunkFiles(dir)).singleElement().matches(p -> p.getFileName().toString()
                    .startsWith(first.blockKeys().get(0).toString()));
            f.assertDrained();
        }
        try (OffloadFixture f = OffloadFixture.withDisk(FingerprintEngines.config(4, 64), 4, OffloadConfig.DEFAULT, dir, 1,
                DiskWritePolicy.THROUGH)) {
            f.offload.awaitDiskScan(Duration.ofSeconds(30));
            Request again = f.runOne(prompt, 3);
            assertThat(again.externalHitTokens()).isEqualTo(Map.of("disk", 4));
            assertThat(again.outputIds()).containsExactly(reference(prompt, 3));
            f.assertDrained();
        }
    }

    /**
     * Resetting every tier deletes the disk tier's files too: with its writes finished, and with
     * them still in flight (the disk thread deletes after the writes queued before the reset).
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void resetCacheDeletesEveryChunkFile(boolean drainFirst) {
        try (OffloadFixture f = OffloadFixture.withDisk(FingerprintEngines.config(4, 64), 2, OffloadConfig.DEFAULT, dir, 32,
                DiskWritePolicy.THROUGH)) {
            f.runOne(range(1, 9), 1);
            f.runOne(range(30, 38), 1);
            if (drainFirst) {
                f.engine.drainTransfers();
                assertThat(chunkFiles(dir)).as("files written through").hasSize(4);
            }
            f.engine.resetCache();
            f.engine.drainTransfers();
            assertThat(chunkFiles(dir)).as("files left after the reset").isEmpty();
            assertThat(f.offload.diskIndex().readableCount()).isZero();
            // The tiers work on after it: the same prompt is recomputed, stored and its files written again.
            Request b = f.runOne(range(1, 9), 3);
            assertThat(b.outputIds()).containsExactly(reference(range(1, 9), 3));
            f.engine.drainTransfers();
            assertThat(chunkFiles(dir)).hasSize(2);
            f.assertDrained();
        }
    }

    @Test
    void f02_aCorruptedChunkOnDiskIsDetectedCountedAndDeleted() {
        try (OffloadFixture f = OffloadFixture.withDisk(FingerprintEngines.config(4, 64), 2, OffloadConfig.DEFAULT, dir, 32,
                DiskWritePolicy.THROUGH)) {
            Request a = f.runOne(range(1, 5), 1); // h1 only
            f.runOne(range(30, 38), 1); // evicts h1 from the host tier
            List<Path> files = chunkFiles(dir);
            Path h1 = files.stream().filter(p -> p.getFileName().toString().startsWith(a.blockKeys().get(0).toString()))
                    .findFirst().orElseThrow();
            flipLastByte(h1);
            f.engine.resetDevicePrefixCache();
            Request b = f.runOne(range(1, 5), 3);
            assertThat(f.offload.stats().loadFailures()).isEqualTo(1);
            assertThat(f.offload.diskIndex().state(a.blockKeys().get(0))).as("the bad entry is dropped")
                    .isNotEqualTo(TierIndex.EntryState.LOADING);
            assertThat(b.externalHitTokens().getOrDefault("disk", 0)).isZero();
            assertThat(b.outputIds()).containsExactly(reference(range(1, 5), 3));
            f.assertDrained();
        }
    }

    /**
     * The restart scan reports a file as it was when listed, which may be before this run wrote
     * and evicted its chunk (deleting the file): such a report must not bring the entry back. If
     * it did, the next lookup would load a file that is gone (a failed load), and adopting it
     * would evict a live entry of the full disk tier to make room.
     */
    @Test
    void aChunkDroppedWhileTheScanRunsIsNotAdoptedFromItsStaleReport() throws IOException {
        HeldScan scan = new HeldScan();
        try (OffloadFixture f = OffloadFixture.withDisk(FingerprintEngines.config(4, 64), 2, OffloadConfig.DEFAULT, dir, 2,
                DiskWritePolicy.THROUGH, scan)) {
            Request a = f.runOne(range(1, 5), 1);
            f.engine.drainTransfers();
            BlockKey h1 = a.blockKeys().get(0);
            List<Path> files = chunkFiles(dir);
            assertThat(files).hasSize(1);
            byte[] file = Files.readAllBytes(files.get(0));
            ChunkHeader header = ChunkHeader.readFrom(MemorySegment.ofArray(file), 0);
            assertThat(header.key()).isEqualTo(h1);
            // The scan lists h1's file now and reports it only after the run has evicted it.
            ScannedChunk listed = new ScannedChunk(h1, header.parent(), header.tokens().length, header.payloadLength(),
                    file.length, Files.getLastModifiedTime(files.get(0)).toMillis());
            Request c = f.runOne(range(30, 38), 1); // two chunks into the 2-chunk disk tier: h1 is evicted, its file deleted
            f.engine.drainTransfers();
            assertThat(f.offload.diskIndex().state(h1)).isEqualTo(TierIndex.EntryState.ABSENT);
            assertThat(chunkFiles(dir)).hasSize(2);
            scan.report(listed);
            scan.end();
            assertThat(f.offload.poll()).isEmpty(); // drains the scan's reports, as every step does
            assertThat(f.offload.diskIndex().state(h1)).as("h1 adopted from the stale report")
                    .isEqualTo(TierIndex.EntryState.ABSENT);
            for (BlockKey k : c.blockKeys().subList(0, 2)) {
                assertThat(f.offload.diskIndex().state(k)).as("c's chunk %s", k).isEqualTo(TierIndex.EntryState.READY);
            }
            f.engine.resetDevicePrefixCache();
            Request b = f.runOne(range(1, 5), 3);
            assertThat(f.offload.stats().loadFailures()).isZero();
            assertThat(b.externalHitTokens().getOrDefault("disk", 0)).isZero();
            assertThat(b.outputIds()).containsExactly(reference(range(1, 5), 3));
            f.assertDrained();
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {7, 8})
    void s01_soakWithTheDiskTierInTheChain(long seed) {
        try {
            soak(seed);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("S01 (disk) failed with seed " + seed + ": " + e.getMessage(), e);
        }
    }

    private void soak(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        List<int[]> prefixes = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            prefixes.add(range(1 + 17 * i, 8 + 17 * i + rnd.nextInt(12)));
        }
        DiskWritePolicy policy = rnd.nextBoolean() ? DiskWritePolicy.THROUGH : DiskWritePolicy.ON_EVICT;
        OffloadConfig oc = OffloadConfig.DEFAULT.withBlocksPerChunk(1 + rnd.nextInt(2)).withJobDeadline(Duration.ofSeconds(5));
        try (OffloadFixture f = OffloadFixture.withDisk(FingerprintEngines.config(4, 20).withMaxBatchTokens(16 + rnd.nextInt(40)),
                3, oc, dir, 12, policy)) {
            List<Request> all = new ArrayList<>();
            int submitted = 0;
            int steps = 0;
            int target = REQUESTS;
            while (submitted < target || f.engine.hasWork()) {
                if (submitted == target && target < 3 * REQUESTS && !exercised(f)) {
                    target += REQUESTS / 10; // the tiers' timing decides how soon the disk is hit: go on, bounded
                }
                for (int k = rnd.nextInt(3); k > 0 && submitted < target; k--, submitted++) {
                    int[] prefix = prefixes.get(rnd.nextInt(prefixes.size()));
                    int[] prompt = Arrays.copyOf(prefix, prefix.length + rnd.nextInt(6));
                    for (int j = prefix.length; j < prompt.length; j++) {
                        prompt[j] = 1 + rnd.nextInt(FingerprintEngines.VOCAB - 1);
                    }
                    all.add(f.submit(prompt, 1 + rnd.nextInt(10)));
                }
                if (rnd.nextInt(40) == 0 && !all.isEmpty()) {
                    f.engine.abort(all.get(rnd.nextInt(all.size())).id());
                }
                if (rnd.nextInt(30) == 0) {
                    List<Path> files = chunkFiles(dir);
                    if (!files.isEmpty()) {
                        Path victim = files.get(rnd.nextInt(files.size()));
                        if (rnd.nextBoolean()) {
                            flipLastByte(victim);
                        } else {
                            try {
                                Files.deleteIfExists(victim);
                            } catch (IOException e) {
                                throw new UncheckedIOException(e);
                            }
                        }
                    }
                }
                if (rnd.nextInt(300) == 0) {
                    f.engine.resetCache();
                }
                f.engine.resetDevicePrefixCache(); // every step: reuse must come from the tiers
                long before = f.engine.stats().steps();
                f.step();
                if (f.engine.stats().steps() == before && f.offload.busy()) {
                    f.engine.drainTransfers();
                }
                assertThat(++steps).isLessThan(600 * REQUESTS);
            }
            f.engine.drainTransfers();
            f.checkInvariants();
            f.assertDrained();
            FingerprintEngines.assertMatchReferences(all);
            var s = f.offload.stats();
            assertThat(s.externalHitTokens().getOrDefault("disk", 0L)).as("disk hits").isPositive();
            assertThat(s.blocksStored().getOrDefault("disk", 0L)).as("disk stores").isPositive();
            assertThat(f.engine.stats().preemptions()).as("preemptions").isPositive();
        }
    }

    /** Whether the soak has hit and stored to disk and preempted, what it is there to exercise. */
    private static boolean exercised(OffloadFixture f) {
        var s = f.offload.stats();
        return s.externalHitTokens().getOrDefault("disk", 0L) > 0 && s.blocksStored().getOrDefault("disk", 0L) > 0
                && f.engine.stats().preemptions() > 0;
    }
}
