package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadStats;
import io.kvtier.offload.StorePolicy;
import io.kvtier.tier.TierIndex;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Lazy stores ({@link StorePolicy.Mode#LAZY}) on the fingerprint model: nothing is stored at
 * commit; a chunk is stored when its block nears the free queue's head; the store job claims
 * the block, so a request that needs every device block cannot get it while it is copied (the
 * fixture checks every stored entry's bytes against the fingerprint after every step).
 */
class LazyStoreTest {

    private static final int BS = 4;

    private static OffloadConfig lazy(int horizon) {
        return OffloadConfig.DEFAULT.withStorePolicy(new StorePolicy(StorePolicy.Mode.LAZY, horizon));
    }

    private static int[] prompt(int n, int seed) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = 1 + (seed * 31 + i * 7) % 50;
        }
        return p;
    }

    @Test
    void aStoreClaimsItsBlocksSoReuseWaitsUntilTheCopyEnds() {
        try (OffloadFixture f = new OffloadFixture(BS, 8, 16, lazy(8))) {
            int[] a = prompt(16, 1);
            Request ra = f.runOne(a, 1);
            // Eager would have stored A's 4 prompt blocks at commit; lazy stored nothing yet.
            assertThat(f.offload.stats().blocksStored()).isEmpty();
            assertThat(f.offload.pendingStoreChunks()).isEqualTo(4);
            List<BlockKey> aKeys = ra.blockKeys().subList(0, 4);
            int[] aBlocks = aKeys.stream().mapToInt(f.pool::lookup).toArray();
            for (int b : aBlocks) {
                assertThat(b).isNotNegative();
                assertThat(f.pool.refCount(b)).as("block %d free, still cached", b).isZero();
            }

            f.transfers.holdStores();
            // B needs all 8 device blocks: it may only get A's blocks once their copy is done.
            Request rb = f.submit(prompt(29, 2), 1);
            f.step();
            assertThat(f.offload.pendingStoreChunks()).isZero();
            for (int b : aBlocks) {
                assertThat(f.pool.refCount(b)).as("block %d claimed by the store job", b).isEqualTo(1);
            }
            for (int i = 0; i < 5; i++) {
                f.step();
                if (f.engine.kvCacheManager().hasTable(rb.id())) {
                    assertThat(f.engine.kvCacheManager().blockTable(rb.id())).as("B's blocks while A's store is held")
                            .doesNotContain(aBlocks);
                }
                for (BlockKey k : aKeys) {
                    assertThat(f.host.index().state(k)).isEqualTo(TierIndex.EntryState.STORING);
                }
            }
            f.releaseEverything();
            f.run(); // the copy runs now: the fixture checks the stored bytes are A's
            assertThat(rb.outputIds()).containsExactly(FingerprintEngines.reference(prompt(29, 2), 1));
            for (BlockKey k : aKeys) {
                assertThat(f.host.index().state(k)).isEqualTo(TierIndex.EntryState.READY);
            }
            assertThat(f.offload.stats().blocksStored()).containsEntry("host", 4L);
            assertThat(f.offload.stats().blocksNotStored()).doesNotContainKey(OffloadStats.EVICTED_BEFORE_STORE);

            // A again, with its device copies gone: its prefix comes from the host tier.
            f.engine.resetDevicePrefixCache();
            Request again = f.runOne(a, 1);
            assertThat(again.externalHitTokens()).containsEntry("host", 12);
            assertThat(again.outputIds()).containsExactly(ra.outputIds());
        }
    }

    @Test
    void onlyChunksThatReachTheHorizonAreStoredAndEvictionsBeforeThatAreCounted() {
        try (OffloadFixture f = new OffloadFixture(BS, 8, 32, lazy(2))) {
            Request ra = f.runOne(prompt(16, 3), 1);
            Request rc = f.runOne(prompt(8, 4), 1);
            Request rd = f.runOne(prompt(8, 6), 1);
            // Free queue now: A's blocks (tail first), then C's, then D's. Empty blocks were reused
            // first, so nothing reached the head yet and nothing is stored.
            assertThat(f.offload.stats().blocksStored()).isEmpty();
            assertThat(f.offload.pendingStoreChunks()).isEqualTo(8);
            Set<BlockKey> near = new HashSet<>();
            for (int b : f.pool.nearEviction(2)) {
                near.add(f.pool.keyOf(b));
            }
            assertThat(near).containsExactlyInAnyOrder(ra.blockKeys().get(3), ra.blockKeys().get(2));
            // E's first step stores A's chain (the two chunks that reached the horizon and the two
            // before them), then E takes the next two free blocks: C's, evicted before their store.
            Request re = f.runOne(prompt(8, 7), 1);
            for (int i = 0; i < 4; i++) {
                assertThat(f.host.index().state(ra.blockKeys().get(i))).isEqualTo(TierIndex.EntryState.READY);
            }
            assertThat(f.offload.stats().blocksStored()).containsEntry("host", 4L);
            assertThat(f.offload.stats().blocksNotStored()).containsEntry(OffloadStats.EVICTED_BEFORE_STORE, 2L);
            for (Request r : List.of(rc, rd, re)) {
                assertThat(f.host.index().state(r.blockKeys().get(0))).isEqualTo(TierIndex.EntryState.ABSENT);
            }
            // Dropping the device cache evicts every block at once, so D's and E's pending blocks
            // (4) are stored first, not lost; the copies run after the drop.
            f.engine.resetDevicePrefixCache();
            assertThat(f.offload.pendingStoreChunks()).isZero();
            f.engine.drainTransfers();
            assertThat(f.offload.stats().blocksNotStored()).containsEntry(OffloadStats.EVICTED_BEFORE_STORE, 2L);
            assertThat(f.offload.stats().blocksStored()).containsEntry("host", 8L);
            for (Request r : List.of(rd, re)) {
                for (BlockKey k : r.blockKeys()) {
                    assertThat(f.host.index().state(k)).isEqualTo(TierIndex.EntryState.READY);
                }
            }
            assertThat(f.host.index().state(rc.blockKeys().get(0))).isEqualTo(TierIndex.EntryState.ABSENT);
        }
    }

    @Test
    void aDeviceHitBeforeTheHorizonIsNeverWritten() {
        try (OffloadFixture f = new OffloadFixture(BS, 16, 32, lazy(1))) {
            int[] a = prompt(16, 5);
            f.runOne(a, 1);
            // The same prompt again hits the device: A's blocks leave the free queue before any scan
            // found them near its head (horizon 1 sees only the empty block pushed there last).
            Request again = f.runOne(a, 1);
            assertThat(again.deviceHitTokens()).isEqualTo(12);
            assertThat(f.offload.stats().blocksStored()).doesNotContainKey("host");
        }
    }
}
