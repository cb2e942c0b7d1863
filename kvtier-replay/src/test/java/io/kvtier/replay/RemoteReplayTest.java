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
        // An unbounded store holds every distinct chunk of the trace: Belady's capacity counts those (a new user
        // read 'device + host + remote' against the capacities printed above it, which did not add up).
        assertThat(r.optimum().remoteCappedAt()).as("A's and B's three full blocks each").isEqualTo(6);
        assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("remote", "2.00 per chunk hit",
                "= device + host + remote capped at the trace's 6 distinct chunks)");
        ReplayResult small = Replay.run(A_B_A, threeHostChunks(Capacity.tokens(3 * 512)), Progress.none());
        assertThat(small.optimum().remoteCappedAt()).isEqualTo(-1);
        assertThat(small.optimum().capacityChunks()).as("the store's 3 chunks counted whole")
                .isEqualTo(r.optimum().capacityChunks() - 6 + 3);
        ByteArrayOutputStream smallTable = new ByteArrayOutputStream();
        ReplayReport.printTable(new PrintStream(smallTable, true, StandardCharsets.UTF_8), small);
        assertThat(smallTable.toString(StandardCharsets.UTF_8)).contains("= device + host + remote)");
        JsonNode j = new ObjectMapper().valueToTree(ReplayReport.toJson(r));
        assertThat(j.get("hit_tokens_by_tier").get("remote").asLong()).isEqualTo(1536);
        assertThat(j.get("chunks_written_by_tier").get("remote").asLong()).isEqualTo(6);
        assertThat(j.get("remote_writes_per_hit").asDouble()).isEqualTo(2.0);
        assertThat(j.get("remote_jobs").asLong()).isPositive();
    }

    @Test
    void timedModeChargesTheRemoteLane() {
        ReplayConfig timed = ReplayConfig.defaults(ReplayConfig.Mode.TIMED).withPolicy(Policy.LRU).withHost(Capacity.tokens(3 * 512))
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
