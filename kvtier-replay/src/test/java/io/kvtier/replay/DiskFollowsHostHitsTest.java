package io.kvtier.replay;

import static io.kvtier.replay.ReplayTraces.instant;
import static io.kvtier.replay.ReplayTraces.req;
import static io.kvtier.replay.ReplayTraces.trace;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.replay.trace.Trace;
import org.junit.jupiter.api.Test;

/**
 * A host hit is a use of the disk tier's copy too (the disk's policy is touched with it), so a
 * chunk the host keeps hitting is not aged out of the disk by write order and lost when the host
 * later evicts it (docs/cache-policy.md, "the disk follows the host's hits"). Hand-made trace,
 * instant mode, block size 512, device 'min' (2 blocks: only the last request's blocks stay there).
 */
class DiskFollowsHostHitsTest {

    @Test
    void aChunkTheHostKeepsHittingOutlivesLaterWritesOnDisk() {
        // Host tier 2 chunks, disk tier 3 chunks, both LRU; each request has one full block (A..E).
        Trace t = trace(
                req(600, 1, 90),    // r0: A stored: host {A}, disk {A}
                req(600, 2, 91),    // r1: B: host {A, B}, disk {A, B}
                req(600, 1, 92),    // r2: host hit A (the disk's A is touched: disk order B, A)
                req(600, 3, 93),    // r3: C: host evicts B -> {A, C}; disk {B, A, C}
                req(600, 1, 94),    // r4: host hit A (disk order B, C, A)
                req(600, 4, 95),    // r5: D: host evicts C -> {A, D}; disk evicts B (by write order: A) -> {C, A, D}
                req(600, 5, 96),    // r6: E: host evicts A -> {D, E}; disk evicts C (by write order: B) -> {A, D, E}
                req(600, 1, 97));   // r7: A: a disk hit (by write order the disk had dropped it at r5: a miss)
        ReplayResult r = Replay.run(t, instant(Capacity.tokens(1024), Policy.LRU).withDisk(Capacity.tokens(1536)),
                Progress.none());
        assertThat(r.hostChunks()).isEqualTo(2);
        assertThat(r.hitTokensByRequest()).containsExactly(0, 0, 512, 0, 512, 0, 0, 512);
        assertThat(r.hitTokensByTier()).containsEntry("host", 1024L).containsEntry("disk", 512L);
    }
}
