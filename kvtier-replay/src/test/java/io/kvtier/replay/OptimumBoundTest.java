package io.kvtier.replay;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.replay.optimum.Ceiling;
import io.kvtier.replay.optimum.ChunkTrace;
import io.kvtier.replay.optimum.HitResult;
import io.kvtier.replay.optimum.HitRule;
import io.kvtier.replay.trace.Trace;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Belady optimum, given the device and host tiers' capacity together, is never below what
 * the real engine reaches with any policy; with an unbounded host tier the engine reaches the
 * ceiling request by request.
 */
class OptimumBoundTest {

    private static final List<Long> HOST_TOKENS = List.of(512L, 2_048L, 5_120L, 20_480L, 81_920L);

    @Test
    void optimumIsNeverBelowAnyPolicyOnSeededRandomTraces() {
        for (long seed = 1; seed <= 6; seed++) {
            Trace t = ReplayTraces.random(seed, 300, 10);
            for (Policy p : Policy.values()) {
                for (long cap : HOST_TOKENS) {
                    ReplayResult r = Replay.run(t, ReplayTraces.instant(Capacity.tokens(cap), p), Progress.none());
                    assertThat(r.hitTokens()).as("seed %d, %s at %d host tokens", seed, p, cap)
                            .isLessThanOrEqualTo(r.optimum().beladyHitTokens());
                    assertThat(r.optimum().beladyHitTokens()).isLessThanOrEqualTo(r.optimum().ceilingHitTokens());
                }
            }
        }
    }

    @Test
    void unboundedHostReachesTheCeilingRequestByRequest() {
        for (long seed = 1; seed <= 4; seed++) {
            Trace t = ReplayTraces.random(seed, 400, 12);
            HitResult ceiling = Ceiling.compute(ChunkTrace.of(t), HitRule.ENGINE);
            for (Policy p : List.of(Policy.LRU, Policy.ARC)) {
                ReplayResult r = Replay.run(t, ReplayTraces.instant(Capacity.INF, p), Progress.none());
                for (int i = 0; i < t.size(); i++) {
                    assertThat(r.hitTokens(i)).as("seed %d, %s, request %d", seed, p, i)
                            .isEqualTo(ceiling.hitChunks(i) * 512);
                }
                assertThat(r.tokenHitRatio()).isEqualTo(r.ceilingTokenHitRatio());
            }
        }
    }

    @Test
    void moreHostCapacityNeverLowersTheOptimum() {
        Trace t = ReplayTraces.random(11, 300, 10);
        long previous = -1;
        for (long cap : HOST_TOKENS) {
            ReplayResult r = Replay.run(t, ReplayTraces.instant(Capacity.tokens(cap), Policy.LRU), Progress.none());
            assertThat(r.optimum().beladyHitTokens()).isGreaterThanOrEqualTo(previous);
            previous = r.optimum().beladyHitTokens();
        }
    }
}
