package io.kvtier.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two KV groups, full attention (group 0) and a sliding window of 6 positions (group 1), blocks
 * of 4 positions: a query at position p reads window-group blocks from {@code (p - 5) / 4} on.
 */
class KvGroupsTest {

    private static final int BS = 4;
    private static final int W = 6;
    private static final List<KvGroup> GROUPS = KvGroups.of(new int[] {W, W, 0});
    private final BlockHasher hasher = BlockHasher.sha256(Namespace.of("grouped", new KvLayout(3, 1, 4, BS)));
    private final List<BlockPool> pools = new ArrayList<>();

    private KvCacheManager manager(int fullBlocks, int windowBlocks) {
        pools.add(new BlockPool(fullBlocks, new KvLayout(1, 1, 4, BS)));
        pools.add(new BlockPool(windowBlocks, new KvLayout(2, 1, 4, BS)));
        return new KvCacheManager(GROUPS, pools, true);
    }

    @AfterEach
    void close() {
        pools.forEach(BlockPool::checkInvariants);
        pools.forEach(BlockPool::close);
    }

    private List<BlockKey> keys(int tokens) {
        List<BlockKey> keys = new ArrayList<>();
        int[] t = new int[tokens];
        for (int i = 0; i < tokens; i++) t[i] = 100 + i;
        for (int b = 0; (b + 1) * BS <= tokens; b++) {
            keys.add(hasher.hash(b == 0 ? hasher.namespaceSeed() : keys.get(b - 1), t, b * BS, b * BS + BS, ExtraKeys.NONE));
        }
        return keys;
    }

    /** Runs a request of {@code tokens} positions 4 at a time the way the engine does: grow, write, cache, slide. */
    private void run(KvCacheManager kv, long id, int tokens) {
        List<BlockKey> k = keys(tokens);
        assertThat(kv.admit(id, k, 0, BS)).isTrue();
        for (int p = BS; p <= tokens; p += BS) {
            assertThat(kv.grow(id, p)).isTrue();
            kv.cacheFullBlocks(id, k, p);
            kv.slide(id, p);
            assertThat(kv.heldBlocks(id, 1)).as("window group at %d", p).isLessThanOrEqualTo(3);
        }
        kv.free(id);
    }

    @Test
    void layersGroupByAttentionKindFullFirst() {
        List<KvGroup> g = KvGroups.of(new int[] {16, 16, 16, 16, 16, 0, 16});
        assertThat(g).hasSize(2);
        assertThat(g.get(0).window()).isZero();
        assertThat(g.get(0).layers()).containsExactly(5);
        assertThat(g.get(1).window()).isEqualTo(16);
        assertThat(g.get(1).layers()).containsExactly(0, 1, 2, 3, 4, 6);
        assertThat(KvGroups.of(new int[] {0, 0})).hasSize(1);
        BlockKey k = keys(4).getFirst();
        assertThat(g.get(0).key(k)).isNotEqualTo(k).isNotEqualTo(g.get(1).key(k));
        assertThat(KvGroups.of(new int[] {16, 0}).get(1).key(k)).as("the group layout is in the key")
                .isNotEqualTo(g.get(1).key(k));
    }

    @Test
    void theWindowGroupReleasesBlocksThatLeftTheWindowAndKeepsThemCached() {
        KvCacheManager kv = manager(8, 8);
        List<BlockKey> k = keys(12);
        assertThat(kv.admit(1, k, 0, 12)).isTrue();
        kv.cacheFullBlocks(1, k, 12);
        int windowBlock0 = kv.blockTable(1, 1)[0];
        assertThat(kv.slide(1, 8)).as("a query at 8 reads from position 3: block 0").isZero();
        assertThat(kv.slide(1, 12)).as("a query at 12 reads from position 7: block 1 on").isEqualTo(1);
        assertThat(kv.blockTable(1, 1)).containsExactly(KvCacheManager.NOT_HELD, kv.blockTable(1, 1)[1],
                kv.blockTable(1, 1)[2]);
        assertThat(kv.heldBlocks(1, 0)).as("the full group keeps every block").isEqualTo(3);
        assertThat(pools.get(1).refCount(windowBlock0)).isZero();
        assertThat(pools.get(1).lookup(GROUPS.get(1).key(k.get(0)))).as("left to the prefix cache").isEqualTo(windowBlock0);
        assertThat(pools.get(1).freeCount()).isEqualTo(6);
        kv.free(1);
        assertThat(pools.get(0).freeCount()).isEqualTo(8);
        assertThat(pools.get(1).freeCount()).isEqualTo(8);
    }

    /**
     * The window pool is so small that the first request's early window blocks are evicted while
     * it runs; the hit is still all 5 blocks, since the window ending at block 5 (positions 15-19,
     * blocks 3 and 4) is cached, and the admitted table holds only those.
     */
    @Test
    void aHitNeedsOnlyTheWindowThatEndsAtIt() {
        KvCacheManager kv = manager(8, 3);
        run(kv, 1, 20);
        List<BlockKey> k = keys(24);
        assertThat(pools.get(1).lookup(GROUPS.get(1).key(k.get(0)))).as("evicted").isNegative();
        assertThat(kv.prefixHitBlocks(k, 21)).isEqualTo(5);
        assertThat(kv.admit(2, k, 5, 24)).isTrue();
        int[] window = kv.blockTable(2, 1);
        assertThat(window).startsWith(KvCacheManager.NOT_HELD, KvCacheManager.NOT_HELD,
                KvCacheManager.NOT_HELD);
        assertThat(window[3]).isEqualTo(pools.get(1).lookup(GROUPS.get(1).key(k.get(3))));
        assertThat(window[4]).isEqualTo(pools.get(1).lookup(GROUPS.get(1).key(k.get(4))));
        assertThat(kv.heldBlocks(2, 0)).isEqualTo(6);
        kv.free(2);
    }

