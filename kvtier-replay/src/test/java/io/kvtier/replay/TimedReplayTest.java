package io.kvtier.replay;

import static io.kvtier.replay.ReplayTraces.at;
import static io.kvtier.replay.ReplayTraces.trace;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ScheduledChunk;
import io.kvtier.replay.sim.CostModel;
import io.kvtier.replay.trace.Trace;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Timed mode on the virtual clock: latencies composed exactly from the cost model. */
class TimedReplayTest {

    private static final CostModel COST = CostModel.REFERENCE;

    private static long pass(ScheduledChunk... chunks) {
        return COST.forwardNanos(List.of(chunks));
    }

    private static ScheduledChunk chunk(int start, int tokens) {
        return new ScheduledChunk(0, new int[tokens], start, new int[0], true);
    }

    private static ReplayConfig timed(Capacity device) {
        return ReplayConfig.defaults(ReplayConfig.Mode.TIMED).withDevice(device);
    }

    @Test
    void aLoneRequestTakesItsPrefillThenOneDecodeStepPerToken() {
        Trace t = trace(at(0, 1000, 3, 0, 1));
        ReplayResult r = Replay.run(t, timed(Capacity.MIN), Progress.none());
        long prefill = pass(chunk(0, 1000));
        // 0.5 ms + max(5.99 ms, 1000 x 32.46 us) + max(500,500 pairs x 1.31 ns, 1000 x 48.9 ns)
        assertThat(prefill).isEqualTo(Math.round(500_000 + 1000 * COST.linearNanosPerToken()
                + 500_500 * COST.attentionNanosPerPair()));
        assertThat(r.timing().ttftNanos()[0]).isEqualTo(prefill);
        assertThat(r.timing().e2eNanos()[0]).isEqualTo(prefill + pass(chunk(1000, 1)) + pass(chunk(1001, 1)));
        assertThat(r.outputTokens()).isEqualTo(3);
        assertThat(r.timing().steps()).isEqualTo(3);
        assertThat(r.timing().ttft().p50()).isCloseTo(prefill / 1e9, org.assertj.core.api.Assertions.within(prefill / 1e12));
    }

    @Test
    void aHostHitWaitsForItsLoadThenComputesOnlyTheRest() {
        Trace t = trace(
                at(0, 1100, 1, 0, 1, 2),
                at(5_000, 1100, 1, 7, 8, 9),   // fills the 3-block device tier: r0's blocks leave it
                at(10_000, 1100, 1, 0, 1, 3)); // 2 blocks from the host, 76 tokens computed
        ReplayResult r = Replay.run(t, timed(Capacity.MIN), Progress.none());
        assertThat(r.hitTokensByRequest()).containsExactly(0, 0, 1024);
        assertThat(r.hostHitTokens()).isEqualTo(1024);
        long load = COST.hostTransferNanos(2L * 512 * COST.kvBytesPerToken());
        assertThat(load).isEqualTo(Math.round(10_000 + 2 * 512 * 131_072 / 50e9 * 1e9));
        assertThat(r.timing().ttftNanos()[2]).isEqualTo(load + pass(chunk(1024, 76)));
        assertThat(r.timing().ttftNanos()[0]).isEqualTo(pass(chunk(0, 1100)));
    }

    @Test
    void requestsArrivingTogetherShareSteps() {
        Trace t = trace(at(0, 100, 2, 0), at(0, 100, 2, 1));
        // the reference GPU's device tier holds both ('min' would hold one request at a time)
        ReplayResult r = Replay.run(t, ReplayConfig.defaults(ReplayConfig.Mode.TIMED), Progress.none());
        long both = pass(chunk(0, 100), chunk(0, 100));
        assertThat(r.timing().ttftNanos()).containsExactly(both, both);
        long decode = pass(chunk(100, 1), chunk(100, 1));
        assertThat(r.timing().e2eNanos()).containsExactly(both + decode, both + decode);
        assertThat(r.timing().steps()).isEqualTo(2);
    }

    @Test
    void speedupDividesArrivalTimes() {
        Trace t = trace(at(0, 100, 1, 0), at(10_000, 100, 1, 1));
        ReplayResult slow = Replay.run(t, timed(Capacity.MIN), Progress.none());
        ReplayResult fast = Replay.run(t, timed(Capacity.MIN).withSpeedup(10), Progress.none());
        assertThat(slow.timing().makespanSeconds()).isCloseTo(10.0 + pass(chunk(0, 100)) / 1e9,
                org.assertj.core.api.Assertions.within(1e-9));
        assertThat(fast.timing().makespanSeconds()).isCloseTo(1.0 + pass(chunk(0, 100)) / 1e9,
                org.assertj.core.api.Assertions.within(1e-9));
    }

    @Test
    void aRandomTraceCompletesWithEveryTokenAndConsistentLatencies() {
        Trace t = ReplayTraces.random(3, 200, 8);
        ReplayResult r = Replay.run(t, timed(Capacity.tokens(20_000)).withHost(Capacity.tokens(50_000)), Progress.none());
        assertThat(r.outputTokens()).isEqualTo(t.outputTokens());
        for (int i = 0; i < t.size(); i++) {
            assertThat(r.timing().ttftNanos()[i]).isPositive().isLessThanOrEqualTo(r.timing().e2eNanos()[i]);
        }
        assertThat(r.timing().ttft().p50()).isLessThanOrEqualTo(r.timing().ttft().p99());
        assertThat(r.timing().gpuBusy()).isBetween(0.0, 1.0);
    }
}
