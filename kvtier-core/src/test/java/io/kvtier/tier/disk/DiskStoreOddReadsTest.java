package io.kvtier.tier.disk;

import static io.kvtier.tier.disk.Chunks.NS;
import static io.kvtier.tier.disk.Chunks.header;
import static io.kvtier.tier.disk.Chunks.key;
import static io.kvtier.tier.disk.Chunks.payload;
import static io.kvtier.tier.disk.Chunks.read;
import static io.kvtier.tier.disk.Chunks.write;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.tier.ChunkHeader;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** Reads into unusual destinations and of unusual files: confined memory, pipes, links, over 1 GiB. */
class DiskStoreOddReadsTest extends OpenStoreFixture {

    /** The helper thread cannot write a confined segment: the reader must do every piece itself. */
    @Test
    void aMultiPieceReadIntoConfinedMemoryIsOkEveryTime() {
        long bytes = DiskStore.READ_PIECE * 8L + 5;
        MemorySegment p = payload(arena, bytes, 1);
        write(store, 1, p);
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment back = confined.allocate(bytes);
            for (int i = 0; i < 50; i++) {
                back.fill((byte) 0);
                assertThat(read(store, 1, back)).as("read %d", i).isEqualTo(new DiskRead.Ok(header(NS, 1, p)));
                assertThat(back.mismatch(p)).as("read %d", i).isEqualTo(-1L);
            }
        }
    }

    /** Opening a named pipe for reading blocks until a writer comes: it must never be opened. */
    @Test
    @EnabledOnOs(OS.LINUX)
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aNamedPipeInPlaceOfAChunkFileIsCorruptWithoutBlocking() throws Exception {
        MemorySegment p = payload(arena, 5000, 1);
        write(store, 1, p);
        Path file = store.layout().fileOf(key(1));
        Files.delete(file);
        Process mkfifo = new ProcessBuilder("mkfifo", file.toString()).inheritIO().start();
        assertThat(mkfifo.waitFor()).isZero();
        assertThat(read(store, 1, arena.allocate(5000))).isInstanceOfSatisfying(DiskRead.Corrupt.class,
                c -> assertThat(c.reason()).contains("not a regular file"));
    }

    @Test
    void aLinkToAValidChunkFileIsNotFollowed() throws IOException {
        MemorySegment p = payload(arena, 5000, 1);
        write(store, 1, p);
        Path file = store.layout().fileOf(key(1));
        Path elsewhere = Files.move(file, root.resolve("elsewhere.kvc"));
        Files.createSymbolicLink(file, elsewhere);
        assertThat(read(store, 1, arena.allocate(5000))).isInstanceOfSatisfying(DiskRead.Corrupt.class,
                c -> assertThat(c.reason()).contains("not a regular file"));
    }

    /**
     * Payloads over {@link ChunkHeader#BUFFER_SLICE} (1 GiB) are wrapped as ByteBuffers in slices:
     * one of 1 GiB + 17 bytes, zeros with a mark at each side of the slice border and at both
     * ends, is checksummed, written, read back and compared exactly.
     */
    @Test
    void aPayloadOverOneBufferSliceIsWrittenReadAndChecksummed() {
        long slice = ChunkHeader.BUFFER_SLICE;
        long bytes = slice + 17;
        long[] marks = {0, slice - 1, slice, bytes - 1};
        MemorySegment p = arena.allocate(bytes);
        for (int i = 0; i < marks.length; i++) {
            p.set(ValueLayout.JAVA_BYTE, marks[i], (byte) (i + 1));
        }
        assertThat(ChunkHeader.crc32c(p)).isEqualTo(crcOfZerosWithMarks(bytes, marks));
        write(store, 7, p);
        MemorySegment back = arena.allocate(bytes);
        assertThat(read(store, 7, back)).isInstanceOf(DiskRead.Ok.class);
        assertThat(back.mismatch(p)).isEqualTo(-1L);
    }

    /** CRC32C of zeros with byte i+1 at marks[i], by java.util.zip.CRC32C over a reused 1 MiB array. */
    private static int crcOfZerosWithMarks(long bytes, long[] marks) {
        CRC32C crc = new CRC32C();
        byte[] block = new byte[1 << 20];
        for (long at = 0; at < bytes; at += block.length) {
            int n = (int) Math.min(block.length, bytes - at);
            java.util.Arrays.fill(block, (byte) 0);
            for (int i = 0; i < marks.length; i++) {
                if (marks[i] >= at && marks[i] < at + n) {
                    block[(int) (marks[i] - at)] = (byte) (i + 1);
                }
            }
            crc.update(block, 0, n);
        }
        return (int) crc.getValue();
    }
}