    /**
     * A hit one group cannot serve is not reported. After the first request the window pool's
     * free queue holds its cached blocks in release order: 0, 1, 2 (left the window while it ran),
     * then 4 and 3 (freed last block first). Evicting 0-2 leaves the window of a 5-block hit
     * intact; evicting block 4 too leaves no window the group can serve, though the full group
     * still holds all five blocks.
     */
    @Test
    void aHitOneGroupCannotServeIsNotReported() {
        KvCacheManager kv = manager(8, 5);
        run(kv, 1, 20);
        List<BlockKey> k = keys(24);
        for (int i = 0; i < 3; i++) pools.get(1).allocate();
        assertThat(pools.get(1).lookup(GROUPS.get(1).key(k.get(2)))).isNegative();
        assertThat(kv.prefixHitBlocks(k, 24)).isEqualTo(5);
        pools.get(1).allocate();
        assertThat(pools.get(1).lookup(GROUPS.get(1).key(k.get(4)))).isNegative();
        assertThat(pools.get(1).lookup(GROUPS.get(1).key(k.get(3)))).isNotNegative();
        assertThat(pools.get(0).lookup(kv.cacheKey(0, k.get(4)))).isNotNegative();
        // hit 5 needs window blocks 3-4, hit 4 needs 2-3, hit 3 needs 1-2, hit 2 needs 0-1, hit 1 needs 0
        assertThat(kv.prefixHitBlocks(k, 24)).isZero();
    }

    @Test
    void theFullGroupBoundsTheHitAndTheLastTokenIsNeverHit() {
        KvCacheManager kv = manager(8, 8);
        run(kv, 1, 12);
        assertThat(kv.prefixHitBlocks(keys(12), 12)).as("12 tokens: the last block holds the last token").isEqualTo(2);
        assertThat(kv.prefixHitBlocks(keys(16), 13)).isEqualTo(3);
        assertThat(kv.prefixHitBlocks(keys(16), 16)).as("block 3 was never computed").isEqualTo(3);
        pools.get(0).resetPrefixCache();
        assertThat(kv.prefixHitBlocks(keys(16), 16)).as("the full group holds nothing").isZero();
    }

    @Test
    void admissionIsAllOrNothingAcrossGroups() {
        KvCacheManager kv = manager(8, 3);
        assertThat(kv.admit(1, keys(16), 0, 16)).as("the window pool has 3 of 4 blocks").isFalse();
        assertThat(pools.get(0).freeCount()).isEqualTo(8);
        assertThat(pools.get(1).freeCount()).isEqualTo(3);
        assertThat(kv.admit(1, keys(16), 0, 12)).isTrue();
        assertThat(kv.grow(1, 16)).isFalse();
        assertThat(pools.get(0).freeCount()).as("the full group grew nothing either").isEqualTo(5);
        kv.cacheFullBlocks(1, keys(16), 8);
        assertThat(kv.slide(1, 8)).as("a query at 8 still reads position 3").isZero();
        kv.cacheFullBlocks(1, keys(16), 12);
        assertThat(kv.slide(1, 12)).isEqualTo(1);
        assertThat(kv.grow(1, 16)).as("block 0 left the window and made room").isTrue();
        assertThat(kv.heldBlocks(1, 1)).isEqualTo(3);
        kv.free(1);
    }

    /** Group 0 caches under the chain key (a one-group model's keys and device events are unchanged); the others qualify it. */
    @Test
    void groupZeroCachesUnderTheChainKeyAndOtherGroupsUnderQualifiedKeys() {
        KvCacheManager kv = manager(8, 8);
        List<BlockKey> k = keys(8);
        assertThat(kv.admit(1, k, 0, 8)).isTrue();
        assertThat(kv.cacheFullBlocks(1, k, 8)).as("block indexes new in group 0").containsExactly(0, 1);
        assertThat(pools.get(0).lookup(k.get(1))).isEqualTo(kv.blockTable(1, 0)[1]);
        assertThat(pools.get(1).lookup(k.get(1))).isNegative();
        assertThat(pools.get(1).lookup(GROUPS.get(1).key(k.get(1)))).isEqualTo(kv.blockTable(1, 1)[1]);
        assertThat(kv.cacheKey(1, k.get(1))).isEqualTo(GROUPS.get(1).key(k.get(1)));
        kv.free(1);
    }

    /** The invariant check names a window block still held after its window passed, and a read block missing. */
    @Test
    void theInvariantCheckFindsABlockHeldOutsideTheWindow() {
        KvCacheManager kv = manager(8, 8);
        List<BlockKey> k = keys(12);
        assertThat(kv.admit(1, k, 0, 12)).isTrue();
        kv.cacheFullBlocks(1, k, 12);
        kv.checkInvariants(id -> 8);
        assertThatThrownBy(() -> kv.checkInvariants(id -> 12)).hasMessageContaining("still holds block 0")
                .hasMessageContaining("left its window");
        kv.slide(1, 12);
        kv.checkInvariants(id -> 12);
        assertThatThrownBy(() -> kv.checkInvariants(id -> 8)).hasMessageContaining("lacks block 0");
        kv.free(1);
    }
}
