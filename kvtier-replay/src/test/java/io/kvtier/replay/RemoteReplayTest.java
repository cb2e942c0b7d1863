package io.kvtier.replay;

import static io.kvtier.replay.ReplayTraces.req;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.replay.trace.Trace;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The replay's simulated remote tier (issue 11): the real remote chain (probes, promotion into
 * the host, write-through) over a simulated store with LRU capacity and its own cost lane.
 */
class RemoteReplayTest {

    /** Prefix A, then prefix B (which evicts A from a 3-chunk host tier and from the 4-block device), then A again. */
    private static final Trace A_B_A = ReplayTraces.trace(req(1537, 1, 2, 3, 4), req(1537, 5, 6, 7, 8), req(1537, 1, 2, 3, 4));

    private static ReplayConfig threeHostChunks(Capacity remote) {
        return ReplayTraces.instant(Capacity.tokens(3 * 512), Policy.LRU)
                .withRemote(new ReplayConfig.Remote(remote, 200_000, 2.5e9));
    }

    @Test
    void aPrefixEvictedFromTheHostIsHitInTheRemoteTier() {
        ReplayResult without = Replay.run(A_B_A, threeHostChunks(Capacity.tokens(0)), Progress.none());
        assertThat(without.remote()).isNull();
        assertThat(without.hitTokens(2)).as("host and device lost prefix A").isZero();

        ReplayResult with = Replay.run(A_B_A, threeHostChunks(Capacity.INF), Progress.none());
        // The hit never covers the last token: 3 blocks of 512 out of 1537 tokens.
        assertThat(with.hitTokens(2)).isEqualTo(1536);
        assertThat(with.remoteHitTokens()).isEqualTo(1536);
        assertThat(with.remote().chunksWritten()).as("A's and B's three full prompt chunks").isEqualTo(6);
        assertThat(with.remoteWritesPerHit()).isEqualTo(2.0);
        assertThat(with.hitTokensByTier()).containsEntry("remote", 1536L);
        assertThat(with.tokenHitRatio()).isGreaterThan(without.tokenHitRatio());
    }

    @Test
    void aStoreTooSmallForThePrefixEvictsItAndTheHitIsLost() {
        ReplayResult r = Replay.run(A_B_A, threeHostChunks(Capacity.tokens(3 * 512)), Progress.none());
        // The store keeps exactly its capacity; A's chunks were evicted by B's, so the third request misses.
        assertThat(r.remote().evictions()).isEqualTo(r.remote().chunksWritten() - 3);
        assertThat(r.remoteHitTokens()).isZero();
        assertThat(r.remoteWritesPerHit()).isNaN();
    }

    @Test
    void tableAndJsonReportTheRemoteTier() {
        ReplayResult r = Replay.run(A_B_A, threeHostChunks(Capacity.INF), Progress.none());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ReplayReport.printTable(new PrintStream(bytes, true, StandardCharsets.UTF_8), r);
        assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("remote", "2.00 per chunk hit", "+ remote)");
        JsonNode j = new ObjectMapper().valueToTree(ReplayReport.toJson(r));
        assertThat(j.get("hit_tokens_by_tier").get("remote").asLong()).isEqualTo(1536);
        assertThat(j.get("chunks_written_by_tier").get("remote").asLong()).isEqualTo(6);
        assertThat(j.get("remote_writes_per_hit").asDouble()).isEqualTo(2.0);
        assertThat(j.get("remote_jobs").asLong()).isPositive();
    }

    /**
     * Trial 5's finding: the optimum line summed the remote capacity capped at the trace's
     * distinct chunks, so "Belady at N chunks = device + host + remote" did not add up.
     */
    @Test
    void theOptimumLineSumsTheCapacitiesItNames() {
        // A remote store of 20 chunks, more than the trace's 8 distinct ones.
        ReplayResult r = Replay.run(A_B_A, threeHostChunks(Capacity.tokens(20 * 512)), Progress.none());
        long sum = r.deviceBlocks() + r.hostChunks() + 20;
        assertThat(r.hostChunks()).isEqualTo(3);
        assertThat(r.optimum().capacityChunks()).isEqualTo(sum);
        String table = table(r);
        assertThat(table).contains(String.format("%,d blocks", r.deviceBlocks()), "(3 chunks)", "(20 chunks)",
                "optimum (Belady at " + sum + " chunks = device + host + remote)");
        // Room for every distinct chunk: the optimum is the ceiling.
        assertThat(r.optimum().beladyHitTokens()).isEqualTo(r.optimum().ceilingHitTokens());

        ReplayResult inf = Replay.run(A_B_A, threeHostChunks(Capacity.INF), Progress.none());
        assertThat(inf.optimum().capacityChunks()).isEqualTo(Long.MAX_VALUE);
        assertThat(table(inf)).contains("optimum (Belady at inf = device + host + remote)");
        assertThat(inf.optimum().beladyHitTokens()).isEqualTo(r.optimum().beladyHitTokens());
    }

    private static String table(ReplayResult r) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ReplayReport.printTable(new PrintStream(bytes, true, StandardCharsets.UTF_8), r);
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void timedModeChargesTheRemoteLane() {
        ReplayConfig timed = ReplayConfig.defaults(ReplayConfig.Mode.TIMED).withHost(Capacity.tokens(3 * 512))
                .withDevice(Capacity.MIN).withMaxTokens(1);
        Trace spaced = ReplayTraces.trace(ReplayTraces.at(0, 1537, 1, 1, 2, 3, 4), ReplayTraces.at(500, 1537, 1, 5, 6, 7, 8),
                ReplayTraces.at(1000, 1537, 1, 1, 2, 3, 4));
        ReplayResult fast = Replay.run(spaced, timed.withRemote(new ReplayConfig.Remote(Capacity.INF, 0, 1e12)), Progress.none());
        ReplayResult slow = Replay.run(spaced, timed.withRemote(new ReplayConfig.Remote(Capacity.INF, 50_000_000, 1e12)),
                Progress.none());
        assertThat(fast.remoteHitTokens()).isEqualTo(1536);
        assertThat(slow.remoteHitTokens()).isEqualTo(1536);
        // The third request's read pays the 50 ms latency (no probe: the first request's write left a fresh hint).
        long extra = slow.timing().ttftNanos()[2] - fast.timing().ttftNanos()[2];
        assertThat(extra).isBetween(50_000_000L, 60_000_000L);
    }

    @Test
    void aRemoteTierNeedsAHostTierAndSaneFigures() {
        ReplayConfig d = ReplayConfig.defaults(ReplayConfig.Mode.INSTANT);
        assertThatThrownBy(() -> d.withHost(Capacity.tokens(0)).withRemote(new ReplayConfig.Remote(Capacity.INF, 1, 1)))
                .hasMessageContaining("--remote-cache-tokens").hasMessageContaining("--host-cache-tokens");
        assertThatThrownBy(() -> new ReplayConfig.Remote(Capacity.INF, -1, 1)).hasMessageContaining("--remote-latency-us");
        assertThatThrownBy(() -> new ReplayConfig.Remote(Capacity.INF, 1, 0)).hasMessageContaining("--remote-gbps");
        assertThatThrownBy(() -> new ReplayConfig.Remote(Capacity.MIN, 1, 1)).hasMessageContaining("--remote-cache-tokens");
    }
}
