package io.kvtier.replay.optimum;

import static io.kvtier.replay.optimum.TestTraces.req;
import static io.kvtier.replay.optimum.TestTraces.trace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Exact hit counts of the ceiling, LRU and Belady on traces small enough to follow by hand. */
class HandTraceTest {

    /**
     * Partial last blocks, prompts that are exact multiples of 512, and requests sharing only
     * part of a prefix.
     */
    private static final ChunkTrace SHARING = trace(
            req(1300, 1, 2, 3),     // full chunks 1,2; block 3 partial, never stored
            req(1300, 1, 2, 3),     // hits 1,2; the partial block 3 never hits
            req(1536, 1, 2, 4),     // hits 1,2; 4 is new
            req(1536, 1, 2, 4),     // 1,2,4 all stored, but 4 holds the last prompt token
            req(2000, 1, 5, 6, 7),  // shares only block 1
            req(512, 1));           // one full block: the whole prompt

    @Test
    void chunkTraceKeepsOnlyFullBlocks() {
        assertThat(SHARING.requests()).isEqualTo(6);
        assertThat(SHARING.promptTokens()).isEqualTo(1300 + 1300 + 1536 + 1536 + 2000 + 512);
        assertThat(SHARING.fullChunks(0)).isEqualTo(2);
        assertThat(SHARING.fullChunks(3)).isEqualTo(3);
        assertThat(SHARING.fullChunks(4)).isEqualTo(3);
        assertThat(SHARING.references()).isEqualTo(2 + 2 + 3 + 3 + 3 + 1);
        // 1, 2, 4 (under 1,2), 5, 6 (under 1,5); 3 and 7 only ever end in a partial block
        assertThat(SHARING.distinctChunks()).isEqualTo(5);
        assertThat(SHARING.hittableChunks(3, HitRule.FULL_BLOCKS)).isEqualTo(3);
        assertThat(SHARING.hittableChunks(3, HitRule.ENGINE)).isEqualTo(2);
        assertThat(SHARING.hittableChunks(0, HitRule.ENGINE)).isEqualTo(2);
    }

    @Test
    void ceilingCountsLeadingFullBlocksSeenBefore() {
        HitResult full = Ceiling.compute(SHARING, HitRule.FULL_BLOCKS);
        assertThat(full.hitChunksByRequest()).containsExactly(0, 2, 2, 3, 1, 1);
        assertThat(full.hitTokens()).isEqualTo(9 * 512);
        assertThat(full.hitRatio()).isEqualTo(9 * 512 / 8184.0);

        HitResult engine = Ceiling.compute(SHARING, HitRule.ENGINE);
        // the 1536- and 512-token prompts must compute their last block
        assertThat(engine.hitChunksByRequest()).containsExactly(0, 2, 2, 2, 1, 0);
        assertThat(engine.hitTokens()).isEqualTo(7 * 512);
    }

    @Test
    void chunksAreKeyedByTheirWholePrefixNotTheirHashIdAlone() {
        // id 2 after id 9 is a different block key from id 2 after id 1.
        ChunkTrace t = trace(req(1100, 1, 2, 3), req(1100, 9, 2, 3), req(1100, 9, 2, 3));
        assertThat(t.distinctChunks()).isEqualTo(4);
        assertThat(Ceiling.compute(t, HitRule.ENGINE).hitChunksByRequest()).containsExactly(0, 0, 2);
    }

    /** Two requests sharing a two-chunk prefix, a one-chunk request in between, repeated. */
    private static final ChunkTrace ALTERNATING = trace(
            req(1100, 1, 2, 90),
            req(1100, 1, 2, 91),
            req(600, 3, 92),
            req(1100, 1, 2, 93),
            req(600, 3, 94));

