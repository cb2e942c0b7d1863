package io.kvtier.tier.disk;

import static io.kvtier.tier.disk.Chunks.payload;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.tier.ChunkHeader;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A payload read in pieces by several threads: the bytes and the CRC32C never depend on who read
 * which piece, and the reader returns only when no other thread touches the file or the
 * destination any more.
 */
class PieceReadTest {

    private static final long PREFIX = 192; // where the payload starts in the file, like a header

    @TempDir
    Path dir;
    private final Arena arena = Arena.ofShared();
    /** Own threads: the common pool may have one thread on a 2-core machine, and a gated piece blocks it. */
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void close() {
        threads.shutdownNow();
        arena.close();
    }

    /** A file of PREFIX junk bytes and then {@code payload}, optionally cut short by {@code missing} bytes. */
    private Path file(MemorySegment payload, long missing) throws IOException {
        Path f = dir.resolve("chunk-" + System.nanoTime());
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer junk = payload(arena, PREFIX, 99).asByteBuffer();
            ByteBuffer body = payload.asSlice(0, payload.byteSize() - missing).asByteBuffer();
            while (junk.hasRemaining() || body.hasRemaining()) {
                ch.write(new ByteBuffer[] {junk, body});
            }
        }
        return f;
    }

    /** The reader's part: piece 0, then the rest. */
    private static int readAsTheReader(FileChannel ch, PieceRead read) throws IOException {
        DiskStore.readFully(ch, read.firstPiece(), PREFIX);
        read.pieceDone();
        return read.finish();
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void piecesReadOnAnyThreadInAnyOrderGiveTheBytesAndTheCrc(long seed) throws Exception {
        Random rnd = new Random(seed);
        long pieceBytes = 1 + rnd.nextInt(64 << 10);
        long bytes = rnd.nextInt(4) == 0 ? pieceBytes * (1 + rnd.nextInt(20)) // on a piece boundary
                : rnd.nextInt(2 << 20);
        MemorySegment payload = payload(arena, bytes, seed);
        MemorySegment dst = arena.allocate(Math.max(1, bytes)).asSlice(0, bytes);
        int helpers = rnd.nextInt(4);
        try (FileChannel ch = FileChannel.open(file(payload, 0), StandardOpenOption.READ)) {
            PieceRead read = new PieceRead(ch, PREFIX, dst, pieceBytes);
            List<Thread> threads = new ArrayList<>();
            for (int h = 0; h < helpers; h++) {
                threads.add(Thread.ofPlatform().start(() -> {
                    while (read.runOne()) {
                        Thread.onSpinWait();
                    }
                }));
            }
            int crc = readAsTheReader(ch, read);
            for (Thread t : threads) {
                t.join();
            }
            String what = "seed " + seed + ": " + bytes + " bytes in pieces of " + pieceBytes + ", " + helpers
                    + " helpers";
            assertThat(crc).as(what).isEqualTo(ChunkHeader.crc32c(payload));
            assertThat(dst.mismatch(payload)).as(what).isEqualTo(-1L);
            assertThat(read.runOne()).as(what + ": a piece left unclaimed").isFalse();
        }
    }

    @Test
    void aFileThatEndsEarlyFailsTheReadWithWhereItEnds() throws IOException {
        long piece = 1000;
        MemorySegment payload = payload(arena, 10 * piece, 1);
        MemorySegment dst = arena.allocate(payload.byteSize());
        try (FileChannel ch = FileChannel.open(file(payload, 1500), StandardOpenOption.READ)) {
            PieceRead read = new PieceRead(ch, PREFIX, dst, piece);
            assertThatThrownBy(() -> readAsTheReader(ch, read)).isInstanceOf(IOException.class)
                    .hasMessageContaining("file ends at byte " + (PREFIX + 10 * piece - 1500));
        }
    }

    /** The hazard: a helper still writing the destination after the reader gave up and reused it. */
    @Test
    void cancelWaitsForThePieceInFlightAndNoPieceStartsAfterIt() throws Exception {
        long piece = 4096;
        MemorySegment payload = payload(arena, 8 * piece, 2);
        MemorySegment dst = arena.allocate(payload.byteSize());
        try (GatedFileChannel ch = new GatedFileChannel(FileChannel.open(file(payload, 0), StandardOpenOption.READ),
                PREFIX + piece)) { // piece 1, the helper's first
            PieceRead read = new PieceRead(ch, PREFIX, dst, piece);
            CompletableFuture<Boolean> helper = CompletableFuture.supplyAsync(read::runOne, threads);
            assertThat(ch.entered.await(10, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Void> cancel = CompletableFuture.runAsync(() -> read.cancel(false), threads);
            Thread.sleep(200);
            assertThat(cancel).as("cancel waits for piece 1").isNotDone();
            ch.gate.countDown();
            cancel.get(10, TimeUnit.SECONDS);
            assertThat(helper.get(10, TimeUnit.SECONDS)).isTrue();
            assertThat(read.runOne()).as("no piece starts after cancel").isFalse();
            assertThat(ch.positionalReads.get()).as("only the helper's piece 1 was read").isEqualTo(1);
        }
    }

    /** The reader takes every piece nobody claimed and then waits for the helper's. */
    @Test
    void finishReadsWhatIsLeftAndWaitsForTheHelpersPiece() throws Exception {
        long piece = 4096;
        MemorySegment payload = payload(arena, 8 * piece + 5, 3);
        MemorySegment dst = arena.allocate(payload.byteSize());
        try (GatedFileChannel ch = new GatedFileChannel(FileChannel.open(file(payload, 0), StandardOpenOption.READ),
                PREFIX + piece)) {
            PieceRead read = new PieceRead(ch, PREFIX, dst, piece);
            CompletableFuture<Boolean> helper = CompletableFuture.supplyAsync(read::runOne, threads);
            assertThat(ch.entered.await(10, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Integer> reader = CompletableFuture.supplyAsync(() -> {
                try {
                    return readAsTheReader(ch, read);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }, threads);
            Thread.sleep(200);
            assertThat(reader).as("the reader waits for piece 1").isNotDone();
            assertThat(ch.positionalReads.get()).as("pieces 0 and 2..8 read by the reader, 1 entered").isEqualTo(9);
            ch.gate.countDown();
            assertThat(reader.get(10, TimeUnit.SECONDS)).isEqualTo(ChunkHeader.crc32c(payload));
            assertThat(helper.get(10, TimeUnit.SECONDS)).isTrue();
            assertThat(dst.mismatch(payload)).isEqualTo(-1L);
        }
    }
}
