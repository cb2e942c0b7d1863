package io.kvtier.tier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class HostSlabTest {

    @Test
    void slotsAreAlignedDisjointAndSizedForHeaderAndPayload() {
        try (HostSlab slab = new HostSlab(3, 1000, 16)) {
            assertThat(slab.headerBytes()).isEqualTo(192); // 128 + 16 * 4 = 192
            assertThat(slab.slotBytes()).isEqualTo(192 + 1024);
            assertThat(slab.byteSize()).isEqualTo(3 * (192 + 1024));
            assertThat(slab.payloadOf(1).byteSize()).isEqualTo(1000);
            assertThat(slab.payloadOf(1).address() - slab.slot(1).address()).isEqualTo(192);
            assertThat(slab.slot(2).address() - slab.slot(0).address()).isEqualTo(2 * slab.slotBytes());
            assertThat(slab.slot(0).address() % HostSlab.ALIGN).isZero();

            slab.payloadOf(1).fill((byte) 7);
            assertThat(slab.payloadOf(0).get(ValueLayout.JAVA_BYTE, 999)).isZero();
            assertThat(slab.headerOf(2).get(ValueLayout.JAVA_BYTE, 0)).isZero();

            assertThatThrownBy(() -> slab.slot(3)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> slab.payloadOf(0, 1001)).hasMessageContaining("does not fit");
        }
    }

    @Test
    void chunksForABudget() {
        long slot = HostSlab.slotBytesFor(4096, 16);
        assertThat(HostSlab.chunksFor(10 * slot + slot - 1, 4096, 16)).isEqualTo(10);
        assertThat(HostSlab.chunksFor(slot - 1, 4096, 16)).isZero();
        // 100T of 4 KiB chunks is more than a tier counts: refused with the size asked, not silently cut.
        assertThatThrownBy(() -> HostSlab.chunksFor(100L << 40, 4096, 16))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("host tier of 109951162777600 bytes would be " + (100L << 40) / slot + " chunks of " + slot
                        + " bytes; at most 2147483647 chunks (" + Integer.MAX_VALUE * slot + " bytes) are supported");
        assertThatThrownBy(() -> HostTier.ofBytes(slot - 1, 4096, 16, "lru", KvEvents.discarding()))
                .hasMessageContaining("cannot hold one chunk");
        try (HostTier tier = HostTier.ofBytes(5 * slot, 4096, 16, "arc", KvEvents.discarding())) {
            assertThat(tier.capacity()).isEqualTo(5);
            assertThat(tier.slab().slots()).isEqualTo(5);
            assertThat(tier.index().tierName()).isEqualTo("host");
            assertThat(tier.index().policy()).isInstanceOf(ArcPolicy.class);
        }
    }

    @Test
    void closedSlabCannotBeUsed() {
        HostSlab slab = new HostSlab(1, 64, 1);
        slab.close();
        assertThatThrownBy(() -> slab.payloadOf(0).get(ValueLayout.JAVA_BYTE, 0)).isInstanceOf(IllegalStateException.class);
    }
}
