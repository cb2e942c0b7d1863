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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster tier whose first seed is frozen ({@code SIGSTOP}, a replica) when the engine starts
 * (trial 8 #7: under load, "answered" came, yet the request made no probe and its stores were
 * dropped). The topology waits for that seed's handshake deadline, so the engine starts with the
 * tier "still connecting"; once the tier says it answered, its connection to every master is
 * already open (a master's first command used to open it, and under load that handshake alone
 * outlasted the operation deadline), and the next requests probe the store and every store
 * succeeds. No timing is asserted: the test waits for the line, then counts.
 */
class RemoteClusterStartTest {

    @TempDir
    Path dir;

    private final List<String> warnings = new CopyOnWriteArrayList<>();

    @Test
    void aTierStartedWithAFrozenSeedServesTheRequestsAfterItAnswers() throws Exception {
        try (OwnCluster cluster = OwnCluster.start(dir.resolve("cluster"))) {
            List<OwnRedis> masters = cluster.masters();
            OwnRedis frozen = cluster.replicaOf(masters.get(0));
            frozen.freeze();
            try {
                RemoteSettings s = RemoteSettings.of(List.of(frozen.url(), masters.get(0).url()), true, "start", null)
                        .withTimeout(Duration.ofSeconds(1));
                OffloadSetup setup = new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT).withRemote(
                        new OffloadSetup.RemoteSetup(s, DiskWritePolicy.THROUGH, 1, 64L << 20, warnings::add));
                try (Engine e = LlamaRunner.engine(Checkpoint.load(ReferenceRecords.model()), EngineConfig.of(16, 1024 / 16 * 2),
                        Kernels.best(), 2, setup)) {
                    assertThat(warnings).as("the frozen seed holds the topology past open()'s wait").hasSize(1);
                    assertThat(warnings.get(0)).startsWith("remote tier: cannot reach ").endsWith(
                            "(no answer within 4000 ms; still connecting); every lookup misses until it answers");
                    awaitAnswer();
                    for (OwnRedis m : masters) {
                        assertThat(ourConnections(m)).as("connections of the tier to the master on port %d once it answered",
                                m.port()).isPositive();
                    }
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
        assertThat(warnings).hasSize(2);
    }

    /** Waits (at most 60 s) for the tier's line saying it answered. */
    private void awaitAnswer() throws InterruptedException {
        for (int i = 0; i < 600 && warnings.stream().noneMatch(w -> w.endsWith("answered; lookups use it from now")); i++) {
            Thread.sleep(100);
        }
        assertThat(warnings).as("the tier answered within 60 s").anyMatch(w -> w.endsWith("answered; lookups use it from now"));
    }

    /**
     * Clients of {@code m} that are this process's data connections: not a replica's link, not
     * Lettuce's topology refresh (it names its connections), not this query.
     */
    private static int ourConnections(OwnRedis m) throws Exception {
        List<String> ours = new ArrayList<>();
        for (String line : m.cli("client", "list").split("\\R")) {
            if (!line.isBlank() && !line.contains("flags=S") && !line.contains("name=lettuce#ClusterTopologyRefresh")
                    && !line.contains("cmd=client|list")) {
                ours.add(line);
            }
        }
        return ours.size();
    }
}
