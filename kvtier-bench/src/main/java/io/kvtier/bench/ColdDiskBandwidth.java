package io.kvtier.bench;

import io.kvtier.tier.disk.DiskStore;
import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Disk tier reads from the device, not the page cache, beside plain reads of the same bytes: for
 * each chunk size, {@code files} chunk files are written through {@link DiskStore} and as plain
 * files (as in {@link DiskBandwidth}), then each side is read once after the page cache was
 * dropped, twice, in alternating order. Figures are payload GB/s over both passes of a side.
 *
 * <p>Dropping the page cache ({@link #dropPageCache}) needs root on Linux; the measurement takes
 * a {@link DropCache} so that a test can pass a no-op (then it measures the page cache).
 */
public final class ColdDiskBandwidth {

    private static final Path DROP_CACHES = Path.of("/proc/sys/vm/drop_caches");

    /**
     * One chunk size's cold figures.
     *
     * @param chunkBytes     payload bytes per file
     * @param files          files per side
     * @param storeReadGBps  DiskStore read (verified), payload GB/s
     * @param plainReadGBps  plain FileChannel read, payload GB/s
     */
    public record Row(long chunkBytes, int files, double storeReadGBps, double plainReadGBps) {

        /** DiskStore read over plain read. */
        public double readRatio() {
            return storeReadGBps / plainReadGBps;
        }
    }

    private ColdDiskBandwidth() {
    }

    /**
     * Writes dirty pages back ({@code sync}) and drops the page cache, dentries and inodes.
     *
     * @throws IOException saying that root is needed when {@code /proc/sys/vm/drop_caches} is not
     *                     writable, or when {@code sync} fails
     */
    public static void dropPageCache() throws IOException {
        try {
            Process sync = new ProcessBuilder("sync").inheritIO().start();
            if (sync.waitFor() != 0) {
                throw new IOException("sync exited with " + sync.exitValue());
            }
            Files.writeString(DROP_CACHES, "3");
        } catch (AccessDeniedException e) {
            throw new IOException("dropping the page cache needs root (cannot write " + DROP_CACHES + ")", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for sync", e);
        }
    }

    /**
     * Measures each chunk size.
     *
     * @param dir          an existing directory on the disk to measure
     * @param chunkSizes   payload bytes per chunk file, each > 0
     * @param bytesPerSize payload bytes per side for each size (files = max(4, bytesPerSize / size))
     * @param dropCache    run before each side's reads: {@link #dropPageCache}, or a no-op in tests
     * @throws IOException if the directory cannot be used, a write or read fails, or dropCache does
     */
    public static List<Row> measure(Path dir, long[] chunkSizes, long bytesPerSize, DropCache dropCache)
            throws IOException {
        return BenchChunks.forEachSize(dir, "kvtier-cold-bandwidth", chunkSizes, (store, plainDir, unused) -> null,
                (store, plainDir, size) -> measureSize(store, plainDir, size, bytesPerSize, dropCache));
    }

    /** What runs before each side's reads. */
    @FunctionalInterface
    public interface DropCache {
        /** Empties the page cache (or not, in a test). */
        void drop() throws IOException;
    }

    private static Row measureSize(DiskStore store, Path plainDir, long size, long bytesPerSize, DropCache dropCache)
            throws IOException {
        try (Arena arena = Arena.ofShared()) {
            BenchChunks c = BenchChunks.of(arena, store.namespace(), size, bytesPerSize);
            int files = c.files();
            BlockKey[] keys = c.keys();
            ChunkHeader[] headers = c.headers();
            for (int i = 0; i < files; i++) {
                DiskBandwidth.storeWrite(store, keys[i], headers[i], c.payload());
                DiskBandwidth.plainWrite(plainDir, "cold-" + i, c.plainFile());
            }
            MemorySegment back = arena.allocate(c.plainFile().byteSize(), 4096);
            long storeNanos = 0;
            long plainNanos = 0;
            for (int pass = 0; pass < 2; pass++) {
                for (int side = 0; side < 2; side++) {
                    boolean storeSide = (pass + side) % 2 == 0;
                    dropCache.drop();
                    for (int i = 0; i < files; i++) {
                        if (storeSide) {
                            storeNanos += DiskBandwidth.storeRead(store, keys[i], headers[i], back.asSlice(0, size));
                        } else {
                            plainNanos += DiskBandwidth.plainRead(plainDir, "cold-" + i, back);
                        }
                    }
                }
            }
            for (int i = 0; i < files; i++) {
                store.delete(keys[i]);
                Files.delete(plainDir.resolve("cold-" + i));
            }
            double bytes = 2.0 * files * size;
            return new Row(size, files, bytes / storeNanos, bytes / plainNanos);
        }
    }

    /** A table of rows: size, files, the two GB/s figures and their ratio. */
    public static String table(List<Row> rows) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%10s %7s %12s %12s %7s%n", "chunk", "files",
                "store read", "plain read", "ratio"));
        for (Row r : rows) {
            sb.append(String.format(Locale.ROOT, "%10s %7d %7s GB/s %7s GB/s %6.0f%%%n", DiskBandwidth.size(r.chunkBytes()),
                    r.files(), Gbps.of(r.storeReadGBps()), Gbps.of(r.plainReadGBps()), 100 * r.readRatio()));
        }
        return sb.toString();
    }
}
