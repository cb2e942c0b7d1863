package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadStats;
import io.kvtier.tier.TierIndex;
import io.kvtier.tier.remote.OwnRedis;
import io.kvtier.tier.remote.RemoteSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 11: an intact chunk the store holds always loads. A prompt runs once (its first chunks go
 * to the host tier and, written through, to the store); then the host tier loses some of its
 * leading chunks and the device prefix cache is dropped, and the same prompt runs again. The
 * chunks the host lost come back from the store, exactly those, and the chunks after them from
 * the host tier; the outputs equal the references. It used to load nothing when the host still
 * held a later chunk: the promotion asked the host tier for the whole run of store hits, that
 * later chunk included, and was refused (remote7's "intact coda" of the soak).
 */
class RemoteIntactChunkTest {

    @TempDir
    Path dir;

    /**
     * @param lost   leading chunks removed from the host tier before the rerun
     * @param outage whether the server is killed and restarted (empty, then refilled) before the rerun
     */
    @ParameterizedTest(name = "{0} block(s) per chunk, host tier of {1} chunks, {2} lost, outage {3}")
    @CsvSource({"1, 2, 1, false", "2, 3, 1, false", "1, 3, 2, false", "2, 2, 2, false", "1, 3, 3, false",
                "1, 3, 1, true"})
    void aChunkTheHostLostLoadsFromTheStore(int blocksPerChunk, int hostChunks, int lost, boolean outage) throws Exception {
        try (OwnRedis redis = OwnRedis.start(dir.resolve("redis"))) {
            OffloadConfig oc = OffloadConfig.DEFAULT.withBlocksPerChunk(blocksPerChunk).withJobDeadline(Duration.ofSeconds(10));
            RemoteSettings settings = RemoteSettings.of(List.of(redis.url()), false, "intact", null)
                    .withTimeout(Duration.ofSeconds(5)).withBreakerOpen(Duration.ofMillis(100));
            try (OffloadFixture f = OffloadFixture.withRemote(FingerprintEngines.config(4, 64), hostChunks, oc, "lru",
                    settings, 1L << 20)) {
                int chunkTokens = 4 * blocksPerChunk;
                int[] prompt = FingerprintEngines.randomTokens(new SplittableRandom(blocksPerChunk * 31L + hostChunks), 8 * chunkTokens + 3);
                Request first = f.runOne(prompt, 2);
                f.engine.drainTransfers();
                if (outage) {
                    redis.kill();
                    redis.restart();
                    // Once the tier serves again, the same prompt (its host chunks dropped) writes them anew.
                    for (int round = 0; round < 200 && !holdsAll(f, redis, first, hostChunks); round++) {
                        Thread.sleep(20);
                        f.engine.resetCache();
                        f.runOne(prompt, 2);
                        f.engine.drainTransfers();
                    }
                }
                for (int c = 0; c < hostChunks; c++) {
                    assertThat(f.host.index().state(chunkKey(f, first, c))).as("host chunk %d before the rerun", c)
                            .isEqualTo(TierIndex.EntryState.READY);
                    assertThat(redis.cli("exists", f.remoteKeys.of(chunkKey(f, first, c))).trim())
                            .as("the store holds chunk %d", c).isEqualTo("1");
                }
                for (int c = 0; c < lost; c++) {
                    assertThat(f.host.index().remove(chunkKey(f, first, c))).isTrue();
                }
                f.engine.resetDevicePrefixCache();
                long loadedBefore = f.offload.remoteStats().chunksLoaded();
                long failuresBefore = f.offload.stats().loadFailures();
                Request again = f.runOne(prompt, 2);

                assertThat(f.offload.remoteStats().chunksLoaded() - loadedBefore).as("chunks loaded from the store")
                        .isEqualTo(lost);
                assertThat(again.externalHitTokens()).as("hit tokens by tier").isEqualTo(hostChunks == lost
                        ? java.util.Map.of("remote", lost * chunkTokens)
                        : java.util.Map.of("remote", lost * chunkTokens, "host", (hostChunks - lost) * chunkTokens));
                assertThat(f.offload.stats().loadFailures() - failuresBefore).isZero();
                assertThat(f.offload.stats().blocksNotStored()).doesNotContainKey(OffloadStats.REMOTE_NOT_PROMOTED);
                FingerprintEngines.assertMatchReferences(List.of(first, again));
                f.checkInvariants();
                f.assertDrained();
                OutageLines.assertOnlyOutages(f.remoteWarnings); // injected outages are said, nothing else
            }
        }
    }

    private static BlockKey chunkKey(OffloadFixture f, Request r, int chunk) {
        return r.blockKeys().get((chunk + 1) * f.blocksPerChunk - 1);
    }

    private static boolean holdsAll(OffloadFixture f, OwnRedis redis, Request r, int chunks) throws Exception {
        for (int c = 0; c < chunks; c++) {
            if (!redis.cli("exists", f.remoteKeys.of(chunkKey(f, r, c))).trim().equals("1")) {
                return false;
            }
        }
        return true;
    }
}
