package io.kvtier.tier.disk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class DiskCapacityTest {

    @Test
    void fileIsHeaderPlusPayload() {
        // header: 128 fixed bytes + 4 per token id
        assertThat(DiskCapacity.fileBytes(1_572_864, 16)).isEqualTo(128 + 64 + 1_572_864);
        assertThat(DiskCapacity.fileBytes(0, 0)).isEqualTo(128);
    }

    @Test
    void allocatedSizeRoundsUpToTheAllocationUnit() {
        assertThat(DiskCapacity.allocatedBytes(4096, 16, 4096)).isEqualTo(8192);
        assertThat(DiskCapacity.allocatedBytes(4096 - 192, 16, 4096)).isEqualTo(4096);
        assertThat(DiskCapacity.allocatedBytes(0, 0, 4096)).isEqualTo(4096);
        assertThatThrownBy(() -> DiskCapacity.allocatedBytes(1, 1, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void chunksForABudget() {
        // stories260K-like block: 3904 payload bytes + 192 header = 4096, exactly one unit
        assertThat(DiskCapacity.chunksFor(1 << 20, 3904, 16)).isEqualTo(256);
        assertThat(DiskCapacity.chunksFor(1 << 20, 3905, 16)).isEqualTo(128);
        assertThat(DiskCapacity.chunksFor(4095, 3904, 16)).isZero();
        assertThat(DiskCapacity.chunksFor(-1, 3904, 16)).isZero();
        // More chunks than a tier can count is refused, not cut to what fits an int.
        assertThat(DiskCapacity.chunksFor(4096L * Integer.MAX_VALUE, 1, 1)).isEqualTo(Integer.MAX_VALUE);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> DiskCapacity.chunksFor(Long.MAX_VALUE, 1, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("disk cache of 9223372036854775807 bytes would be 2251799813685247 chunks of 4096 bytes;"
                        + " at most 2147483647 chunks (8796093018112 bytes) are supported");
        assertThat(DiskCapacity.chunksFor(10_000, 100, 1, 1)).isEqualTo(10_000 / 232);
    }
}
