package io.kvtier.replay;

import static io.kvtier.replay.ReplayTraces.instant;
import static io.kvtier.replay.ReplayTraces.req;
import static io.kvtier.replay.ReplayTraces.trace;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.replay.trace.Trace;
import org.junit.jupiter.api.Test;

/**
 * Exact hit counts of small hand-made traces through the real engine path (scheduler, device
 * prefix cache, offload scheduler, host tier), block size 512, instant mode.
 */
class HandTraceReplayTest {

    private static ReplayResult run(Trace t, Capacity host, Policy policy) {
        return Replay.run(t, instant(host, policy), Progress.none());
    }

    @Test
    void partialLastBlocksAndPartlySharedPrefixes() {
        Trace t = trace(
                req(1300, 0, 1, 2),       // r0: nothing cached
                req(1300, 0, 1, 3),       // r1: shares blocks 0-1, its own partial block 2 differs
                req(1024, 0, 1),          // r2: both blocks cached, but a hit never covers the last token: 1 block
                req(2048, 0, 5, 6, 7),    // r3: shares only block 0
                req(1100, 0, 1, 2),       // r4: block 2 (id 2) was only ever a partial block: never stored
                req(1536, 0, 1, 2),       // r5: same 2 blocks; block 2 is full now but its last token is not hittable
                req(2000, 0, 1, 2, 9),    // r6: block 2 was stored by r5: 3 blocks
                req(600, 8, 1),           // r7: id 1 after another first block is another key: no hit
                req(300, 0));             // r8: shorter than a block: nothing to hit
        ReplayResult r = run(t, Capacity.INF, Policy.LRU);
        assertThat(r.hitTokensByRequest()).containsExactly(0, 1024, 512, 512, 1024, 1024, 1536, 0, 0);
        assertThat(r.hitTokens()).isEqualTo(5632);
        assertThat(r.promptTokens()).isEqualTo(1300 + 1300 + 1024 + 2048 + 1100 + 1536 + 2000 + 600 + 300);
        // every full block is stored once: ids 0,1 (r0), 5,6,7 (r3), 2 (r5), 9 is partial; (8,1) full (r7)
        assertThat(r.hostChunksWritten()).isEqualTo(2 + 3 + 1 + 1);
        // with an unbounded host tier the engine reaches the ceiling, request by request
        assertThat(r.optimum().ceilingHitTokens()).isEqualTo(5632);
        assertThat(r.optimum().beladyHitTokens()).isEqualTo(5632);
        assertThat(r.deviceBlocks()).isEqualTo(4); // 'min': the 2048-token request
    }

    @Test
    void aPrefixFlushedFromTheDeviceIsLoadedFromTheHostThenHitsOnTheDevice() {
        Trace t = trace(
                req(1537, 0, 1, 2, 3),    // r0: stores blocks 0,1,2
                req(2048, 10, 11, 12, 13),// r1: takes all 4 device blocks, evicting r0's from the device
                req(1537, 0, 1, 2, 3),    // r2: device miss, host hit of 3 blocks, loaded
                req(1537, 0, 1, 2, 3));   // r3: the loaded blocks are cached on the device now
        ReplayResult r = run(t, Capacity.INF, Policy.LRU);
        assertThat(r.hitTokensByRequest()).containsExactly(0, 0, 1536, 1536);
        assertThat(r.hostHitTokens()).isEqualTo(1536);
        assertThat(r.deviceHitTokens()).isEqualTo(1536);
        assertThat(r.deviceChunksLoaded()).isEqualTo(3);
        assertThat(r.hostChunksWritten()).isEqualTo(3 + 4);
        long blockBytes = 512L * r.config().cost().kvBytesPerToken();
        assertThat(r.bytesLoaded()).isEqualTo(3 * blockBytes);
        assertThat(r.bytesStored()).isEqualTo(7 * blockBytes);
    }

    @Test
    void lruEvictsTheLeastRecentlyUsedChunk() {
        // Host tier of 2 chunks; the device tier ('min' = 2 blocks) holds only the last request's block.
        Trace t = trace(
                req(600, 100, 1),   // r0: host {A}
                req(600, 200, 1),   // r1: host {A, B}
                req(600, 300, 1),   // r2: host full: A (least recent) goes; {B, C}
                req(600, 100, 2),   // r3: A was evicted: miss; storing A evicts B; {C, A}
                req(600, 300, 3),   // r4: C from the host
                req(600, 200, 3));  // r5: B was evicted: miss
        ReplayResult r = run(t, Capacity.tokens(1024), Policy.LRU);
        assertThat(r.hostChunks()).isEqualTo(2);
        assertThat(r.hitTokensByRequest()).containsExactly(0, 0, 0, 0, 512, 0);
        assertThat(r.hostEvictions()).isEqualTo(3); // A by r2, B by r3, A by r5 (r4's load touched C)
        // Belady with device + host = 4 chunks keeps A, B and C: three hits
        assertThat(r.optimum().capacityChunks()).isEqualTo(4);
        assertThat(r.optimum().beladyHitTokens()).isEqualTo(3 * 512);
        assertThat(r.fractionOfOptimum()).isEqualTo(1.0 / 3);
    }

    @Test
    void admissionFromTheSecondUseStoresAChunkOnlyWhenItComesBack() {
        Trace t = trace(
                req(600, 100, 1),   // r0: first use of A: not stored
                req(600, 200, 1),   // r1: first use of B; flushes A from the device
                req(600, 100, 2),   // r2: miss; second use of A: stored
                req(600, 200, 2),   // r3: miss; second use of B: stored
                req(600, 100, 3));  // r4: A from the host
        ReplayResult admit2 = run(t, Capacity.INF, Policy.LRU_ADMIT2);
        assertThat(admit2.hitTokensByRequest()).containsExactly(0, 0, 0, 0, 512);
        assertThat(admit2.hostChunksWritten()).isEqualTo(2);
        ReplayResult lru = run(t, Capacity.INF, Policy.LRU);
        assertThat(lru.hitTokensByRequest()).containsExactly(0, 0, 512, 512, 512);
        assertThat(lru.hostChunksWritten()).isEqualTo(2);
    }

    @Test
    void arcAndLruAgreeWhileNothingIsEvicted() {
        Trace t = ReplayTraces.random(5, 60, 6);
        ReplayResult lru = run(t, Capacity.INF, Policy.LRU);
        ReplayResult arc = run(t, Capacity.INF, Policy.ARC);
        assertThat(arc.hitTokensByRequest()).containsExactly(lru.hitTokensByRequest());
        assertThat(arc.hostEvictions()).isZero();
    }

    @Test
    void withoutAHostTierOnlyTheDeviceCaches() {
        Trace t = trace(req(1300, 0, 1, 2), req(1300, 0, 1, 3), req(2048, 4, 5, 6, 7), req(1300, 0, 1, 2));
        ReplayResult r = run(t, Capacity.tokens(0), Policy.LRU);
        assertThat(r.hostChunks()).isZero();
        // r1 hits r0's two blocks on the device; r2 fills the 4-block device; r3 finds nothing
        assertThat(r.hitTokensByRequest()).containsExactly(0, 1024, 0, 0);
        assertThat(r.hostHitTokens()).isZero();
        assertThat(r.optimum().capacityChunks()).isEqualTo(4);
    }
}
