package io.kvtier.bench;

import io.kvtier.tier.disk.DiskFsync;
import io.kvtier.tier.disk.DiskCapacity;
import io.kvtier.tier.disk.DiskStore;
import io.kvtier.tier.disk.FileTrees;
import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The files of one chunk size for {@link DiskBandwidth} and {@link ColdDiskBandwidth}: one seeded
 * random payload stored under {@code files} random keys, and the same bytes laid out as a chunk
 * file (header-sized zeros, then the payload) for the plain side.
 *
 * @param size      payload bytes per file
 * @param files     files per side: max(4, bytesPerSize / size), at most 2^20
 * @param payload   the payload, page-aligned
 * @param keys      the store side's keys
 * @param headers   their headers (namespace of the store, 16 zero tokens, the payload's CRC32C)
 * @param plainFile the plain side's file bytes, as long as a chunk file
 */
record BenchChunks(long size, int files, MemorySegment payload, BlockKey[] keys, ChunkHeader[] headers,
                   MemorySegment plainFile) {

    /** Tokens per chunk header (one block of 16 tokens). */
    static final int TOKENS = 16;

    /** What one measurement does with a size, given the store and the plain side's directory. */
    @FunctionalInterface
    interface SizeMeasure<R> {
        R measure(DiskStore store, Path plainDir, long size) throws IOException;
    }

    /**
     * Allocates the chunks of {@code size} from {@code arena}.
     *
     * @throws IllegalArgumentException if size is not positive
     */
    static BenchChunks of(Arena arena, BlockKey namespace, long size, long bytesPerSize) {
        if (size <= 0) {
            throw new IllegalArgumentException("chunk size must be positive, got " + size);
        }
        int files = files(size, bytesPerSize);
        MemorySegment payload = arena.allocate(size, 4096);
        SplittableRandom rnd = new SplittableRandom(size);
        for (long i = 0; i + 8 <= size; i += 8) {
            payload.set(ValueLayout.JAVA_LONG_UNALIGNED, i, rnd.nextLong());
        }
        int crc = ChunkHeader.crc32c(payload);
        int[] tokens = new int[TOKENS];
        BlockKey[] keys = new BlockKey[files];
        ChunkHeader[] headers = new ChunkHeader[files];
        for (int i = 0; i < files; i++) {
            keys[i] = new BlockKey(rnd.nextLong(), rnd.nextLong(), rnd.nextLong(), i);
            headers[i] = ChunkHeader.of(namespace, keys[i], BlockKey.of(new byte[32]), tokens, size, crc);
        }
        long fileBytes = fileBytes(size);
        MemorySegment plainFile = arena.allocate(fileBytes, 4096);
        MemorySegment.copy(payload, 0, plainFile, fileBytes - size, size);
        return new BenchChunks(size, files, payload, keys, headers, plainFile);
    }

    /** Files per side for chunks of {@code size}: max(4, bytesPerSize / size), at most 2^20. */
    static int files(long size, long bytesPerSize) {
        return (int) Math.max(4, Math.min(1 << 20, bytesPerSize / size));
    }

    /**
     * The most bytes of files a figure over {@code sizes} holds at once: both sides' files of one
     * size (the store's chunk files and the plain copies, as long), in whole 4 KiB units. A figure
     * deletes a size's files before the next size.
     */
    static long peakBytes(long[] sizes, long bytesPerSize) {
        long peak = 0;
        for (long size : sizes) {
            long file = DiskCapacity.allocatedBytes(size, TOKENS, DiskCapacity.DEFAULT_ALLOCATION_UNIT);
            peak = Math.max(peak, 2L * files(size, bytesPerSize) * file);
        }
        return peak;
    }

    /** Bytes of one chunk file of {@code size} payload bytes. */
    static long fileBytes(long size) {
        return DiskCapacity.fileBytes(size, TOKENS);
    }

    /**
     * Runs {@code measure} for each size with a fresh store in {@code <dir>/<name>-<pid>/store} and
     * the plain side's directory beside it, after {@code before}; deletes the directory afterwards.
     *
     * @throws IOException if the directory cannot be used, the store is owned by another, or a
     *                     measurement fails
     */
    static <R> List<R> forEachSize(Path dir, String name, long[] sizes, SizeMeasure<Void> before,
                                   SizeMeasure<R> measure) throws IOException {
        long pid = ProcessHandle.current().pid();
        Path work = dir.resolve(name + "-" + pid);
        Files.createDirectories(work);
        BlockKey ns = new BlockKey(0x6b76746965722d62L, 0x616e647769647468L, pid, System.nanoTime());
        List<R> rows = new ArrayList<>();
        try (DiskStore store = DiskStore.open(work.resolve("store"), ns, DiskFsync.NONE)) {
            if (!store.writable()) {
                throw new IOException("bandwidth: " + store.layout().namespaceDir() + " is owned by another store");
            }
            Path plainDir = Files.createDirectories(work.resolve("plain"));
            before.measure(store, plainDir, 0);
            for (long size : sizes) {
                rows.add(measure.measure(store, plainDir, size));
            }
        } finally {
            FileTrees.delete(work);
        }
        return rows;
    }
}
