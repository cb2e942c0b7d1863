package io.kvtier.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvtier.replay.trace.MooncakeTraces;
import io.kvtier.replay.trace.Trace;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 3's numbers on the shipped Mooncake traces through the real engine. The unbounded
 * replays of both whole traces take a few seconds; the 1M/3M/10M study runs on the first
 * {@value #DEFAULT_HEAD} conversation requests unless {@code -Dkvtier.replay.full=true} asks for
 * the whole trace (about a minute; the numbers are in the closing note of issue 3).
 */
class RealTraceReplayTest {

    static final int DEFAULT_HEAD = 1500;

    private static Trace conversation;
    private static Trace synthetic;

    @BeforeAll
    static void read() throws IOException {
        conversation = MooncakeTraces.read(MooncakeTraces.CONVERSATION);
        synthetic = MooncakeTraces.read(MooncakeTraces.SYNTHETIC);
    }

    @Test
    void unboundedConversationReplayHitsTheCeiling() {
        ReplayResult r = Replay.run(conversation, ReplayConfig.defaults(ReplayConfig.Mode.INSTANT), Progress.none());
        assertThat(r.requests()).isEqualTo(12_031);
        assertThat(r.promptTokens()).isEqualTo(144_793_823L);
        assertThat(r.hitTokens()).isEqualTo(54_063_104L);
        assertThat(r.tokenHitRatio()).isCloseTo(0.373, within(0.001));
        assertThat(r.ceilingTokenHitRatio()).isEqualTo(r.tokenHitRatio());
        assertThat(r.hostChunksWritten()).isEqualTo(170_899); // every distinct full block, once
        assertThat(r.hostEvictions()).isZero();
        System.out.printf("conversation, instant, unbounded: %.4f in %.1f s%n", r.tokenHitRatio(), r.wallSeconds());
    }

    @Test
    void unboundedSyntheticReplayHitsTheCeiling() {
        ReplayResult r = Replay.run(synthetic, ReplayConfig.defaults(ReplayConfig.Mode.INSTANT), Progress.none());
        assertThat(r.hitTokens()).isEqualTo(39_802_880L);
        assertThat(r.tokenHitRatio()).isCloseTo(0.650, within(0.001));
        assertThat(r.hostChunksWritten()).isEqualTo(40_148);
    }

    @Test
    void lruAndTheOptimumAtOneThreeAndTenMillionHostTokens() {
        boolean full = Boolean.getBoolean("kvtier.replay.full");
        Trace t = full ? conversation : new Trace("conversation-head", conversation.requests().subList(0, DEFAULT_HEAD));
        for (Policy p : Policy.values()) {
            for (long cap : List.of(1_000_000L, 3_000_000L, 10_000_000L)) {
                ReplayConfig cfg = ReplayConfig.defaults(ReplayConfig.Mode.INSTANT).withPolicy(p)
                        .withHost(Capacity.tokens(cap));
                ReplayResult r = Replay.run(t, cfg, Progress.none());
                System.out.printf("%s %s host %s: %.4f, optimum %.4f (%.3f of it), ceiling %.4f, %.1f s%n", t.source(), p,
                        Capacity.format(cap), r.tokenHitRatio(), r.optimumTokenHitRatio(), r.fractionOfOptimum(),
                        r.ceilingTokenHitRatio(), r.wallSeconds());
                assertThat(r.hitTokens()).as("%s at %d", p, cap).isLessThanOrEqualTo(r.optimum().beladyHitTokens());
                assertThat(r.optimum().capacityChunks()).isEqualTo(cap / 512 + r.deviceBlocks());
            }
        }
    }
}
