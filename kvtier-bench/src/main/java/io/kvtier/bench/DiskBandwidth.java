package io.kvtier.bench;

import io.kvtier.tier.disk.DiskRead;
import io.kvtier.tier.disk.DiskWrite;
import io.kvtier.tier.disk.DiskStore;
import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Disk tier bandwidth beside its floor, measured in the same run on the same directory: for each
 * chunk size, {@code files} chunk files are written and read back through {@link DiskStore}
 * (header, temporary file, atomic rename; reads verify header and CRC32C) and, as the baseline,
 * the same number of files of the same sizes are written and read with a plain sequential
 * {@link FileChannel} (create, one write, close; open, one read, close) in one directory: the
 * simplest way to put those bytes in files, so the tier's layout (256 shard directories), header,
 * temporary file and rename all count as its cost. Plain files get names never used before in
 * the run, like the store's temporary files (some file systems create a recently deleted name
 * faster). Both sides use {@link DiskFsync#NONE}, so both measure the page cache path when the
 * files fit in memory. The two sides are interleaved file by file (alternating which goes first;
 * reads are repeated {@value #READ_PASSES} times per round), so that both see the same machine:
 * background write-back, other processes, the page cache's state. Figures are payload gigabytes
 * (10^9 bytes) per second of the mean time per file, over all rounds but the first, which warms
 * up (with one round, that one counts), leaving out the slowest 2% of each side's files. Why
 * trimmed: on a small VM a few scheduler stalls of milliseconds land in one side or the other and
 * decide a plain total (a read that uses the {@link ReadHelper} is exposed on two threads). Why a
 * mean and not a median: on some file systems creating a file takes one of two very different
 * times (on this machine's ext4, a few microseconds or about 1 ms), and a median flips between
 * them with a small shift in the mix.
 *
 * <p>Files go to a fresh subdirectory {@code kvtier-bandwidth-<pid>} of the given directory, which
 * is deleted afterwards.
 */
public final class DiskBandwidth {

    /** Chunk sizes of {@code bench offload}: 16 KiB to 4 MiB. */
    public static final long[] DEFAULT_CHUNK_SIZES = {16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20};

    /** Share of the files whose times count: the slowest 2% of each side are scheduler stalls. */
    static final double KEPT = 0.98;

    /** How long both read paths run before anything is measured. */
    static final long WARM_UP_NANOS = 1_000_000_000L;

    /** Times the files are read per round: reads are short, more of them steady the figure. */
    static final int READ_PASSES = 4;

    /**
     * One chunk size's figures.
     *
     * @param chunkBytes      payload bytes per file
     * @param files           files written and read per side and round
     * @param storeWriteGBps  DiskStore write, payload GB/s
     * @param plainWriteGBps  plain FileChannel write, payload GB/s
     * @param storeReadGBps   DiskStore read (verified), payload GB/s
     * @param plainReadGBps   plain FileChannel read, payload GB/s
     */
    public record Row(long chunkBytes, int files, double storeWriteGBps, double plainWriteGBps, double storeReadGBps,
                      double plainReadGBps) {

        /** DiskStore write over plain write. */
        public double writeRatio() {
            return storeWriteGBps / plainWriteGBps;
        }

        /** DiskStore read over plain read. */
        public double readRatio() {
            return storeReadGBps / plainReadGBps;
        }
    }

    private DiskBandwidth() {
    }

    /**
     * The most bytes of files {@link #measure} (or {@link ColdDiskBandwidth#measure}) holds at once
     * over {@code chunkSizes}: both sides' files of one size, in whole 4 KiB units.
     */
    public static long peakFileBytes(long[] chunkSizes, long bytesPerSize) {
        return BenchChunks.peakBytes(chunkSizes, bytesPerSize);
    }

    /**
     * Measures each chunk size.
     *
     * @param dir          an existing directory on the disk to measure
     * @param chunkSizes   payload bytes per chunk file, each > 0
     * @param bytesPerSize payload bytes written per side and round for each size (files =
     *                     max(4, bytesPerSize / chunkSize))
     * @param rounds       rounds per size (>= 1); the first is a warm-up when there are several
     * @throws IOException if the directory cannot be used, or a DiskStore write or read fails
     */
    public static List<Row> measure(Path dir, long[] chunkSizes, long bytesPerSize, int rounds) throws IOException {
        if (rounds < 1) {
            throw new IllegalArgumentException("rounds must be >= 1, got " + rounds);
        }
        return BenchChunks.forEachSize(dir, "kvtier-bandwidth", chunkSizes, (store, plainDir, unused) -> {
            warmUp(store, plainDir);
            return null;
        }, (store, plainDir, size) -> measureSize(store, plainDir, size, bytesPerSize, rounds));
    }

    private static Row measureSize(DiskStore store, Path plainDir, long size, long bytesPerSize, int rounds)
            throws IOException {
        try (Arena arena = Arena.ofShared()) {
            BenchChunks c = BenchChunks.of(arena, store.namespace(), size, bytesPerSize);
            int files = c.files();
            BlockKey[] keys = c.keys();
            ChunkHeader[] headers = c.headers();
            MemorySegment payload = c.payload();
            MemorySegment plainFile = c.plainFile();
            MemorySegment readBack = arena.allocate(size, 4096);
            MemorySegment plainBack = arena.allocate(plainFile.byteSize(), 4096);
            int counted = rounds == 1 ? 1 : rounds - 1;
            // per-file times of the counted rounds: store write, plain write, store read, plain read
            long[][] times = {new long[files * counted], new long[files * counted],
                new long[files * counted * READ_PASSES], new long[files * counted * READ_PASSES]};
            int writes = 0;
            int reads = 0;
            for (int r = 0; r < rounds; r++) {
                boolean count = r > 0 || rounds == 1; // with several rounds the first one warms up
                for (int i = 0; i < files; i++) { // interleaved file by file, alternating who goes first
                    long plain;
                    long stored;
                    if (i % 2 == 0) {
                        plain = plainWrite(plainDir, plainName(r, i), plainFile);
                        stored = storeWrite(store, keys[i], headers[i], payload);
                    } else {
                        stored = storeWrite(store, keys[i], headers[i], payload);
                        plain = plainWrite(plainDir, plainName(r, i), plainFile);
                    }
                    if (count) {
                        times[0][writes] = stored;
                        times[1][writes++] = plain;
                    }
                }
                for (int pass = 0; pass < READ_PASSES; pass++) {
                    for (int i = 0; i < files; i++) {
                        long plain;
                        long stored;
                        if ((i + pass) % 2 == 0) {
                            plain = plainRead(plainDir, plainName(r, i), plainBack);
                            stored = storeRead(store, keys[i], headers[i], readBack);
                        } else {
                            stored = storeRead(store, keys[i], headers[i], readBack);
                            plain = plainRead(plainDir, plainName(r, i), plainBack);
                        }
                        if (count) {
                            times[2][reads] = stored;
                            times[3][reads++] = plain;
                        }
                    }
                }
                for (int i = 0; i < files; i++) {
                    store.delete(keys[i]);
                    Files.delete(plainDir.resolve(plainName(r, i)));
                }
            }
            return new Row(size, files, gbps(size, times[0]), gbps(size, times[1]), gbps(size, times[2]),
                    gbps(size, times[3]));
        }
    }

    /** File {@code i} of round {@code r} of the plain side. */
    private static String plainName(int r, int i) {
        return r + "-" + i;
    }

    /** Payload GB/s of the mean time per file over the fastest {@link #KEPT} of the files. */
    private static double gbps(long bytes, long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        int kept = (int) Math.max(1, Math.ceil(sorted.length * KEPT));
        long sum = 0;
        for (int i = 0; i < kept; i++) {
            sum += sorted[i];
        }
        return (double) bytes * kept / sum;
    }

    /**
     * Runs both read paths for a second on a file of three pieces, so that the JIT has compiled
     * the multi-piece path and the {@link ReadHelper}'s loop before any size is measured (each
     * size's own warm-up round is short for the large sizes, and on two cores the compiler
     * thread competes with the reader and the helper).
     */
    private static void warmUp(DiskStore store, Path plainDir) throws IOException {
        try (Arena arena = Arena.ofShared()) {
            BenchChunks c = BenchChunks.of(arena, store.namespace(), 2L * DiskStore.READ_PIECE + 1, 0);
            MemorySegment back = arena.allocate(c.plainFile().byteSize(), 4096);
            storeWrite(store, c.keys()[0], c.headers()[0], c.payload());
            plainWrite(plainDir, "warm-up", c.plainFile());
            for (long start = System.nanoTime(); System.nanoTime() - start < WARM_UP_NANOS; ) {
                storeRead(store, c.keys()[0], c.headers()[0], back.asSlice(0, c.size()));
                plainRead(plainDir, "warm-up", back);
            }
            store.delete(c.keys()[0]);
            Files.delete(plainDir.resolve("warm-up"));
        }
    }

    static long storeWrite(DiskStore store, BlockKey key, ChunkHeader header, MemorySegment payload)
            throws IOException {
        long t0 = System.nanoTime();
        DiskWrite w = store.write(key, header, payload);
        long t = System.nanoTime() - t0;
        if (w instanceof DiskWrite.Failed f) {
            throw new IOException("bandwidth: " + f.reason());
        }
        return t;
    }

    static long storeRead(DiskStore store, BlockKey key, ChunkHeader header, MemorySegment dst)
            throws IOException {
        long t0 = System.nanoTime();
        DiskRead r = store.read(key, header.parent(), header.tokens(), dst);
        long t = System.nanoTime() - t0;
        if (!r.ok()) {
            throw new IOException("bandwidth: read back of chunk " + key.shortHex() + " failed: " + r);
        }
        return t;
    }

    static long plainWrite(Path dir, String name, MemorySegment bytes) throws IOException {
        long t0 = System.nanoTime();
        try (FileChannel ch = FileChannel.open(dir.resolve(name), StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE)) {
            ByteBuffer b = bytes.asByteBuffer();
            while (b.hasRemaining()) {
                ch.write(b);
            }
        }
        return System.nanoTime() - t0;
    }

    static long plainRead(Path dir, String name, MemorySegment into) throws IOException {
        long t0 = System.nanoTime();
        try (FileChannel ch = FileChannel.open(dir.resolve(name), StandardOpenOption.READ)) {
            ByteBuffer b = into.asByteBuffer();
            while (b.hasRemaining() && ch.read(b) >= 0) {
                // read on
            }
        }
        return System.nanoTime() - t0;
    }

    /** A table of rows: size, files, the four GB/s figures and the two ratios. */
    public static String table(List<Row> rows) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
                "%10s %7s %12s %12s %7s %12s %12s %7s%n", "chunk", "files", "store write", "plain write", "ratio",
                "store read", "plain read", "ratio"));
        for (Row r : rows) {
            sb.append(String.format(Locale.ROOT, "%10s %7d %9s GB/s %7s GB/s %6.0f%% %7s GB/s %7s GB/s %6.0f%%%n",
                    size(r.chunkBytes()), r.files(), Gbps.of(r.storeWriteGBps()), Gbps.of(r.plainWriteGBps()), 100 * r.writeRatio(),
                    Gbps.of(r.storeReadGBps()), Gbps.of(r.plainReadGBps()), 100 * r.readRatio()));
        }
        return sb.toString();
    }

    static String size(long b) {
        return b >= 1 << 20 && b % (1 << 20) == 0 ? b / (1 << 20) + " MiB" : b / 1024 + " KiB";
    }

    /**
     * {@code java -cp kvtier-core.jar:kvtier-bench.jar io.kvtier.bench.DiskBandwidth [dir] [MiB per size] [rounds]}:
     * prints the table (defaults: the temporary directory, 256 MiB, 3 rounds).
     */
    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args.length > 0 ? args[0] : System.getProperty("java.io.tmpdir"));
        long mib = args.length > 1 ? Long.parseLong(args[1]) : 256;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        System.out.print(table(measure(dir, DEFAULT_CHUNK_SIZES, mib << 20, rounds)));
    }
}
