package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.DigestCache;
import io.kvtier.model.Kernels;
import io.kvtier.model.Models;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.GroupStats;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.tier.remote.OwnRedis;
import io.kvtier.tier.remote.RemoteSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gemma3 fixture's two KV groups share one remote store (a trial: one Redis outage printed
 * "stopped answering" twice and "answers again" twice, one per group's connection, and a store
 * not there at start "cannot reach" twice): one line per outage, one opening in the stats, one
 * line for values above the store's limit.
 */
class Gemma3OneRemoteStoreTest {

    @TempDir
    Path tmp;

    private final List<String> warnings = new CopyOnWriteArrayList<>();

    private Engine engine(String url) {
        return engine(RemoteSettings.of(List.of(url), false, "one-store", null).withTimeout(Duration.ofMillis(300))
                .withBreakerOpen(Duration.ofMillis(300)));
    }

    private Engine engine(RemoteSettings s) {
        OffloadSetup setup = new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT).withRemote(
                new OffloadSetup.RemoteSetup(s, DiskWritePolicy.THROUGH, 1, 64L << 20, warnings::add));
        return LlamaRunner.engine(Models.load(Gemma3EngineTest.MODEL, new DigestCache(tmp.resolve("digests"))),
                EngineConfig.of(16, 64).withMaxBatchTokens(48).withStopToken(-1), Kernels.best(), 2, setup);
    }

    /** Waits (60 s at most) until a warning starts with {@code prefix}. */
    private void awaitLine(String prefix) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (warnings.stream().noneMatch(w -> w.startsWith(prefix)) && System.nanoTime() < end) {
            Thread.sleep(20);
        }
    }

    @Test
    void aStoreNotThereAtStartIsOneLine() throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        try (Engine e = engine("redis://127.0.0.1:" + port)) {
            assertThat(e.kvCacheManager().groups()).hasSize(2);
            assertThat(warnings).singleElement().asString().startsWith("remote tier: cannot reach redis://127.0.0.1:" + port);
            assertThat(GroupStats.remoteTotal(e.offload()).breakerOpens()).as("one store, one opening").isEqualTo(1);
        }
    }

    /** Both groups' chunks are above the limit: each group's copier said so once, two lines for one setting. */
    @Test
    void aValueLimitBelowTheChunkSizeIsOneLine() throws Exception {
        try (OwnRedis redis = OwnRedis.start(tmp.resolve("redis"));
             Engine e = engine(RemoteSettings.of(List.of(redis.url()), false, "one-store", null).withMaxValueBytes(1024))) {
            assertThat(e.kvCacheManager().groups()).hasSize(2);
            e.submit(new Request(0, Gemma3EngineTest.REFS.get(2).promptIds(), 4, SamplingParams.GREEDY, ExtraKeys.NONE));
            e.runToCompletion();
            e.drainTransfers();
            assertThat(GroupStats.remotePerGroup(e.offload())).as("both groups refused a value")
                    .allSatisfy(g -> assertThat(g.storeFailures().get("oversize")).isPositive());
        }
        assertThat(warnings).singleElement().asString().startsWith("remote tier: a chunk's value is ")
                .contains(" bytes, above the store's limit of 1024 bytes");
    }

    @Test
    void anOutageIsOneLineAndItsEndOne() throws Exception {
        try (OwnRedis redis = OwnRedis.start(tmp.resolve("redis")); Engine e = engine(redis.url())) {
            assertThat(e.kvCacheManager().groups()).hasSize(2);
            assertThat(warnings).isEmpty();
            redis.freeze();
            awaitLine("remote tier: " + redis.url() + " stopped answering");
            redis.thaw();
            awaitLine("remote tier: " + redis.url() + " answers again");
            Thread.sleep(1000); // a second connection's lines would come within its own trials (300 ms)
            assertThat(warnings).as("the lines of one outage").hasSize(2);
            assertThat(warnings.get(0)).startsWith("remote tier: " + redis.url() + " stopped answering (");
            assertThat(warnings.get(1)).isEqualTo("remote tier: " + redis.url() + " answers again");
            assertThat(GroupStats.remoteTotal(e.offload()).breakerOpens()).isEqualTo(1);
            assertThat(GroupStats.remotePerGroup(e.offload())).allSatisfy(g -> assertThat(g.breakerOpens()).isEqualTo(1));
        }
    }
}
