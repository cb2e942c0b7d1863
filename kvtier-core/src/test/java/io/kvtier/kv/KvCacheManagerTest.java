package io.kvtier.kv;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class KvCacheManagerTest {

    private static final KvLayout LAYOUT = new KvLayout(1, 1, 4, 4);
    private final BlockHasher hasher = BlockHasher.sha256(Namespace.of("test", LAYOUT));

    private List<BlockKey> keys(int... tokens) {
        List<BlockKey> keys = new ArrayList<>();
        for (int b = 0; (b + 1) * 4 <= tokens.length; b++) {
            keys.add(hasher.hash(b == 0 ? hasher.namespaceSeed() : keys.get(b - 1), tokens, b * 4, b * 4 + 4, ExtraKeys.NONE));
        }
        return keys;
    }

    @Test
    void hitNeverCoversTheLastToken() {
        try (BlockPool pool = new BlockPool(8, LAYOUT)) {
            KvCacheManager kv = new KvCacheManager(pool, true);
            List<BlockKey> k = keys(1, 2, 3, 4, 5, 6, 7, 8);
            assertThat(kv.admit(1, k, 0, 8)).isTrue();
            kv.cacheFullBlocks(1, k, 8);
            kv.free(1);
            assertThat(kv.prefixHitBlocks(k, 8)).isEqualTo(1);
            assertThat(kv.prefixHitBlocks(keys(1, 2, 3, 4, 5, 6, 7, 8, 9), 9)).isEqualTo(2);
            assertThat(kv.prefixHitBlocks(keys(1, 2, 3, 4, 5, 6, 7, 9, 9), 9)).isEqualTo(1);
        }
    }

    @Test
    void admitCountsFreeHitBlocksAgainstCapacity() {
        try (BlockPool pool = new BlockPool(2, LAYOUT)) {
            KvCacheManager kv = new KvCacheManager(pool, true);
            List<BlockKey> k = keys(1, 2, 3, 4, 5);
            assertThat(kv.admit(1, k, 0, 5)).isTrue();
            kv.cacheFullBlocks(1, k, 5);
            kv.free(1);
            assertThat(pool.freeCount()).isEqualTo(2);
            // 1 hit block (free) + 2 new blocks needed for 12 positions: 3 > 2, refused, nothing changes.
            assertThat(kv.admit(2, k, 1, 12)).isFalse();
            assertThat(pool.freeCount()).isEqualTo(2);
            assertThat(kv.admit(2, k, 1, 8)).isTrue();
            assertThat(kv.blockTable(2)[0]).isEqualTo(pool.lookup(k.get(0)));
            kv.free(2);
            pool.checkInvariants();
        }
    }

    @Test
    void keysDependOnEveryEarlierTokenSaltAndNamespace() {
        List<BlockKey> a = keys(1, 2, 3, 4, 5, 6, 7, 8);
        List<BlockKey> b = keys(1, 2, 3, 5, 5, 6, 7, 8);
        assertThat(a.get(1)).isNotEqualTo(b.get(1));
        // O19: [1,2,3,4] and [32,1,3,4] differ.
        assertThat(keys(1, 2, 3, 4).getFirst()).isNotEqualTo(keys(32, 1, 3, 4).getFirst());
        int[] t = {1, 2, 3, 4};
        BlockKey plain = hasher.hash(hasher.namespaceSeed(), t, 0, 4, ExtraKeys.NONE);
        assertThat(hasher.hash(hasher.namespaceSeed(), t, 0, 4, ExtraKeys.salt(""))).isEqualTo(plain);
        assertThat(hasher.hash(hasher.namespaceSeed(), t, 0, 4, ExtraKeys.salt(null))).isEqualTo(plain);
        assertThat(hasher.hash(hasher.namespaceSeed(), t, 0, 4, ExtraKeys.salt("s1"))).isNotEqualTo(plain);
        BlockHasher other = BlockHasher.sha256(Namespace.of("other-model", LAYOUT));
        assertThat(other.hash(other.namespaceSeed(), t, 0, 4, ExtraKeys.NONE)).isNotEqualTo(plain);
        BlockHasher otherBlock = BlockHasher.sha256(Namespace.of("test", new KvLayout(1, 1, 4, 8)));
        assertThat(otherBlock.namespaceSeed()).isNotEqualTo(hasher.namespaceSeed());
    }
}
