package io.kvtier.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Memory for the weights and the bandwidth bound's buffer ({@link ReservedMemory#reserveHugePages}):
 * aligned to a huge page, zeroed, of the size asked, and where the kernel gives transparent huge
 * pages on request, backed by them.
 */
class HugePagesTest {

    private static final long MIB = 1 << 20;

    @Test
    void theMemoryStartsOnAHugePageAndReadsAsZerosWhereNothingWasWritten() {
        assumeTrue(ReservedMemory.lazy(), "needs mmap");
        try (Arena arena = Arena.ofConfined()) {
            long bytes = 5 * MIB + 12_345;   // not a whole number of pages either
            MemorySegment s = ReservedMemory.reserveHugePages(arena, bytes);
            assertThat(s.byteSize()).isEqualTo(bytes);
            assertThat(s.address() % ReservedMemory.HUGE_PAGE).isZero();
            s.set(ValueLayout.JAVA_BYTE, bytes - 1, (byte) 7);
            s.set(ValueLayout.JAVA_LONG, 0, 0x0102030405060708L);
            assertThat(s.get(ValueLayout.JAVA_BYTE, bytes - 1)).isEqualTo((byte) 7);
            assertThat(s.get(ValueLayout.JAVA_LONG, 0)).isEqualTo(0x0102030405060708L);
            assertThat(s.get(ValueLayout.JAVA_LONG, 3 * MIB)).isZero();
        }
    }

    /** Where THP is on request ("madvise") or always, the touched memory is in huge pages (smaps' AnonHugePages). */
    @Test
    void whereTheKernelGivesHugePagesOnRequestTheMemoryIsBackedByThem() throws IOException {
        Path enabled = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
        assumeTrue(ReservedMemory.lazy() && Files.isReadable(enabled) && Files.isReadable(Path.of("/proc/self/smaps")),
                "needs Linux with transparent huge pages");
        String mode = Files.readString(enabled);
        assumeTrue(mode.contains("[madvise]") || mode.contains("[always]"), "THP is " + mode.trim());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = ReservedMemory.reserveHugePages(arena, 8 * MIB);
            s.fill((byte) 1);
            assertThat(anonHugeKbOfMappingAt(s.address())).as("AnonHugePages of the mapping, kB").isGreaterThanOrEqualTo(2048);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = ReservedMemory.reserve(arena, 8 * MIB);
            s.fill((byte) 1);
            if (mode.contains("[madvise]")) {
                assertThat(anonHugeKbOfMappingAt(s.address())).as("a plain reservation, THP on request only").isZero();
            }
        }
    }

    /** AnonHugePages (kB) of the mapping of /proc/self/smaps that contains {@code address}. */
    private static long anonHugeKbOfMappingAt(long address) throws IOException {
        List<String> lines = Files.readAllLines(Path.of("/proc/self/smaps"));
        boolean inside = false;
        for (String line : lines) {
            if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                String[] range = line.substring(0, line.indexOf(' ')).split("-");
                inside = Long.parseUnsignedLong(range[0], 16) <= address && address < Long.parseUnsignedLong(range[1], 16);
            } else if (inside && line.startsWith("AnonHugePages:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IllegalStateException("no mapping of " + Long.toHexString(address) + " in /proc/self/smaps");
    }
}
