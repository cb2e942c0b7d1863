package io.kvtier.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BlockPoolTest {

    private static final KvLayout LAYOUT = new KvLayout(2, 1, 4, 4);

    private static BlockKey key(int i) {
        return new BlockKey(0, 0, 0, i);
    }

    @Test
    void layoutIsOneContiguousRangePerBlock() {
        assertThat(LAYOUT.bytesPerBlock()).isEqualTo(2 * 2 * 4 * 4 * 4);
        assertThat(LAYOUT.floatOffset(1, 1, 3)).isEqualTo(((1 * 2 + 1) * 4 + 3) * 4);
        try (BlockPool pool = new BlockPool(3, LAYOUT)) {
            assertThat(pool.slab().byteSize()).isEqualTo(3 * LAYOUT.bytesPerBlock());
            assertThat(pool.block(2).address() - pool.slab().address()).isEqualTo(2 * LAYOUT.bytesPerBlock());
        }
    }

    @Test
    void blockWithReferencesIsNeverHandedOut() {
        try (BlockPool pool = new BlockPool(2, LAYOUT)) {
            int a = pool.allocate();
            int b = pool.allocate();
            assertThat(pool.freeCount()).isZero();
            assertThatThrownBy(pool::allocate).isInstanceOf(IllegalStateException.class).hasMessageContaining("exhausted");
            pool.retain(a); // e.g. a pending store holds it
            pool.release(a); // its request finishes
            assertThat(pool.freeCount()).isZero();
            pool.release(a); // the store completes
            assertThat(pool.allocate()).isEqualTo(a);
            assertThat(b).isNotEqualTo(a);
            pool.checkInvariants();
        }
    }

    @Test
    void cachedBlocksAreEvictedLazilyInLruOrderAfterEmptyOnes() {
        try (BlockPool pool = new BlockPool(4, LAYOUT)) {
            int b0 = pool.allocate();
            int b1 = pool.allocate();
            int b2 = pool.allocate();
            pool.cache(b0, key(10));
            pool.cache(b1, key(11));
            pool.release(b1); // cached, released first: evicted first among cached
            pool.release(b0);
            pool.release(b2); // holds no key: reused before any cached block
            assertThat(pool.freeCount()).isEqualTo(4);
            assertThat(pool.lookup(key(10))).isEqualTo(b0);
            assertThat(pool.allocate()).isEqualTo(b2);
            int fresh = pool.allocate(); // the never-used block 3
            assertThat(fresh).isEqualTo(3);
            assertThat(pool.allocate()).isEqualTo(b1);
            assertThat(pool.lookup(key(11))).isEqualTo(-1);
            assertThat(pool.lookup(key(10))).isEqualTo(b0);
            pool.checkInvariants();
        }
    }

    @Test
    void hitOnAFreeCachedBlockTakesItOutOfTheFreeQueue() {
        try (BlockPool pool = new BlockPool(2, LAYOUT)) {
            int b = pool.allocate();
            pool.cache(b, key(1));
            pool.release(b);
            pool.retain(pool.lookup(key(1)));
            assertThat(pool.freeCount()).isEqualTo(1);
            assertThat(pool.allocate()).isNotEqualTo(b);
            assertThat(pool.keyOf(b)).isEqualTo(key(1));
            pool.checkInvariants();
        }
    }

    @Test
    void duplicateKeyKeepsTheFirstCachedBlock() {
        try (BlockPool pool = new BlockPool(2, LAYOUT)) {
            int a = pool.allocate();
            int b = pool.allocate();
            assertThat(pool.cache(a, key(5))).isTrue();
            assertThat(pool.cache(b, key(5))).isFalse();
            assertThat(pool.lookup(key(5))).isEqualTo(a);
            assertThat(pool.cachedCount()).isEqualTo(1);
        }
    }

    @Test
    void releaseWithoutReferenceIsABug() {
        try (BlockPool pool = new BlockPool(1, LAYOUT)) {
            assertThatThrownBy(() -> pool.release(0)).isInstanceOf(IllegalStateException.class);
        }
    }
}
