package io.kvtier.engine;

import static io.kvtier.engine.FingerprintEngines.range;
import static io.kvtier.engine.FingerprintEngines.reference;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadStats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15 and the disk housekeeping of issue 14 on the fingerprint model (block size 4): a
 * prompt of 15 full blocks before its last token, a host tier of 8 chunks, real files.
 */
class LongPromptOffloadTest {

    /** 61 tokens: 15 full 4-token blocks before the last token. */
    private static final int[] PROMPT = range(1, 61);
    private static final int MAX_TOKENS = 2;

    @TempDir
    Path dir;

    private OffloadFixture withDisk(int hostChunks, int diskChunks, OffloadConfig oc, DiskWritePolicy policy) {
        OffloadFixture f = OffloadFixture.withDisk(FingerprintEngines.config(4, 64), hostChunks, oc, dir, diskChunks, policy);
        f.offload.awaitDiskScan(Duration.ofSeconds(30));
        f.engine.drainTransfers(); // the scan's deletions, if any
        return f;
    }

    private OffloadFixture withDisk(int hostChunks, int diskChunks) {
        return withDisk(hostChunks, diskChunks, OffloadConfig.DEFAULT, DiskWritePolicy.THROUGH);
    }

    private static Request runFresh(OffloadFixture f) {
        f.engine.resetDevicePrefixCache();
        Request r = f.runOne(PROMPT, MAX_TOKENS);
        assertThat(r.outputIds()).containsExactly(reference(PROMPT, MAX_TOKENS));
        return r;
    }

    @Test
    void aPromptLongerThanTheHostTierStoresItsFittingPrefixAndItsRepeatHitsIt() {
        try (OffloadFixture f = new OffloadFixture(4, 64, 8, OffloadConfig.DEFAULT)) {
            runFresh(f);
            OffloadStats s = f.offload.stats();
            assertThat(s.blocksStored()).isEqualTo(Map.of("host", 8L));
            assertThat(s.blocksNotStored()).isEqualTo(Map.of(OffloadStats.LONGER_THAN_HOST, 7L));
            assertThat(s.storeRefusals()).as("nothing impossible is retried").isZero();
            Request again = runFresh(f);
            assertThat(again.externalHitTokens()).isEqualTo(Map.of("host", 32));
            f.assertDrained();
        }
    }

    @Test
    void aDiskHitLongerThanTheHostTierPromotesItsFittingPrefix() {
        try (OffloadFixture f = withDisk(16, 64)) {
            runFresh(f);
            assertThat(f.offload.stats().blocksStored().get("disk")).isEqualTo(15);
        }
        try (OffloadFixture f = withDisk(8, 64)) { // a restart with a host tier half the prompt's size
            Request r = runFresh(f);
            assertThat(r.externalHitTokens()).isEqualTo(Map.of("disk", 32));
            assertThat(f.offload.stats().blocksNotStored()).containsEntry(OffloadStats.NOT_PROMOTED, 7L);
            f.assertDrained();
        }
    }

    @Test
    void aOneChunkHostTierStillPromotesOneChunk() {
        try (OffloadFixture f = withDisk(16, 64)) {
            runFresh(f);
        }
        try (OffloadFixture f = withDisk(1, 64)) {
            assertThat(runFresh(f).externalHitTokens()).isEqualTo(Map.of("disk", 4));
        }
    }

    @Test
    void theChunkGeometryIsPartOfTheNamespaceSoTwoGeometriesNeverOverwriteEachOther() {
        try (OffloadFixture f = withDisk(16, 64)) {
            runFresh(f);
        }
        try (OffloadFixture f = withDisk(16, 64, OffloadFixture.chunks(2), DiskWritePolicy.THROUGH)) {
            runFresh(f);
            assertThat(f.offload.stats().blocksStored().get("disk")).isEqualTo(14); // 7 two-block chunks
        }
        assertThat(namespaceDirs()).hasSize(2);
        try (OffloadFixture f = withDisk(16, 64)) {
            Request r = runFresh(f);
            assertThat(r.externalHitTokens()).isEqualTo(Map.of("disk", 60));
            assertThat(f.offload.stats().loadFailures()).isZero();
        }
    }

    @Test
    void aRestartWithASmallerBudgetDeletesTheFilesBeyondIt() {
        try (OffloadFixture f = withDisk(16, 64)) {
            runFresh(f);
        }
        assertThat(chunkFiles()).hasSize(15);
        try (OffloadFixture f = withDisk(16, 4)) {
            assertThat(f.offload.diskIndex().readableCount()).isEqualTo(4);
            assertThat(chunkFiles()).as("one folder, one budget, enforced when the scan adopts the files").hasSize(4);
        }
    }

    @Test
    void badChunksDeepInAStoredChainAreAllReplacedByOneRecompute() {
        try (OffloadFixture f = withDisk(16, 64)) {
            Request r = runFresh(f);
            for (int chunk : new int[] {3, 6, 9, 12}) {
                flipLastByte(fileOf(r.blockKeys().get(chunk).toString()));
            }
        }
        try (OffloadFixture f = withDisk(16, 64)) {
            Request r = runFresh(f);
            assertThat(r.externalHitTokens()).isEqualTo(Map.of("disk", 12)); // up to the first bad chunk
            assertThat(f.offload.stats().loadFailures()).isEqualTo(1);
        }
        try (OffloadFixture f = withDisk(16, 64)) { // the next restart finds the whole chain good
            Request r = runFresh(f);
            assertThat(r.externalHitTokens()).isEqualTo(Map.of("disk", 60));
            assertThat(f.offload.stats().loadFailures()).isZero();
        }
    }

    @Test
    void writeOnEvictFlushesTheHostTierToDiskAtACleanShutdown() {
        try (OffloadFixture f = withDisk(16, 64, OffloadConfig.DEFAULT, DiskWritePolicy.ON_EVICT)) {
            runFresh(f);
            assertThat(f.offload.stats().blocksStored().getOrDefault("disk", 0L)).as("nothing evicted yet").isZero();
        }
        assertThat(chunkFiles()).hasSize(15);
        try (OffloadFixture f = withDisk(16, 64)) {
            assertThat(runFresh(f).externalHitTokens()).isEqualTo(Map.of("disk", 60));
        }
    }

    private List<Path> namespaceDirs() {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(Files::isDirectory).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private List<Path> chunkFiles() {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".kvc")).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Path fileOf(String keyHex) {
        return chunkFiles().stream().filter(p -> p.getFileName().toString().startsWith(keyHex)).findFirst().orElseThrow();
    }

    private static void flipLastByte(Path p) {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, ch.size() - 1);
            b.put(0, (byte) (b.get(0) ^ 0x5A)).rewind();
            ch.write(b, ch.size() - 1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
