package io.kvtier.tier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvtier.memory.ReservedMemory;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Issue 14 item 4: a host tier reserves its slab without touching it. Before, the slab was
 * zeroed up front: a 20 GiB tier took minutes and 21 GB of resident memory before the first token.
 */
class HostSlabReservationTest {

    private static final long MIB = 1 << 20;

    /** Resident memory of this process, from /proc/self/status (VmRSS, kB). */
    private static long residentBytes() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }

    @Test
    void aGibibyteSlabBecomesResidentOnlyWhereChunksAreStored() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/self/status")) && ReservedMemory.lazy(),
                "needs Linux (/proc/self/status and mmap)");
        long payload = 4 * MIB;
        int slots = 256; // 1 GiB of payload
        long before = residentBytes();
        try (HostSlab slab = new HostSlab(slots, payload, 16)) {
            long reserved = residentBytes();
            assertThat(reserved - before).as("resident growth after reserving %d MiB", slab.byteSize() / MIB)
                    .isLessThan(64 * MIB);
            slab.payloadOf(7).fill((byte) 3);
            slab.payloadOf(200).fill((byte) 5);
            long touched = residentBytes();
            assertThat(touched - reserved).as("two 4 MiB chunks stored").isBetween(6 * MIB, 64 * MIB);
            // Each payload spans its 1,024 pages plus at most one more, as it starts past a header.
            assertThat(slab.residentBytes()).as("pages the slab counts resident (mincore)")
                    .isBetween(8 * MIB, 8 * MIB + 2 * 4096);
            // Untouched memory reads as zeros, like the zeroed allocation it replaces.
            assertThat(slab.payloadOf(8).get(ValueLayout.JAVA_BYTE, 0)).isZero();
            assertThat(slab.headerOf(255).get(ValueLayout.JAVA_LONG, 0)).isZero();
            assertThat(slab.payloadOf(200).get(ValueLayout.JAVA_BYTE, payload - 1)).isEqualTo((byte) 5);
            assertThat(slab.slot(0).address() % 4096).isZero();
        }
    }

    /**
     * A slab that ends inside a page counts only its own bytes of that page: a gemma3 run with
     * --host-cache-bytes 64K showed its two slabs (49,920 B) as 57,344 B written, more than reserved.
     */
    @Test
    void aSlabSmallerThanItsLastPageNeverShowsMoreResidentThanItsSize() {
        assumeTrue(ReservedMemory.lazy(), "needs mmap");
        try (HostSlab slab = new HostSlab(2, 4096, 16)) {
            assertThat(slab.byteSize() % 4096).as("the slab ends inside a page").isNotZero();
            slab.slot(0).fill((byte) 1);
            slab.slot(1).fill((byte) 2);
            assertThat(slab.residentBytes()).isEqualTo(slab.byteSize());
        }
    }
}