    @Test
    void capacityOne() {
        // LRU walks tail first, so after each request only its first chunk stays.
        assertThat(LruReference.run(ALTERNATING, 1, HitRule.ENGINE).hitChunksByRequest())
                .containsExactly(0, 1, 0, 0, 0);
        // Belady keeps chunk 1 (next used soonest) and bypasses the rest.
        assertThat(BeladyOptimum.run(ALTERNATING, 1, HitRule.ENGINE).hitChunksByRequest())
                .containsExactly(0, 1, 0, 1, 0);
        assertThat(TestTraces.bruteForceOptimum(ALTERNATING, 1, HitRule.ENGINE)).isEqualTo(2);
    }

    @Test
    void capacityTwoBeladyBeatsLru() {
        // LRU admits 3 at r2 and loses chunk 2 before r3 needs it.
        assertThat(LruReference.run(ALTERNATING, 2, HitRule.ENGINE).hitChunksByRequest())
                .containsExactly(0, 2, 0, 1, 0);
        // Belady bypasses 3 (used after 1 and 2 again) and keeps the shared prefix.
        assertThat(BeladyOptimum.run(ALTERNATING, 2, HitRule.ENGINE).hitChunksByRequest())
                .containsExactly(0, 2, 0, 2, 0);
        assertThat(TestTraces.bruteForceOptimum(ALTERNATING, 2, HitRule.ENGINE)).isEqualTo(4);
        assertThat(Ceiling.compute(ALTERNATING, HitRule.ENGINE).hitChunksByRequest())
                .containsExactly(0, 2, 0, 2, 1);
        assertThat(BeladyOptimum.run(ALTERNATING, 3, HitRule.ENGINE).hitChunks()).isEqualTo(5);
    }

    @Test
    void lruKeepsThePrefixHeadWhenARequestOverflowsTheCache() {
        ChunkTrace t = trace(req(2100, 1, 2, 3, 4, 5), req(2100, 1, 2, 3, 4, 6));
        assertThat(LruReference.run(t, 2, HitRule.ENGINE).hitChunksByRequest()).containsExactly(0, 2);
        assertThat(BeladyOptimum.run(t, 2, HitRule.ENGINE).hitChunksByRequest()).containsExactly(0, 2);
        assertThat(LruReference.run(t, 4, HitRule.ENGINE).hitChunksByRequest()).containsExactly(0, 4);
    }

    @Test
    void lruEvictsTheLeastRecentlyUsedPrefix() {
        ChunkTrace t = trace(req(1100, 1, 2, 90), req(1100, 3, 4, 91), req(1100, 1, 2, 92),
                req(1100, 5, 6, 93), req(1100, 3, 4, 94), req(1100, 1, 2, 95));
        // cap 4: r3 evicts 3,4 (used at r1; 1,2 were touched at r2), so r4 misses and evicts 1,2.
        assertThat(LruReference.run(t, 4, HitRule.ENGINE).hitChunksByRequest()).containsExactly(0, 0, 2, 0, 0, 0);
        // Belady bypasses 5,6 (never used again) and hits everything else.
        assertThat(BeladyOptimum.run(t, 4, HitRule.ENGINE).hitChunksByRequest()).containsExactly(0, 0, 2, 0, 2, 2);
    }

    @Test
    void unboundedCapacityReachesTheCeilingAndZeroHitsNothing() {
        for (HitRule rule : HitRule.values()) {
            HitResult ceiling = Ceiling.compute(SHARING, rule);
            assertThat(LruReference.run(SHARING, 1_000, rule).hitChunksByRequest())
                    .isEqualTo(ceiling.hitChunksByRequest());
            assertThat(BeladyOptimum.run(SHARING, SHARING.distinctChunks(), rule).hitChunksByRequest())
                    .isEqualTo(ceiling.hitChunksByRequest());
            assertThat(LruReference.run(SHARING, 0, rule).hitChunks()).isZero();
            assertThat(BeladyOptimum.run(SHARING, 0, rule).hitChunks()).isZero();
        }
        assertThatThrownBy(() -> LruReference.run(SHARING, -1, HitRule.ENGINE))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> BeladyOptimum.run(SHARING, -1, HitRule.ENGINE))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
