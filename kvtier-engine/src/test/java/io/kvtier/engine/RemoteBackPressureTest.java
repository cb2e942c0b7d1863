package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords.Record;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.RemoteStats;
import io.kvtier.tier.remote.FakeSlowProxy;
import io.kvtier.tier.remote.OwnRedis;
import io.kvtier.tier.remote.RemoteSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Back-pressure: a real Redis behind a {@link FakeSlowProxy} answers every command correctly but
 * about 2.4 s late (1.2 s each way), above half the 4 s timeout, and never times out. The remote
 * tier drops the stores it cannot send soon (counted {@code slow}), keeps one trial write in
 * flight, and never waits: the engine's steps go on and requests finish while a write is still
 * out; every output equals the reference.
 */
class RemoteBackPressureTest {

    private static final List<Record> RECORDS = ReferenceRecords.load();

    @TempDir
    Path dir;

    @Test
    void aStoreWhoseLatencyStaysHighHasItsStoresDroppedAndCountedNeverWaitedFor() throws Exception {
        List<String> warnings = new CopyOnWriteArrayList<>();
        try (OwnRedis redis = OwnRedis.start(dir.resolve("r")); FakeSlowProxy slow = new FakeSlowProxy(redis.port(), 1200)) {
            RemoteSettings s = RemoteSettings.of(List.of(slow.url()), false, "slow", null).withTimeout(Duration.ofSeconds(4));
            OffloadSetup setup = new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT).withRemote(
                    new OffloadSetup.RemoteSetup(s, DiskWritePolicy.THROUGH, 1, 64L << 20, warnings::add));
            try (Engine e = LlamaRunner.engine(Checkpoint.load(ReferenceRecords.model()), EngineConfig.of(16, 1024 / 16 * 2),
                    Kernels.best(), 2, setup)) {
                long stepsWhileWriting = 0;
                int finishedWhileWriting = 0;
                for (int i : new int[] {7, 3, 4, 5}) {
                    Record rec = RECORDS.get(i);
                    e.resetDevicePrefixCache();
                    Request r = new Request(i, rec.promptIds(), rec.maxTokens(), SamplingParams.GREEDY, ExtraKeys.NONE);
                    e.submit(r);
                    while (!r.isFinished()) {
                        boolean writing = e.offload().remoteStats().bytesInFlight() > 0;
                        e.step();
                        stepsWhileWriting += writing ? 1 : 0;
                    }
                    finishedWhileWriting += e.offload().remoteStats().bytesInFlight() > 0 ? 1 : 0;
                    assertThat(r.outputIds()).as("record %d", i).containsExactly(rec.expectedOutput());
                    e.offload().checkInvariants();
                    if (i == 7) {
                        e.drainTransfers(); // the test (not the engine) waits once, so the latency is known
                        assertThat(e.offload().remoteStats().writeLatencyNanos()).isGreaterThan(Duration.ofSeconds(2).toNanos());
                    }
                }
                RemoteStats rs = e.offload().remoteStats();
                assertThat(rs.storesDroppedBy().getOrDefault(RemoteStats.SLOW, 0L)).as("%s", rs.storesDroppedBy()).isPositive();
                assertThat(stepsWhileWriting).as("engine steps run while a write is out").isPositive();
                assertThat(finishedWhileWriting).as("requests finished while a write was out").isPositive();
                e.drainTransfers();
                assertThat(rs.storeFailures()).isEmpty();
                assertThat(e.offload().remoteStats().chunksStored()).as("the trial writes got through").isPositive();
                assertThat(Long.parseLong(redis.cli("dbsize"))).isPositive().isLessThanOrEqualTo(e.offload().remoteStats().chunksStored());
            }
        }
        assertThat(warnings).isEmpty();
    }
}
