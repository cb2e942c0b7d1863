package io.kvtier.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvtier.memory.ReservedMemory;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/**
 * Issue 16 item 6: the device pool reserves its slab without touching it. Before, a pool of
 * "32 full contexts" was zeroed up front: a tiny model ran with 2.39 GB resident.
 */
class BlockPoolReservationTest {

    /** 12 layers x 2 x 16 positions x 768 floats: 1,179,648 bytes, the 110M shape's block (288 pages). */
    private static final KvLayout LAYOUT = new KvLayout(12, 12, 64, 16);

    @Test
    void aGibibytePoolBecomesResidentOnlyWhereBlocksAreWritten() {
        assumeTrue(ReservedMemory.lazy(), "needs Linux (mmap)");
        int blocks = (int) ((1L << 30) / LAYOUT.bytesPerBlock()); // 910 blocks, about 1 GiB
        try (BlockPool pool = new BlockPool(blocks, LAYOUT)) {
            assertThat(pool.slab().byteSize()).isEqualTo(blocks * LAYOUT.bytesPerBlock());
            assertThat(pool.residentBytes()).as("resident right after reserving").isZero();
            // Fresh blocks come in slab order, so a run touches the front of the slab only.
            int a = pool.allocate();
            int b = pool.allocate();
            assertThat(a).isZero();
            assertThat(b).isEqualTo(1);
            pool.block(a).fill((byte) 1);
            pool.block(b).fill((byte) 2);
            assertThat(pool.residentBytes()).as("two blocks written").isEqualTo(2 * LAYOUT.bytesPerBlock());
            // A plain block released is reused before any untouched one.
            pool.release(b);
            assertThat(pool.allocate()).isEqualTo(b);
            assertThat(pool.residentBytes()).isEqualTo(2 * LAYOUT.bytesPerBlock());
            // Untouched memory reads as zeros, like the zeroed allocation it replaces.
            assertThat(pool.block(blocks - 1).get(ValueLayout.JAVA_FLOAT, 0)).isZero();
            assertThat(pool.block(b).get(ValueLayout.JAVA_BYTE, LAYOUT.bytesPerBlock() - 1)).isEqualTo((byte) 2);
        }
    }

    /** generate prefaults the blocks its job can write, so no step takes their page faults; only those. */
    @Test
    void aPrefaultMakesTheFirstBlocksResidentAsZerosAndIsRefusedOnceABlockIsHandedOut() {
        assumeTrue(ReservedMemory.lazy(), "needs Linux (mmap)");
        try (BlockPool pool = new BlockPool(40, LAYOUT)) {
            pool.prefault(3);
            assertThat(pool.residentBytes()).isEqualTo(3 * LAYOUT.bytesPerBlock());
            assertThat(pool.block(2).get(ValueLayout.JAVA_FLOAT, LAYOUT.bytesPerBlock() - 4)).isZero();
            pool.prefault(1_000); // at most the pool
            assertThat(pool.residentBytes()).isEqualTo(40 * LAYOUT.bytesPerBlock());

            int b = pool.allocate();
            pool.block(b).fill((byte) 7);
            assertThatThrownBy(() -> pool.prefault(1)).isInstanceOf(IllegalStateException.class)
                    .hasMessage("prefault after blocks were handed out would overwrite their KV");
            assertThat(pool.block(b).get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) 7);
        }
    }
}
