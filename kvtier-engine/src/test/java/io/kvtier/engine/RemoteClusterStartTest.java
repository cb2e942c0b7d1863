package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.RemoteStats;
import io.kvtier.tier.remote.OwnCluster;
import io.kvtier.tier.remote.OwnRedis;
import io.kvtier.tier.remote.RemoteSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster tier started while a node that is not a seed is frozen ({@code SIGSTOP}, a replica;
 * trial 8 #7: under load the cluster tier said "still connecting", then "answered", yet the
 * request made no probe and its stores were dropped). The first topology used to be asked of
 * every node the seed named, and waited for the frozen one's 10 s handshake deadline, so the
 * engine started with the tier unavailable and its one request missed and dropped its stores.
 * It is now asked of the seeds only: the tier is connected when the engine starts, the requests
 * probe the store, and every store succeeds. No timing is asserted: the engine's start either
 * printed the line or did not, then the test counts.
 */
class RemoteClusterStartTest {

    @TempDir
    Path dir;

    private final List<String> warnings = new CopyOnWriteArrayList<>();

    @Test
    void aFrozenNodeThatIsNotASeedDoesNotHoldTheStart() throws Exception {
        try (OwnCluster cluster = OwnCluster.start(dir.resolve("cluster"))) {
            OwnRedis seed = cluster.masters().get(0);
            OwnRedis frozen = cluster.replicaOf(seed);
            frozen.freeze();
            try {
                RemoteSettings s = RemoteSettings.of(List.of(seed.url()), true, "start", null).withTimeout(Duration.ofSeconds(1));
                OffloadSetup setup = new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT).withRemote(
                        new OffloadSetup.RemoteSetup(s, DiskWritePolicy.THROUGH, 1, 64L << 20, warnings::add));
                try (Engine e = LlamaRunner.engine(Checkpoint.load(ReferenceRecords.model()), EngineConfig.of(16, 1024 / 16 * 2),
                        Kernels.best(), 2, setup)) {
                    assertThat(warnings).as("the tier was connected when the engine started").isEmpty();
                    SequentialRuns.run(e, 0, 1, 2, 3, 4, 5, 6, 7); // checks every output against the reference
                    RemoteStats rs = e.offload().remoteStats();
                    String summary = "probes=" + rs.probes() + " stored=" + rs.chunksStored() + " dropped="
                            + rs.storesDroppedBy() + " storeFailures=" + rs.storeFailures();
                    assertThat(rs.probes()).as(summary).isPositive();
                    assertThat(rs.chunksStored()).as(summary).isPositive();
                    assertThat(rs.storesDropped()).as(summary).isZero();
                    assertThat(rs.storeFailures()).as(summary).isEmpty();
                }
            } finally {
                frozen.thaw();
            }
        }
        assertThat(warnings).isEmpty();
    }
}
