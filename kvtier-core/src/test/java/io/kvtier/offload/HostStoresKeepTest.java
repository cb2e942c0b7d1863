package io.kvtier.offload;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.KvLayout;
import io.kvtier.tier.CachePolicy;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.KvEvents;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The set of a request's earlier chunks that a store keeps (never evicts) is grown with the store
 * cursor instead of rebuilt per store, and must stay exactly the chain's chunks {@code [0, upTo)}
 * when the cursor moves forward, jumps, goes back (a cut) and when the request is forgotten.
 */
class HostStoresKeepTest {

    private static final int BLOCK_SIZE = 4;

    @Test
    void theKeptSetIsExactlyTheChainsLeadingChunksWhereverTheCursorMoves() {
        KvLayout layout = new KvLayout(1, 1, 4, BLOCK_SIZE);
        try (BlockPool pool = new BlockPool(8, layout);
             HostTier host = new HostTier(8, layout.bytesPerBlock(), BLOCK_SIZE, CachePolicy.named("lru", 8), KvEvents.discarding())) {
            ChunkChain chain = new ChunkChain(1, BLOCK_SIZE, key(-1));
            HostStores stores = new HostStores(OffloadConfig.DEFAULT, chain, pool, host, null, new JobRegistry(),
                    new OffloadStats(), null, null, 0);
            View a = new View(7_000L, 0);
            View b = new View(7_001L, 1_000);

            assertThat(stores.earlierChunks(a, 0)).isEmpty();
            assertThat(stores.earlierChunks(a, 3)).isEqualTo(keys(a, 3));
            assertThat(stores.earlierChunks(a, 4)).isEqualTo(keys(a, 4));
            assertThat(stores.earlierChunks(b, 2)).as("another request's chain").isEqualTo(keys(b, 2));
            assertThat(stores.earlierChunks(a, 9)).as("a jump").isEqualTo(keys(a, 9));
            assertThat(stores.earlierChunks(a, 5)).as("a cut cursor").isEqualTo(keys(a, 5));
            assertThat(stores.earlierChunks(a, 6)).isEqualTo(keys(a, 6));
            assertThat(stores.earlierChunks(b, 3)).isEqualTo(keys(b, 3));
            stores.forget(a.id());
            View a2 = new View(7_000L, 500);   // the id reused for another chain after forget
            assertThat(stores.earlierChunks(a2, 2)).isEqualTo(keys(a2, 2));
            stores.clear();
            assertThat(stores.earlierChunks(b, 1)).isEqualTo(keys(b, 1));
        }
    }

    private static Set<BlockKey> keys(View v, int chunks) {
        return new HashSet<>(v.blockKeys().subList(0, chunks));
    }

    private static BlockKey key(long i) {
        return new BlockKey(i, i * 31, i * 17, 5);
    }

    /** A sequence of 12 full blocks whose keys are numbered from {@code first}. */
    private record View(long id, int first) implements SequenceView {
        @Override
        public int promptLength() {
            return 12 * BLOCK_SIZE;
        }

        @Override
        public int numTokens() {
            return 12 * BLOCK_SIZE;
        }

        @Override
        public int[] tokens(int from, int to) {
            return new int[to - from];
        }

        @Override
        public List<BlockKey> blockKeys() {
            List<BlockKey> keys = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                keys.add(key(first + i));
            }
            return keys;
        }
    }
}
