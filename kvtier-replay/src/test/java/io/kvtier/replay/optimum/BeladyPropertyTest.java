package io.kvtier.replay.optimum;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Belady against exhaustive search and against LRU on seeded random prefix-sharing traces. */
class BeladyPropertyTest {

    static LongStream seeds() {
        return LongStream.range(0, 300);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void beladyIsTheExactOptimumOnSmallTraces(long seed) {
        ChunkTrace t = TestTraces.random(seed, 4 + (int) (seed % 5), 4);
        if (t.distinctChunks() > 14) {
            t = TestTraces.random(seed, 4, 3);
        }
        for (HitRule rule : HitRule.values()) {
            for (int cap = 1; cap <= 4; cap++) {
                long belady = BeladyOptimum.run(t, cap, rule).hitChunks();
                long best = TestTraces.bruteForceOptimum(t, cap, rule);
                assertThat(belady).as("seed %d, rule %s, capacity %d, trace:%s", seed, rule, cap,
                        TestTraces.describe(t)).isEqualTo(best);
            }
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void beladyIsNeverBelowLruAndNeverAboveTheCeiling(long seed) {
        ChunkTrace t = TestTraces.random(seed, 300, 12);
        for (HitRule rule : HitRule.values()) {
            HitResult ceiling = Ceiling.compute(t, rule);
            long previous = 0;
            for (long cap : new long[] {1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144}) {
                HitResult lru = LruReference.run(t, cap, rule);
                HitResult belady = BeladyOptimum.run(t, cap, rule);
                String where = String.format("seed %d, rule %s, capacity %d", seed, rule, cap);
                assertThat(belady.hitChunks()).as(where).isGreaterThanOrEqualTo(lru.hitChunks());
                assertThat(belady.hitChunks()).as(where).isLessThanOrEqualTo(ceiling.hitChunks());
                assertThat(belady.hitChunks()).as(where + ": more room never hurts the optimum")
                        .isGreaterThanOrEqualTo(previous);
                for (int r = 0; r < t.requests(); r++) {
                    assertThat(lru.hitChunks(r)).as(where).isLessThanOrEqualTo(ceiling.hitChunks(r));
                    assertThat(belady.hitChunks(r)).as(where).isLessThanOrEqualTo(ceiling.hitChunks(r));
                }
                previous = belady.hitChunks();
            }
            assertThat(BeladyOptimum.run(t, t.distinctChunks(), rule).hitChunksByRequest())
                    .as("seed %d: room for everything", seed).isEqualTo(ceiling.hitChunksByRequest());
            assertThat(LruReference.run(t, t.distinctChunks(), rule).hitChunksByRequest())
                    .as("seed %d: room for everything", seed).isEqualTo(ceiling.hitChunksByRequest());
        }
    }
}
